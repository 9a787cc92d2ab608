import path from 'node:path';
import { PathGuard, ToolError } from '@suite/shared';
import type { GitRepository } from './repository.js';

export interface RepoPath {
  /** Relative to the top of the working tree, `/`-separated, as git names it. */
  relative: string;
  /** The real path (symlinks resolved); for a path that does not exist, where it would be. */
  real: string;
  exists: boolean;
}

/**
 * Resolves a path the user gave (relative to the top of the working tree, or absolute) and
 * requires it to stay inside the working tree twice: as written, and after every symlink is
 * resolved (a deleted file is checked through its nearest existing parent). Nothing inside a
 * `.git` directory is a path of the repository. git gets the path as written (relative), with
 * `:(literal)` so that `*` or `:(...)` in a name mean nothing special.
 */
export async function resolveRepoPath(repo: GitRepository, userPath: string): Promise<RepoPath> {
  const guard = new PathGuard([repo.top]);
  const lexical = guard.normalize(userPath);
  const relative = path.relative(repo.top, lexical).split(path.sep).join('/');
  if (relative.startsWith('..') || path.isAbsolute(relative)) throw outside(userPath);
  if (relative.split('/').some((part) => part.toLowerCase() === '.git')) {
    throw ToolError.accessDenied(`${JSON.stringify(userPath)} is inside a .git directory, which holds git's own data, not files of the repository.`);
  }
  let resolved;
  try {
    resolved = await guard.resolve(userPath);
  } catch (error) {
    if (error instanceof ToolError && error.kind === 'access_denied') throw outside(userPath);
    throw error;
  }
  return { relative: relative === '' ? '.' : relative, real: resolved.real, exists: resolved.exists };
}

/** A pathspec that means exactly this path (no globbing, no magic), from the top of the working tree. */
export function literalPathspec(relative: string): string {
  return `:(top,literal)${relative === '.' ? '' : relative}`;
}

function outside(userPath: string): ToolError {
  return ToolError.accessDenied(`${JSON.stringify(userPath)} is outside the repository (symlinks are followed to check). Give a path inside its working tree.`);
}
