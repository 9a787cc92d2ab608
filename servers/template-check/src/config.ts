import type { ToolsetInfo } from '@suite/shared';

/**
 * What every session of this server shares, parsed from the command line in index.ts. A leaf
 * module: it imports nothing of this package, so tools, resources and the server can all use it.
 */
export interface TemplateCheckConfig {
  uppercase: boolean;
  /** The notes kept while the process runs (an example of shared state). */
  notes: string[];
}

/** The server's toolsets: users pick them with --toolsets; the defaults are on without it. */
export const TOOLSETS: readonly ToolsetInfo[] = [
  { name: 'text', description: 'Work with text: count words.', default: true },
  { name: 'notes', description: 'Keep short notes for the duration of the server process.', default: true },
];

export const NOTES_URI = 'notes://all';
