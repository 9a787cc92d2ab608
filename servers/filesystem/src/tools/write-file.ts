import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import { withFsErrors } from '../fs-errors.js';
import { announceWritten } from '../changes-announced.js';

const writeFileInput = z.object({
  path: z.string().describe('File to create or replace'),
  content: z.string().describe('The complete new content of the file'),
});

const writeFileOutput = z.object({
  path: z.string().describe('The path as given'),
  bytes: z.number().int().describe('Bytes written (UTF-8)'),
  created: z.boolean().describe('True when the file did not exist before'),
});

export function writeFileTool(): AnyToolDefinition {
  return defineTool({
    name: 'write_file',
    description:
      'Create a new file or completely replace an existing file with the given text (UTF-8). ' +
      'Overwrites without asking, so read the file first when it may hold something worth keeping; to change part of a file use edit_file. ' +
      'The write is atomic (a temporary file in the same directory, then a rename): readers see the old or the new content, never half. ' +
      'An existing file keeps its permission bits. The parent directory must exist (create it with create_directory). ' +
      'A symlink is written through only when it leads to a file inside the allowed directories. Only works within allowed directories.',
    input: writeFileInput,
    output: writeFileOutput,
    annotations: { title: 'Write File', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async ({ path: userPath, content }, ctx) => {
      const guard = await ctx.paths();
      const { real, exists } = await guard.resolve(userPath);
      const parent = await stat(path.dirname(real)).catch(() => undefined);
      if (!parent) throw ToolError.notFound(`The parent directory of ${userPath} does not exist. Create it first with create_directory.`);
      if (!parent.isDirectory()) throw ToolError.conflict(`Cannot write ${userPath}: its parent is not a directory.`);
      // Serialised with every other writer of the file (an edit in flight finishes first, then this replaces its result).
      await withFsErrors(userPath, 'write', () => guard.withWriteLock(real, () => guard.writeFileAtomic(real, content, { userPath }), { signal: ctx.signal, userPath }));
      announceWritten(ctx, [real], { listChanged: !exists });
      const bytes = Buffer.byteLength(content, 'utf8');
      const text = `Successfully wrote to ${userPath} (${bytes} bytes, ${exists ? 'replaced' : 'created'}).`;
      return { text, structured: { path: userPath, bytes, created: !exists } };
    },
  });
}
