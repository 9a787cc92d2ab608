import { constants, type Stats } from 'node:fs';
import { chmod, link, lstat, mkdir, readdir, readlink, realpath, rename, rm, stat, symlink, unlink } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, isInside, isSuiteTempName, tempName, throwIfCancelled, trackTempEntry, type PathGuard, type RequestContext, type SuiteServer } from '@suite/shared';
import type { FilesystemConfig } from '../config.js';
import { accessDenied, entryKind, resolveEntry, type ResolvedEntry } from '../entry-path.js';
import { withFsErrors } from '../fs-errors.js';

/** A recursive copy stops (and cleans up) beyond this many entries rather than fill a disk. */
export const MAX_COPY_ENTRIES = 100_000;
const COPY_CHUNK = 1024 * 1024;

const kind = z.enum(['file', 'directory', 'symlink', 'other']);

const moveOutput = z.object({
  source: z.string(),
  destination: z.string(),
  kind,
  crossDevice: z.boolean().describe('True when the move had to copy and delete because source and destination are on different filesystems'),
});

const copyOutput = z.object({
  source: z.string(),
  destination: z.string(),
  kind: z.enum(['file', 'directory']),
  files: z.number().int().describe('Regular files copied'),
  directories: z.number().int().describe('Directories created'),
  bytes: z.number().int().describe('Bytes of file content copied'),
  replaced: z.boolean().describe('True when an existing file was overwritten'),
  skipped: z.array(z.string()).describe('Entries not copied (symlinks leading outside the allowed directories, sockets, devices), relative to the source'),
});

const deleteOutput = z.object({
  path: z.string(),
  kind,
});

/** move_file, copy_file and delete_file. */
export function registerMoveTools(server: SuiteServer, _config: FilesystemConfig): void {
  server.tool({
    name: 'move_file',
    description:
      'Move or rename a file, directory or symlink (a symlink is moved as a link; what it points to is untouched). ' +
      'Never overwrites: fails when anything already exists at the destination. The destination directory must exist. ' +
      'Works across filesystems by copying and then deleting the source. An allowed directory itself cannot be moved. ' +
      'Both source and destination must be within allowed directories.',
    input: z.object({
      source: z.string().describe('What to move'),
      destination: z.string().describe('Its new path (not an existing directory to move it into)'),
    }),
    output: moveOutput,
    annotations: { title: 'Move File', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async ({ source, destination }, ctx) => {
      const guard = await ctx.paths();
      const from = await resolveEntry(guard, source);
      if (!from.stat) throw ToolError.notFound(`Not found: ${source}`);
      if (from.isRoot) throw ToolError.conflict(`${source} is an allowed directory itself; it cannot be moved.`);
      const to = await resolveEntry(guard, destination);
      if (to.stat) throw destinationExists(destination);
      if (from.stat.isDirectory() && isInside(to.entry, from.entry)) {
        throw ToolError.invalidArgument(`Cannot move ${source} into itself (${destination} is inside it).`);
      }
      // Both names are locked: an edit of the source finishes before it moves, and nothing is written to the destination meanwhile.
      const crossDevice = await withFsErrors(destination, 'move to', () =>
        guard.withWriteLock([from.entry, to.entry], () => moveEntry(guard, from as ResolvedEntry & { stat: Stats }, to, source, destination, ctx), {
          signal: ctx.signal,
          userPath: source,
        }),
      );
      const text = `Successfully moved ${source} to ${destination}${crossDevice ? ' (copied across filesystems, then removed the source)' : ''}.`;
      return { text, structured: { source, destination, kind: entryKind(from.stat), crossDevice } };
    },
  });

  server.tool({
    name: 'copy_file',
    description:
      'Copy a file, or a directory with everything in it when recursive: true. Symlinks in the source are followed only when they lead inside the allowed directories: ' +
      'the source itself is read through them, symlinks inside a copied directory are recreated as symlinks, and ones leading outside are skipped and listed. ' +
      'Does not replace anything unless overwrite: true is given, which replaces an existing destination file (the only destructive use of this tool; ' +
      'directories are never overwritten). The copy appears atomically: it is written under a temporary name and renamed into place. ' +
      `File permission bits are kept. At most ${MAX_COPY_ENTRIES} entries per copy. Both source and destination must be within allowed directories.`,
    input: z.object({
      source: z.string().describe('File or directory to copy'),
      destination: z.string().describe('Path of the copy (not an existing directory to copy into)'),
      recursive: z.boolean().default(false).describe('Required to copy a directory'),
      overwrite: z.boolean().default(false).describe('Replace an existing destination file'),
    }),
    output: copyOutput,
    annotations: { title: 'Copy File', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async ({ source, destination, recursive, overwrite }, ctx) => {
      const guard = await ctx.paths();
      const { real } = await guard.resolve(source, { mustExist: true });
      const sourceStat = await stat(real);
      const to = await resolveEntry(guard, destination);
      if (sourceStat.isDirectory()) {
        if (!recursive) throw ToolError.invalidArgument(`${source} is a directory. Set recursive: true to copy it and everything in it.`);
        if (to.stat) throw ToolError.conflict(`Destination ${destination} already exists. Directories are never overwritten; choose a new path or delete it first.`);
        if (isInside(to.entry, real)) throw ToolError.invalidArgument(`Cannot copy ${source} into itself (${destination} is inside it).`);
        const tally = await withFsErrors(destination, 'copy to', () =>
          guard.withWriteLock(to.entry, () => copyDirectory(guard, real, to, source, destination, ctx), { signal: ctx.signal, userPath: destination }),
        );
        const skippedNote = tally.skipped.length > 0 ? ` Skipped ${tally.skipped.length}: ${tally.skipped.slice(0, 20).join(', ')}${tally.skipped.length > 20 ? ', ...' : ''}.` : '';
        return {
          text: `Successfully copied directory ${source} to ${destination} (${tally.files} files, ${tally.directories} directories, ${tally.bytes} bytes).${skippedNote}`,
          structured: { source, destination, kind: 'directory' as const, ...tally, replaced: false },
        };
      }
      if (!sourceStat.isFile()) throw ToolError.invalidArgument(`Cannot copy ${source}: it is not a regular file or directory.`);
      if (to.stat) {
        if (!overwrite) throw ToolError.conflict(`Destination ${destination} already exists. Set overwrite: true to replace it.`);
        if (to.stat.isDirectory()) throw ToolError.conflict(`Destination ${destination} is a directory. Give the full path of the copy, including its file name.`);
        if (to.entry === real) throw ToolError.conflict(`Cannot copy ${source} onto itself.`);
      }
      const bytes = await withFsErrors(destination, 'copy to', () =>
        guard.withWriteLock(
          to.entry,
          async () => {
            const copy = await copyToTemp(guard, real, to.parent, source, destination, ctx);
            await publishTemp(copy, to.entry, overwrite, destination);
            return copy.bytes;
          },
          { signal: ctx.signal, userPath: destination },
        ),
      );
      const replaced = to.stat !== undefined;
      return {
        text: `Successfully copied ${source} to ${destination} (${bytes} bytes${replaced ? ', replaced the existing file' : ''}).`,
        structured: { source, destination, kind: 'file' as const, files: 1, directories: 0, bytes, replaced, skipped: [] },
      };
    },
  });

  server.tool({
    name: 'delete_file',
    description:
      'Delete a file or symlink (a symlink is removed as a link; what it points to is untouched), or a directory and everything in it when recursive: true. ' +
      'Permanent: nothing goes to a trash can. A directory is first renamed out of the way and then removed, so it disappears at once. ' +
      'An allowed directory itself is never deleted. Only works within allowed directories.',
    input: z.object({
      path: z.string().describe('File, symlink or directory to delete'),
      recursive: z.boolean().default(false).describe('Required to delete a directory (and everything in it)'),
    }),
    output: deleteOutput,
    annotations: { title: 'Delete File', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async ({ path: userPath, recursive }, ctx) => {
      const guard = await ctx.paths();
      const target = await resolveEntry(guard, userPath);
      if (!target.stat) throw ToolError.notFound(`Not found: ${userPath}`);
      if (target.isRoot || guard.directories.some((root) => isInside(root, target.entry))) {
        throw ToolError.conflict(`${userPath} is an allowed directory (or contains one); it is never deleted. Delete what is inside it instead.`);
      }
      const what = entryKind(target.stat);
      if (what === 'directory') {
        if (!recursive) throw ToolError.invalidArgument(`${userPath} is a directory. Set recursive: true to delete it and everything in it.`);
        await withFsErrors(userPath, 'delete', async () => {
          // A recognisable name: hidden from listings meanwhile, and finished by the next start-up's sweep if the process dies.
          const detached = path.join(target.parent, tempName('deleting'));
          await rename(target.entry, detached);
          try {
            await rm(detached, { recursive: true, force: true });
          } catch (error) {
            // Put back what could not be deleted, under its own name, rather than leave a hidden remnant.
            await rename(detached, target.entry).catch(() => undefined);
            throw ToolError.conflict(
              `Could not delete everything in ${userPath} (${(error as NodeJS.ErrnoException).code ?? 'error'}); what remains is still at ${userPath}.`,
            );
          }
        });
        return { text: `Successfully deleted directory ${userPath} and everything in it.`, structured: { path: userPath, kind: what } };
      }
      await withFsErrors(userPath, 'delete', () => guard.withWriteLock(target.entry, () => unlink(target.entry), { signal: ctx.signal, userPath }));
      return { text: `Successfully deleted ${userPath}.`, structured: { path: userPath, kind: what } };
    },
  });
}

function destinationExists(destination: string): ToolError {
  return ToolError.conflict(`Destination ${destination} already exists. move_file never overwrites: choose another name or delete it first.`);
}

function tempPath(dir: string): string {
  return path.join(dir, tempName());
}

/** Moves an entry without ever replacing one. Returns true when it had to copy across filesystems. */
async function moveEntry(
  guard: PathGuard,
  from: ResolvedEntry & { stat: Stats },
  to: ResolvedEntry,
  source: string,
  destination: string,
  ctx: RequestContext,
): Promise<boolean> {
  if (!from.stat.isDirectory()) {
    // link() fails with EEXIST where rename() would silently replace: a no-clobber rename for files and symlinks.
    try {
      await link(from.entry, to.entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw destinationExists(destination);
      if (code === 'EXDEV') {
        await moveAcrossDevices(guard, from, to, source, destination, ctx);
        return true;
      }
      // Filesystems without hard links: check, then rename (the window is only as wide as these two calls).
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'EMLINK') throw error;
      if (await lstat(to.entry).catch(() => undefined)) throw destinationExists(destination);
      await rename(from.entry, to.entry);
      return false;
    }
    await unlink(from.entry);
    return false;
  }
  // rename() would replace an empty directory at the destination; check just before.
  if (await lstat(to.entry).catch(() => undefined)) throw destinationExists(destination);
  try {
    await rename(from.entry, to.entry);
    return false;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
  }
  await moveAcrossDevices(guard, from, to, source, destination, ctx);
  return true;
}

async function moveAcrossDevices(
  guard: PathGuard,
  from: ResolvedEntry & { stat: Stats },
  to: ResolvedEntry,
  source: string,
  destination: string,
  ctx: RequestContext,
): Promise<void> {
  if (from.stat.isDirectory()) {
    // A move keeps every symlink as it is (the original goes away, so no new way out appears).
    const tally = await copyDirectory(guard, from.entry, to, source, destination, ctx, { keepAllSymlinks: true });
    if (tally.skipped.length > 0) {
      // Sockets, FIFOs and devices cannot be recreated here: deleting the source would lose them.
      await rm(to.entry, { recursive: true, force: true });
      throw ToolError.conflict(
        `Cannot move ${source} across filesystems: it contains entries that cannot be copied (${tally.skipped.slice(0, 10).join(', ')}). Nothing was moved.`,
      );
    }
    await rm(from.entry, { recursive: true, force: true });
    return;
  }
  if (from.stat.isSymbolicLink()) {
    const target = await readlink(from.entry);
    await symlink(target, to.entry);
    await unlink(from.entry);
    return;
  }
  if (!from.stat.isFile()) throw ToolError.invalidArgument(`Cannot move ${source} across filesystems: it is not a regular file, directory or symlink.`);
  await publishTemp(await copyToTemp(guard, from.entry, to.parent, source, destination, ctx), to.entry, false, destination);
  await unlink(from.entry);
}

/**
 * Copies a file's content into a new temporary file in `dir`. Both ends are opened through the
 * path guard (no symlink as the last component, and the descriptor verified to lie inside the
 * roots), so a parent directory swapped for a symlink mid-way is caught rather than followed.
 */
async function copyToTemp(
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
    const candidate = tempPath(dir);
    untrack = trackTempEntry(candidate);
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
interface TempCopy {
  tmp: string;
  bytes: number;
  untrack: () => void;
}

/** Puts a finished temporary file at its destination: replacing (rename) or never replacing (link). */
async function publishTemp(copy: TempCopy, destination: string, overwrite: boolean, userDestination: string): Promise<void> {
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

interface CopyTally {
  files: number;
  directories: number;
  bytes: number;
  skipped: string[];
}

/**
 * Copies a directory tree into a temporary directory next to the destination and renames it into
 * place, so the copy appears whole or not at all; on failure or cancellation the partial copy is removed.
 */
async function copyDirectory(
  guard: PathGuard,
  sourceDir: string,
  to: ResolvedEntry,
  source: string,
  destination: string,
  ctx: RequestContext,
  options: { keepAllSymlinks?: boolean } = {},
): Promise<CopyTally> {
  const staging = tempPath(to.parent);
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
  }
}
