import { createRequire } from 'node:module';
import { SuiteServer, toolList, type ChangeHub, type SessionInfo } from '@suite/shared';
import type { FilesystemConfig } from './config.js';
import { readTextFileTools } from './tools/read-text-file.js';
import { readMediaFileTool } from './tools/read-media-file.js';
import { readMultipleFilesTool } from './tools/read-multiple-files.js';
import { listDirectoryTool } from './tools/list-directory.js';
import { listDirectoryWithSizesTool } from './tools/list-directory-with-sizes.js';
import { directoryTreeTool } from './tools/directory-tree.js';
import { searchFilesTool } from './tools/search-files.js';
import { searchContentTool } from './tools/search-content.js';
import { getFileInfoTool } from './tools/get-file-info.js';
import { listAllowedDirectoriesTool } from './tools/list-allowed-directories.js';
import { writeFileTool } from './tools/write-file.js';
import { createDirectoryTool } from './tools/create-directory.js';
import { editFileTool } from './tools/edit-file.js';
import { moveFileTool } from './tools/move-file.js';
import { copyFileTool } from './tools/copy-file.js';
import { deleteFileTool } from './tools/delete-file.js';
import { registerFileResources } from './resources/files.js';

export type { FilesystemConfig } from './config.js';
export { DEFAULT_LIMITS } from './config.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

const INSTRUCTIONS = `Reads, searches and (unless read-only) edits files inside the allowed directories.
Call list_allowed_directories first to learn where you may work. Prefer search_content to find text and
search_files to find names; use read_text_file with offset/limit (lines) or head/tail for large files.`;

/**
 * The tools, built once per configuration and shared by every session (an HTTP server builds a
 * server per session; their tools cost nothing more).
 */
const tools = toolList<FilesystemConfig>([
  readTextFileTools,
  readMediaFileTool,
  readMultipleFilesTool,
  listDirectoryTool,
  listDirectoryWithSizesTool,
  directoryTreeTool,
  searchFilesTool,
  searchContentTool,
  getFileInfoTool,
  listAllowedDirectoriesTool,
  writeFileTool,
  createDirectoryTool,
  editFileTool,
  moveFileTool,
  copyFileTool,
  deleteFileTool,
]);

export interface ServerOptions {
  session?: SessionInfo;
  /** The process-wide change hub: enables resources/subscribe and the listing's list_changed. */
  changes?: ChangeHub;
}

/** Builds the server for one session; read-only mode leaves out every tool whose readOnlyHint is false. */
export function buildServer(config: FilesystemConfig, options: ServerOptions = {}): SuiteServer {
  const { session, changes } = options;
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: INSTRUCTIONS,
    roots: { directories: config.directories, aliases: config.aliases },
    ...(changes ? { changes } : {}),
    selection: { readOnly: config.readOnly },
    ...(session ? { session } : {}),
  });
  server.tools(tools(config));
  registerFileResources(server, config);
  return server;
}
