import type { Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, type PathGuard } from '@suite/shared';
import { asToolError } from './fs-errors.js';

/** A directory entry named by the user, with its parent resolved but the entry itself not followed. */
export interface ResolvedEntry {
  /** The real parent directory joined with the entry's own name: for a symlink, the link itself. */
  entry: string;
  /** The real path of the parent directory. */
  parent: string;
  /** lstat of the entry, or undefined when nothing is there (not even a dangling link). */
  stat: Stats | undefined;
  /** The entry is one of the allowed directories (which must never be moved or deleted). */
  isRoot: boolean;
}

export function accessDenied(userPath: string): ToolError {
  return ToolError.accessDenied(`Access denied: ${JSON.stringify(userPath)} is outside the allowed directories.`);
}

/**
 * Resolves the entry a user names for an operation on the entry itself (move, delete, a copy or
 * move destination) rather than on what a symlink there points to. The parent must resolve inside
 * the roots; the last component is never followed, so replacing or removing a symlink never
 * touches its target.
 */
export async function resolveEntry(guard: PathGuard, userPath: string): Promise<ResolvedEntry> {
  const absolute = guard.normalize(userPath);
  const parentPath = path.dirname(absolute);
  if (parentPath !== absolute) {
    const parent = await guard.resolve(parentPath).catch((error: unknown) => {
      if (error instanceof ToolError && error.kind === 'access_denied') return undefined;
      throw error;
    });
    if (parent) {
      if (!parent.exists) throw ToolError.notFound(`The parent directory of ${userPath} does not exist. Create it first with create_directory.`);
      const parentStat = await lstat(parent.real);
      if (!parentStat.isDirectory()) throw ToolError.conflict(`Cannot use ${userPath}: its parent is not a directory.`);
      const entry = path.join(parent.real, path.basename(absolute));
      const stat = await lstat(entry).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined;
        // ENAMETOOLONG and the like are the user's input, not a server fault: say which.
        throw asToolError(error, userPath);
      });
      return { entry, parent: parent.real, stat, isRoot: guard.directories.includes(entry) };
    }
  }
  // The parent is outside the roots, so the only entries that may be named are the roots themselves.
  const whole = await guard.resolve(userPath).catch(() => undefined);
  if (whole?.exists && guard.directories.includes(whole.real)) {
    return { entry: whole.real, parent: path.dirname(whole.real), stat: await lstat(whole.real), isRoot: true };
  }
  throw accessDenied(userPath);
}

/** The kind of a filesystem entry, in words for messages and structured output. */
export function entryKind(stat: Stats): 'file' | 'directory' | 'symlink' | 'other' {
  if (stat.isSymbolicLink()) return 'symlink';
  if (stat.isDirectory()) return 'directory';
  if (stat.isFile()) return 'file';
  return 'other';
}
