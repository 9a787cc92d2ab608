import type { ResourceDefinition } from '@suite/shared';
import { NOTES_URI, type TemplateCheckConfig } from '../config.js';

/** The notes as a resource, so prompts can embed them and clients can show them. */
export function notesResource(config: TemplateCheckConfig): ResourceDefinition {
  return {
    uri: NOTES_URI,
    name: 'notes',
    title: 'Notes',
    description: 'Every note kept so far, one per line.',
    mimeType: 'text/plain',
    read: async () => ({ uri: NOTES_URI, mimeType: 'text/plain', text: config.notes.join('\n') }),
  };
}
