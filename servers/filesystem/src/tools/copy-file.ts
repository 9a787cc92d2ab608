import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError, defineTool, isInside, type AnyToolDefinition } from '@suite/shared';
import { MAX_COPY_ENTRIES, copyDirectory, copyToTemp, publishTemp } from '../entry-copy.js';
import { resolveEntry } from '../entry-path.js';
import { withFsErrors } from '../fs-errors.js';
import { announceWritten } from '../changes-announced.js';

const copyFileInput = z.object({
  source: z.string().describe('File or directory to copy'),
  destination: z.string().describe('Path of the copy (not an existing directory to copy into)'),
  recursive: z.boolean().default(false).describe('Required to copy a directory'),
  overwrite: z.boolean().default(false).describe('Replace an existing destination file'),
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

export function copyFileTool(): AnyToolDefinition {
  return defineTool({
    name: 'copy_file',
    description:
      'Copy a file, or a directory with everything in it when recursive: true. Symlinks in the source are followed only when they lead inside the allowed directories: ' +
      'the source itself is read through them, symlinks inside a copied directory are recreated as symlinks, and ones leading outside are skipped and listed. ' +
      'Does not replace anything unless overwrite: true is given, which replaces an existing destination file (the only destructive use of this tool; ' +
      'directories are never overwritten). The copy appears atomically: it is written under a temporary name and renamed into place. ' +
      `File permission bits are kept. At most ${MAX_COPY_ENTRIES} entries per copy. Both source and destination must be within allowed directories.`,
    input: copyFileInput,
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
        announceWritten(ctx, [], { listChanged: true });
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
      announceWritten(ctx, [to.entry], { listChanged: !replaced });
      return {
        text: `Successfully copied ${source} to ${destination} (${bytes} bytes${replaced ? ', replaced the existing file' : ''}).`,
        structured: { source, destination, kind: 'file' as const, files: 1, directories: 0, bytes, replaced, skipped: [] },
      };
    },
  });
}
