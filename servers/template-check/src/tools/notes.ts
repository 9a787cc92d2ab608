import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import type { TemplateCheckConfig } from '../config.js';

const MAX_NOTES = 1000;
const addInput = z.object({ note: z.string().min(1).max(2000).describe('The note to keep') });

/** Writes (readOnlyHint: false), so --read-only removes it; nothing else has to check a flag. */
export function addNote(config: TemplateCheckConfig): ToolDefinition<typeof addInput> {
  return {
    name: 'add_note',
    toolset: 'notes',
    description: 'Keeps a short note; read them back with list_notes or the notes://all resource.',
    input: addInput,
    annotations: { title: 'Add a note', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ note }) => {
      if (config.notes.length >= MAX_NOTES) throw ToolError.conflict(`There are already ${MAX_NOTES} notes; restart the server to start over.`);
      config.notes.push(note);
      return `Noted (${config.notes.length} note${config.notes.length === 1 ? '' : 's'}).`;
    },
  };
}

const listOutput = z.object({ notes: z.array(z.string()) });

export function listNotes(config: TemplateCheckConfig): ToolDefinition<z.ZodObject<Record<string, never>>, typeof listOutput> {
  return {
    name: 'list_notes',
    toolset: 'notes',
    description: 'Lists the notes kept so far, oldest first.',
    input: z.object({}),
    output: listOutput,
    annotations: { title: 'List notes', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async () => ({ text: config.notes.join('\n') || '(no notes yet)', structured: { notes: [...config.notes] } }),
  };
}
