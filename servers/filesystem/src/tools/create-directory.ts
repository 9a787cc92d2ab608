import { lstat, mkdir, realpath, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition, type PathGuard } from '@suite/shared';
import { accessDenied } from '../entry-path.js';
import { withFsErrors } from '../fs-errors.js';

const createDirectoryInput = z.object({ path: z.string().describe('Directory to create') });

const createDirectoryOutput = z.object({
  path: z.string().describe('The path as given'),
  created: z.boolean().describe('False when the directory already existed'),
  createdDirectories: z.number().int().describe('How many directories were made, parents included'),
});

export function createDirectoryTool(): AnyToolDefinition {
  return defineTool({
    name: 'create_directory',
    description:
      'Create a directory, with any missing parents (like mkdir -p). Succeeds without change when the directory already exists. ' +
      'Fails when a file is in the way. Only works within allowed directories.',
    input: createDirectoryInput,
    output: createDirectoryOutput,
    annotations: { title: 'Create Directory', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ path: userPath }, ctx) => {
      const guard = await ctx.paths();
      const { real, exists } = await guard.resolve(userPath);
      if (exists) {
        const existing = await stat(real);
        if (!existing.isDirectory()) throw ToolError.conflict(`Cannot create directory ${userPath}: a file with that name exists.`);
        return { text: `Directory ${userPath} already exists.`, structured: { path: userPath, created: false, createdDirectories: 0 } };
      }
      const made = await withFsErrors(userPath, 'create directory', () => makeDirectories(guard, real, userPath));
      return {
        text: `Successfully created directory ${userPath}${made > 1 ? ` (${made} directories including parents)` : ''}.`,
        structured: { path: userPath, created: made > 0, createdDirectories: made },
      };
    },
  });
}

/**
 * mkdir -p, one component at a time, checking after each mkdir that the new directory really is
 * where it was meant to be. A parent swapped for a symlink between the check and the mkdir would
 * otherwise let `recursive: true` build a tree outside the roots; here such a directory is
 * removed again and the call refused.
 */
export async function makeDirectories(guard: PathGuard, real: string, userPath: string): Promise<number> {
  const missing: string[] = [];
  let current = real;
  for (;;) {
    const found = await lstat(current).catch(() => undefined);
    if (found) {
      // The real path had no symlinks when it was resolved: one now means the tree changed under us.
      if (found.isSymbolicLink()) throw accessDenied(userPath);
      if (!found.isDirectory()) throw ToolError.conflict(`Cannot create directory ${userPath}: a component of the path is a file.`);
      break;
    }
    missing.unshift(current);
    const parent = path.dirname(current);
    if (parent === current) break;
    current = parent;
  }
  let made = 0;
  for (const dir of missing) {
    let madeHere = false;
    try {
      await mkdir(dir);
      madeHere = true;
      made++;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const raced = await lstat(dir);
      if (!raced.isDirectory()) throw ToolError.conflict(`Cannot create directory ${userPath}: a component of the path is not a directory.`);
    }
    const actual = await realpath(dir).catch(() => undefined);
    if (actual !== dir || !guard.contains(actual)) {
      // Only undo what this call made: an empty directory that was already there is not ours to remove.
      if (madeHere && actual !== undefined && !guard.contains(actual)) await rmdir(dir).catch(() => undefined);
      throw accessDenied(userPath);
    }
  }
  return made;
}
