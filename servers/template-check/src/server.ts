import { createRequire } from 'node:module';
import { SuiteServer, toolList, type SessionInfo, type ToolSelection } from '@suite/shared';
import { TOOLSETS, type TemplateCheckConfig } from './config.js';
import { summarizeNotes } from './prompts/summarize-notes.js';
import { notesResource } from './resources/notes.js';
import { countWords } from './tools/count-words.js';
import { addNote, listNotes } from './tools/notes.js';

export type { TemplateCheckConfig } from './config.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

/**
 * Every tool the server has, built once per configuration and shared by all sessions; the
 * selection (toolsets, read-only) decides what a session sees.
 */
const tools = toolList<TemplateCheckConfig>([countWords, addNote, listNotes]);

/** Builds the server for one session: it only assembles; each feature lives in its own file. */
export function buildServer(config: TemplateCheckConfig, selection: ToolSelection = {}, session?: SessionInfo): SuiteServer {
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: 'Describe here, for the model, when to use this server and how.',
    toolsets: TOOLSETS,
    selection,
    ...(session ? { session } : {}),
  });
  server.tools(tools(config));
  server.resource(notesResource(config));
  server.prompt(summarizeNotes());
  return server;
}
