import { closeSync, constants, fstatSync, openSync, readlinkSync, type Stats } from 'node:fs';
import path from 'node:path';

/**
 * The checked open under `openVerifiedSync` (verified-open.ts), without its error messages, so
 * that the search worker thread can use it with nothing else of the package: O_NOFOLLOW (the last
 * component is never a link), O_NONBLOCK (a FIFO does not wait for a writer), then where the
 * descriptor really points, read back from /proc/self/fd on Linux (a parent directory swapped
 * for a symlink is caught there), must pass `inside`. A leaf module.
 */

export class OutsideError extends Error {
  constructor() {
    super('the file is outside the allowed directories');
  }
}

export interface CheckedFile {
  fd: number;
  stat: Stats;
}

/** Opens `real` for reading; throws OutsideError when it resolves outside, or the open's own error. The caller closes `fd`. */
export function openCheckedSync(real: string, inside: (realPath: string) => boolean): CheckedFile {
  const fd = openCheckedFdSync(real, inside);
  try {
    return { fd, stat: fstatSync(fd) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** `openCheckedSync` without the `fstat`, for a caller that learns what it needs from its first read. */
export function openCheckedFdSync(real: string, inside: (realPath: string) => boolean): number {
  let fd: number;
  try {
    fd = openSync(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP') throw new OutsideError();
    throw error;
  }
  try {
    if (process.platform === 'linux') {
      let actual: string | undefined;
      try {
        actual = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        // No /proc (a restricted container): the O_NOFOLLOW open is the remaining guard, as in PathGuard.
      }
      if (actual !== undefined && !inside(actual)) throw new OutsideError();
    }
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** True when a real path lies inside one of the roots (PathGuard.contains, for a thread that has only the roots). */
export function insideRoots(roots: readonly string[]): (realPath: string) => boolean {
  const prefixes = roots.map((root) => (root.endsWith(path.sep) ? root : root + path.sep));
  return (realPath) => roots.some((root, i) => realPath === root || realPath.startsWith(prefixes[i] as string));
}
