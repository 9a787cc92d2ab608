/**
 * A file's version as the filesystem tells it, for noticing that someone changed a file between
 * the moment it was read and the moment a new version is renamed over it.
 *
 * Device and inode catch every writer that replaces the file (editors, git, our own atomic
 * writes); size, mtime and ctime in nanoseconds catch writers that change it in place. What this
 * cannot see: an in-place rewrite to the same size within one tick of the filesystem's clock (a few
 * milliseconds on Linux), by a program that does not take the suite's write locks.
 */
import type { BigIntStats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { ToolError } from '../core/errors.js';

export interface FileVersion {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

export function versionOf(stat: BigIntStats): FileVersion {
  return { dev: stat.dev, ino: stat.ino, size: stat.size, mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs };
}

export function sameVersion(a: FileVersion, b: FileVersion): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** The version of what is at `file` now (not following a symlink), or undefined when nothing is. */
export async function currentVersion(file: string): Promise<FileVersion | undefined> {
  const stat = await lstat(file, { bigint: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return undefined;
    throw error;
  });
  return stat ? versionOf(stat) : undefined;
}

/** The file changed between the read and the write: the write was not made. */
export class FileChangedError extends ToolError {
  constructor(userPath: string) {
    super(`${userPath} was changed by another program while this call was working on it; the change was not written. Read it again and retry.`, 'conflict');
    this.name = 'FileChangedError';
  }
}
