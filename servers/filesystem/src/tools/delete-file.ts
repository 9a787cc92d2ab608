import { rename, rm, unlink } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError, defineTool, isInside, newTempEntry, type AnyToolDefinition } from '@suite/shared';
import { entryKind, resolveEntry } from '../entry-path.js';
import { entryType } from '../entry-type.js';
import { withFsErrors } from '../fs-errors.js';
import { announceWritten } from '../changes-announced.js';

const deleteFileInput = z.object({
  path: z.string().describe('File, symlink or directory to delete'),
  recursive: z.boolean().default(false).describe('Required to delete a directory (and everything in it)'),
});

const deleteOutput = z.object({
  path: z.string(),
  kind: entryType,
});

export function deleteFileTool(): AnyToolDefinition {
  return defineTool({
    name: 'delete_file',
    description:
      'Delete a file or symlink (a symlink is removed as a link; what it points to is untouched), or a directory and everything in it when recursive: true. ' +
      'Permanent: nothing goes to a trash can. A directory is first renamed out of the way and then removed, so it disappears at once. ' +
      'An allowed directory itself is never deleted. Only works within allowed directories.',
    input: deleteFileInput,
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
          const { path: detached, untrack } = await newTempEntry(target.parent, 'deleting');
          try {
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
          } finally {
            untrack();
          }
        });
        announceWritten(ctx, [], { listChanged: true });
        return { text: `Successfully deleted directory ${userPath} and everything in it.`, structured: { path: userPath, kind: what } };
      }
      await withFsErrors(userPath, 'delete', () => guard.withWriteLock(target.entry, () => unlink(target.entry), { signal: ctx.signal, userPath }));
      announceWritten(ctx, [target.entry], { listChanged: true });
      return { text: `Successfully deleted ${userPath}.`, structured: { path: userPath, kind: what } };
    },
  });
}
