import { constants } from 'node:fs';
import { z } from 'zod';
import { FileChangedError, ToolError, defineTool, versionOf, type AnyToolDefinition, type FileVersion, type PathGuard } from '@suite/shared';
import { unifiedDiff } from '../diff.js';
import { withFsErrors } from '../fs-errors.js';
import { isProbablyText } from '@suite/shared';
import { applyEdits, editResultSchema, editSchema, type EditOutcome } from '../text-edits.js';
import { announceWritten } from '../changes-announced.js';

/** edit_file reads the whole file into memory; beyond this it refuses rather than risk the process. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;
/** Times an edit starts over when another program changed the file between its read and its write. */
const MAX_EDIT_ATTEMPTS = 3;

const editFileInput = z.object({
  path: z.string().describe('Text file to edit'),
  edits: z.array(editSchema).min(1).describe('Replacements, applied in order'),
  dryRun: z.boolean().default(false).describe('Preview the diff without changing the file'),
});

const editOutput = z.object({
  path: z.string(),
  dryRun: z.boolean(),
  changed: z.boolean().describe('False when the edits left the file as it was'),
  diff: z.string().describe('Unified diff of the change (empty when nothing changed)'),
  added: z.number().int(),
  removed: z.number().int(),
  lineEnding: z.enum(['lf', 'crlf']),
  edits: z.array(editResultSchema),
});

export function editFileTool(): AnyToolDefinition {
  return defineTool({
    name: 'edit_file',
    description:
      'Replace text in a text file and return a git-style unified diff of the change. Each edit replaces oldText with newText; edits apply in order, ' +
      'all or nothing. oldText must occur exactly once: when it occurs more often the call fails and lists where, unless replaceAll: true is set on that edit. ' +
      'When there is no exact match, lines are matched ignoring indentation and runs of whitespace, the new text is re-indented to fit, and the result says so. ' +
      'Line endings (LF or CRLF), a byte-order mark and the presence or absence of a final newline are kept. Use dryRun: true to preview the diff without writing. ' +
      `The write is atomic. Files up to ${MAX_EDIT_BYTES / (1024 * 1024)} MiB. Only works within allowed directories.`,
    input: editFileInput,
    output: editOutput,
    annotations: { title: 'Edit File', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async ({ path: userPath, edits, dryRun }, ctx) => {
      const guard = await ctx.paths();
      const { real } = await guard.resolve(userPath, { mustExist: true });
      const apply = async (): Promise<{ outcome: EditOutcome; version: FileVersion }> => {
        const { bytes, version } = await readForEdit(guard, real, userPath);
        return { outcome: applyEdits(decodeText(bytes, userPath), edits, userPath), version };
      };
      let outcome: EditOutcome;
      if (dryRun) {
        ({ outcome } = await apply());
      } else {
        // Held from the read to the rename: other writers of this file (in this process or another
        // suite server) wait, so no edit works from content about to be replaced. A program outside
        // the suite can still change the file meanwhile; then the edit starts over on the new content.
        outcome = await withFsErrors(userPath, 'edit', () =>
          guard.withWriteLock(
            real,
            async () => {
              for (let attempt = 1; ; attempt++) {
                const { outcome: applied, version } = await apply();
                if (applied.after === applied.before) return applied;
                try {
                  await guard.writeFileAtomic(real, applied.encode(applied.after), { userPath, expected: version });
                  return applied;
                } catch (error) {
                  if (!(error instanceof FileChangedError)) throw error;
                  if (attempt >= MAX_EDIT_ATTEMPTS) {
                    throw ToolError.conflict(
                      `${userPath} kept changing while it was being edited (another program wrote it ${MAX_EDIT_ATTEMPTS} times between our read and our write). No changes were made. Read it again and retry the edit.`,
                    );
                  }
                }
              }
            },
            { signal: ctx.signal, userPath },
          ),
        );
      }
      const { diff, stats } = unifiedDiff(outcome.before, outcome.after, `${userPath}\toriginal`, `${userPath}\tmodified`);
      const changed = outcome.after !== outcome.before;
      if (changed && !dryRun) announceWritten(ctx, [real]);

      const notes = outcome.results
        .filter((r) => r.matching === 'whitespace-tolerant')
        .map(
          (r) =>
            `Edit #${r.edit}: no exact match, so lines were matched ignoring indentation and whitespace (at line${r.lines.length > 1 ? 's' : ''} ${r.lines.join(', ')}); the new text was re-indented to match the file.`,
        );
      const fence = fenceFor(diff);
      const summary = !changed
        ? `No changes: the edits leave ${userPath} as it is.`
        : dryRun
          ? `Dry run: ${userPath} was not changed. This diff shows what the edits would do (+${stats.added} -${stats.removed}).`
          : `Edited ${userPath} (+${stats.added} -${stats.removed}).`;
      const text = [summary, ...notes, ...(changed ? [`${fence}diff\n${diff}${fence}`] : [])].join('\n\n');
      return {
        text,
        structured: {
          path: userPath,
          dryRun,
          changed,
          diff,
          added: stats.added,
          removed: stats.removed,
          lineEnding: outcome.crlf ? ('crlf' as const) : ('lf' as const),
          edits: outcome.results,
        },
      };
    },
  });
}

/** Reads a file for editing, with the version it had when read (fstat of the same descriptor). */
async function readForEdit(guard: PathGuard, real: string, userPath: string): Promise<{ bytes: Buffer; version: FileVersion }> {
  // O_NONBLOCK: opening a FIFO must not hang the request; it is refused below as not a regular file.
  const handle = await withFsErrors(userPath, 'open', () => guard.open(real, constants.O_RDONLY | constants.O_NONBLOCK, undefined, userPath));
  try {
    const stat = await handle.stat({ bigint: true });
    if (stat.isDirectory()) throw ToolError.conflict(`Cannot edit ${userPath}: it is a directory.`);
    if (!stat.isFile()) throw ToolError.conflict(`Cannot edit ${userPath}: it is not a regular file.`);
    if (stat.size > MAX_EDIT_BYTES) {
      throw ToolError.invalidArgument(
        `Cannot edit ${userPath}: it is ${stat.size} bytes, more than the ${MAX_EDIT_BYTES} bytes edit_file handles. Use write_file to replace it.`,
      );
    }
    return { bytes: await handle.readFile(), version: versionOf(stat) };
  } finally {
    await handle.close();
  }
}

function decodeText(bytes: Buffer, userPath: string): string {
  if (!isProbablyText(bytes)) throw ToolError.invalidArgument(`Cannot edit ${userPath}: it looks like a binary file. edit_file edits text files only.`);
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw ToolError.invalidArgument(`Cannot edit ${userPath}: it is not valid UTF-8 text.`);
  }
}

/** Backticks enough to fence a diff that may itself contain backtick runs. */
function fenceFor(text: string): string {
  let fence = '```';
  while (text.includes(fence)) fence += '`';
  return fence;
}
