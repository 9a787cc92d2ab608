import { z } from 'zod';
import type { PromptDefinition } from '@suite/shared';
import { NOTES_URI } from '../config.js';

const args = z.object({ style: z.string().optional().describe('How to summarise: bullets (default) or prose') });

/** A prompt that embeds a resource of this server by URI: the client shows it and can re-fetch it. */
export function summarizeNotes(): PromptDefinition<typeof args> {
  return {
    name: 'summarize-notes',
    title: 'Summarise the notes',
    description: 'Asks the model to summarise the notes kept so far.',
    args,
    complete: { style: (value) => ['bullets', 'prose'].filter((s) => s.startsWith(value)) },
    get: async ({ style }, ctx) => ({
      messages: [
        { role: 'user', content: { type: 'text', text: `Summarise these notes as ${style === 'prose' ? 'a short paragraph' : 'bullet points'}.` } },
        ...(await ctx.embedResource(NOTES_URI)).map((content) => ({ role: 'user' as const, content })),
      ],
    }),
  };
}
