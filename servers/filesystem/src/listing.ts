import { promises as fs, type Dirent } from 'node:fs';
import { z } from 'zod';
import { ToolError, isSuiteTempName, type PathGuard } from '@suite/shared';
import { withPathErrors } from './fs-errors.js';
import type { WalkEntryType } from './walk.js';

/** What list_directory, list_directory_with_sizes, directory_tree and search_files share. */

/** Hard ceiling for a caller-raised maxEntries, so one call cannot build an unbounded answer. */
export const MAX_ENTRIES_CEILING = 200_000;

/** The maxEntries argument of the listings; its description names the server's default. */
export const maxEntriesArg = (fallback: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_ENTRIES_CEILING)
    .optional()
    .describe(`Most entries to return (default ${fallback}); the rest are counted in a "[truncated: N more ...]" marker.`);

/** The marker a text listing puts before an entry's name. */
export function entryPrefix(type: WalkEntryType): string {
  if (type === 'directory') return '[DIR]';
  if (type === 'symlink') return '[LINK]';
  return '[FILE]';
}

export function direntType(dirent: Dirent): WalkEntryType {
  if (dirent.isFile()) return 'file';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** The real path of a directory the user named; a file is refused with a hint. */
export async function resolveDirectory(guard: PathGuard, userPath: string): Promise<string> {
  const { real } = await guard.resolve(userPath, { mustExist: true });
  const stat = await withPathErrors(userPath, () => fs.stat(real));
  if (!stat.isDirectory()) throw ToolError.invalidArgument(`Not a directory: ${userPath}. Use read_text_file or get_file_info for files.`);
  return real;
}

/** A directory's entries sorted by name, without the suite's temporary files. */
export async function readDirectory(userPath: string, real: string): Promise<Dirent[]> {
  const dirents = (await withPathErrors(userPath, () => fs.readdir(real, { withFileTypes: true }))).filter((d) => !isSuiteTempName(d.name));
  return dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
