import { constants } from 'node:fs';
import { chmod, link, lstat, mkdir, readdir, readlink, realpath, rename, rm, stat, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, isSuiteTempName, newTempEntry, tempName, throwIfCancelled, trackTempEntry, type PathGuard, type RequestContext } from '@suite/shared';
import { accessDenied, type ResolvedEntry } from './entry-path.js';

/**
 * Copying files and trees inside the roots without ever showing a half-made copy: what copy_file
 * does, and what move_file does across filesystems.
 */

/** A recursive copy stops (and cleans up) beyond this many entries rather than fill a disk. */
export const MAX_COPY_ENTRIES = 100_000;
const COPY_CHUNK = 1024 * 1024;

/**
 * Copies a file's content into a new temporary file in `dir`. Both ends are opened through the
 * path guard (no symlink as the last component, and the descriptor verified to lie inside the
 * roots), so a parent directory swapped for a symlink mid-way is caught rather than followed.
 */
export async function copyToTemp(
  guard: PathGuard,
  sourceReal: string,
  dir: string,
  source: string,
  destination: string,
  ctx: RequestContext,
  durable = true,
): Promise<TempCopy> {
  const input = await guard.open(sourceReal, constants.O_RDONLY | constants.O_NONBLOCK, undefined, source);
  let tmp: string | undefined;
  let untrack = (): void => undefined;
  try {
    const sourceStat = await input.stat();
    if (!sourceStat.isFile()) throw ToolError.invalidArgument(`Cannot copy ${source}: it is not a regular file.`);
    const mode = sourceStat.mode & 0o7777;
    // Inside a tree copy's staging directory (not durable), the staging directory is the journaled
    // entry: removing it removes this one, so each of its folders need not be journaled too.
    const entry = durable ? await newTempEntry(dir) : stagedEntry(dir);
    const candidate = entry.path;
    untrack = entry.untrack;
    const output = await guard.open(candidate, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode, destination).catch(async (error: unknown) => {
      // The open created the file before the check refused it: remove what this call made (its name is random and new).
      if (error instanceof ToolError) await unlink(candidate).catch(() => undefined);
      throw error;
    });
    tmp = candidate;
    let bytes = 0;
    try {
      const buffer = Buffer.allocUnsafe(COPY_CHUNK);
      for (;;) {
        throwIfCancelled(ctx.signal);
        const { bytesRead } = await input.read(buffer, 0, buffer.length, null);
        if (bytesRead === 0) break;
        let written = 0;
        while (written < bytesRead) written += (await output.write(buffer, written, bytesRead - written)).bytesWritten;
        bytes += bytesRead;
      }
      // The umask may have narrowed the mode given to open().
      await output.chmod(mode);
      // A single file is published by rename, so it must be on disk first; a tree copy is published
      // by renaming its staging directory, and an fsync per file would make big copies crawl.
      if (durable) await output.sync();
    } finally {
      await output.close();
    }
    return { tmp, bytes, untrack };
  } catch (error) {
    if (tmp) await rm(tmp, { force: true });
    untrack();
    throw error;
  } finally {
    await input.close();
  }
}

/** A finished temporary copy; `untrack` once it was renamed into place or removed. */
export interface TempCopy {
  tmp: string;
  bytes: number;
  untrack: () => void;
}

/** Puts a finished temporary file at its destination: replacing (rename) or never replacing (link). */
export async function publishTemp(copy: TempCopy, destination: string, overwrite: boolean, userDestination: string): Promise<void> {
  try {
    if (overwrite) {
      await rename(copy.tmp, destination);
    } else {
      await link(copy.tmp, destination);
      await rm(copy.tmp, { force: true });
    }
  } catch (error) {
    await rm(copy.tmp, { force: true });
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw ToolError.conflict(`Destination ${userDestination} already exists.`);
    throw error;
  } finally {
    copy.untrack();
  }
}

export interface CopyTally {
  files: number;
  directories: number;
  bytes: number;
  skipped: string[];
}

/**
 * Copies a directory tree into a temporary directory next to the destination and renames it into
 * place, so the copy appears whole or not at all; on failure or cancellation the partial copy is removed.
 */
export async function copyDirectory(
  guard: PathGuard,
  sourceDir: string,
  to: ResolvedEntry,
  source: string,
  destination: string,
  ctx: RequestContext,
  options: { keepAllSymlinks?: boolean } = {},
): Promise<CopyTally> {
  const { path: staging, untrack: untrackStaging } = await newTempEntry(to.parent);
  await mkdir(staging);
  const tally: CopyTally = { files: 0, directories: 1, bytes: 0, skipped: [] };
  try {
    if ((await realpath(staging)) !== staging || !guard.contains(staging)) throw accessDenied(destination);
    const modes: { dir: string; mode: number }[] = [{ dir: staging, mode: (await stat(sourceDir)).mode & 0o7777 }];
    const pending: { from: string; into: string; relative: string }[] = [{ from: sourceDir, into: staging, relative: '' }];
    let entries = 0;
    while (pending.length > 0) {
      const { from, into, relative } = pending.pop()!;
      for (const dirent of await readdir(from, { withFileTypes: true })) {
        throwIfCancelled(ctx.signal);
        // A write in progress in the source (or a crash's leftover) is not part of what is copied.
        if (isSuiteTempName(dirent.name)) continue;
        if (++entries > MAX_COPY_ENTRIES) {
          throw ToolError.invalidArgument(`Cannot copy ${source}: it has more than ${MAX_COPY_ENTRIES} entries. Copy its subdirectories separately.`);
        }
        ctx.progress.report(entries, undefined, `copied ${entries} entries`);
        const child = path.join(from, dirent.name);
        const target = path.join(into, dirent.name);
        const childRelative = relative ? `${relative}/${dirent.name}` : dirent.name;
        if (dirent.isDirectory()) {
          await mkdir(target);
          modes.push({ dir: target, mode: (await lstat(child)).mode & 0o7777 });
          tally.directories++;
          pending.push({ from: child, into: target, relative: childRelative });
        } else if (dirent.isFile()) {
          const { tmp, bytes, untrack } = await copyToTemp(guard, child, into, `${source}/${childRelative}`, destination, ctx, false);
          await rename(tmp, target).finally(untrack);
          tally.files++;
          tally.bytes += bytes;
        } else if (dirent.isSymbolicLink()) {
          const keep = options.keepAllSymlinks === true || (await realpath(child).then((real) => guard.contains(real), () => false));
          if (keep) await symlink(await readlink(child), target);
          else tally.skipped.push(childRelative);
        } else {
          tally.skipped.push(childRelative);
        }
      }
    }
    // Directory modes last: a read-only source directory must not stop its own copy being filled.
    for (const { dir, mode } of modes.reverse()) await chmod(dir, mode);
    if (await lstat(to.entry).catch(() => undefined)) throw ToolError.conflict(`Destination ${destination} already exists.`);
    await rename(staging, to.entry);
    return tally;
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  } finally {
    untrackStaging();
  }
}

function stagedEntry(dir: string): { path: string; untrack: () => void } {
  const entry = path.join(dir, tempName());
  return { path: entry, untrack: trackTempEntry(entry) };
}
