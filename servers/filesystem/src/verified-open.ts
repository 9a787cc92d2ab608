import { closeSync, read, readSync, type Stats } from 'node:fs';
import { ToolError, type PathGuard } from '@suite/shared';
import { OutsideError, openCheckedSync, type CheckedFile } from './open-checked.js';

/**
 * A synchronous twin of `PathGuard.open` for the hot paths (small reads, content search over
 * thousands of files): the same O_NOFOLLOW open and the same after-open check of where the
 * descriptor really points (/proc/self/fd on Linux, which catches a parent directory swapped for a
 * symlink), but without the four thread-pool round trips the async version costs per file. Each
 * call blocks for a few microseconds on a local disk; callers yield to the event loop between
 * batches. Candidate for shared as `PathGuard.openSync`.
 */
export interface VerifiedFile {
  fd: number;
  stat: Stats;
  close(): void;
}

export function openVerifiedSync(guard: PathGuard, real: string, userPath: string): VerifiedFile {
  let file: CheckedFile;
  try {
    file = openCheckedSync(real, (actual) => guard.contains(actual));
  } catch (error) {
    if (error instanceof OutsideError) throw outside(userPath);
    throw error;
  }
  const { fd, stat } = file;
  return { fd, stat, close: () => closeSync(fd) };
}

function outside(userPath: string): ToolError {
  return ToolError.accessDenied(`Access denied: ${JSON.stringify(userPath)} is outside the allowed directories.`);
}

/** Chunks read synchronously before a reader switches to async reads (so a long scan never blocks the loop for long). */
const SYNC_CHUNKS = 4;

/**
 * Reads chunks of an open file: the first few synchronously (a head, a tail or a small file is then
 * a matter of microseconds), the rest through the thread pool.
 */
export class ChunkReader {
  private syncLeft = SYNC_CHUNKS;

  constructor(private readonly fd: number) {}

  async read(buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    if (this.syncLeft > 0) {
      this.syncLeft--;
      return readSync(this.fd, buffer, offset, length, position);
    }
    return new Promise((resolve, reject) =>
      read(this.fd, buffer, offset, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))),
    );
  }
}
