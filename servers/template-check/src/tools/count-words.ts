import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import type { TemplateCheckConfig } from '../config.js';

const MAX_TEXT = 1_000_000;

const input = z.object({ text: z.string().describe('The text to count') });
const output = z.object({ words: z.number().int(), lines: z.number().int() });

/** A first tool: replace it with your domain logic, keeping the shape (schemas, annotations, errors). */
export function countWords(config: TemplateCheckConfig): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'count_words',
    toolset: 'text',
    description: 'Counts the words and lines of a text.',
    input,
    output,
    annotations: { title: 'Count words', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ text }) => {
      if (text.length > MAX_TEXT) throw ToolError.invalidArgument(`The text is longer than ${MAX_TEXT} characters; send a shorter one.`);
      const words = text.split(/\s+/).filter(Boolean).length;
      const lines = text === '' ? 0 : text.split('\n').length;
      const summary = `${words} words, ${lines} lines`;
      return { text: config.uppercase ? summary.toUpperCase() : summary, structured: { words, lines } };
    },
  };
}
