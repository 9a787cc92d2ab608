import type { Stats } from 'node:fs';
import { link, lstat, readlink, rename, rm, symlink, unlink } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError, defineTool, isInside, type AnyToolDefinition, type PathGuard, type RequestContext } from '@suite/shared';
import { copyDirectory, copyToTemp, publishTemp } from '../entry-copy.js';
import { entryKind, resolveEntry, type ResolvedEntry } from '../entry-path.js';
import { entryType } from '../entry-type.js';
import { withFsErrors } from '../fs-errors.js';
import { announceWritten } from '../changes-announced.js';

const moveFileInput = z.object({
  source: z.string().describe('What to move'),
  destination: z.string().describe('Its new path (not an existing directory to move it into)'),
});

const moveOutput = z.object({
  source: z.string(),
  destination: z.string(),
  kind: entryType,
  crossDevice: z.boolean().describe('True when the move had to copy and delete because source and destination are on different filesystems'),
});

export function moveFileTool(): AnyToolDefinition {
  return defineTool({
    name: 'move_file',
    description:
      'Move or rename a file, directory or symlink (a symlink is moved as a link; what it points to is untouched). ' +
      'Never overwrites: fails when anything already exists at the destination. The destination directory must exist. ' +
      'Works across filesystems by copying and then deleting the source. An allowed directory itself cannot be moved. ' +
      'Both source and destination must be within allowed directories.',
    input: moveFileInput,
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
      announceWritten(ctx, [from.entry, to.entry], { listChanged: true });
      const text = `Successfully moved ${source} to ${destination}${crossDevice ? ' (copied across filesystems, then removed the source)' : ''}.`;
      return { text, structured: { source, destination, kind: entryKind(from.stat), crossDevice } };
    },
  });
}

function destinationExists(destination: string): ToolError {
  return ToolError.conflict(`Destination ${destination} already exists. move_file never overwrites: choose another name or delete it first.`);
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
