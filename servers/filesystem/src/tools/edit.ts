import { constants } from 'node:fs';
import { z } from 'zod';
import { FileChangedError, ToolError, versionOf, type FileVersion, type PathGuard, type SuiteServer } from '@suite/shared';
import type { FilesystemConfig } from '../config.js';
import { unifiedDiff } from '../diff.js';
import { withFsErrors } from '../fs-errors.js';
import { isProbablyText } from '../mime.js';

/** edit_file reads the whole file into memory; beyond this it refuses rather than risk the process. */
export const MAX_EDIT_BYTES = 16 * 1024 * 1024;
/** Times an edit starts over when another program changed the file between its read and its write. */
const MAX_EDIT_ATTEMPTS = 3;

const editInput = z.object({
  oldText: z.string().describe('Text to search for: copy it exactly from the file, with enough surrounding lines to be unique'),
  newText: z.string().describe('Text to replace it with'),
  replaceAll: z.boolean().optional().describe('Replace every occurrence instead of failing when oldText occurs more than once'),
});

const editResult = z.object({
  edit: z.number().int().describe('1-based position of the edit in the request'),
  replacements: z.number().int(),
  matching: z.enum(['exact', 'whitespace-tolerant']),
  lines: z.array(z.number().int()).describe('First line (1-based, in the file as it was when this edit ran) of each replaced occurrence'),
});

const editOutput = z.object({
  path: z.string(),
  dryRun: z.boolean(),
  changed: z.boolean().describe('False when the edits left the file as it was'),
  diff: z.string().describe('Unified diff of the change (empty when nothing changed)'),
  added: z.number().int(),
  removed: z.number().int(),
  lineEnding: z.enum(['lf', 'crlf']),
  edits: z.array(editResult),
});

type EditResult = z.output<typeof editResult>;
type Edit = z.output<typeof editInput>;

/** edit_file. */
export function registerEditTool(server: SuiteServer, _config: FilesystemConfig): void {
  server.tool({
    name: 'edit_file',
    description:
      'Replace text in a text file and return a git-style unified diff of the change. Each edit replaces oldText with newText; edits apply in order, ' +
      'all or nothing. oldText must occur exactly once: when it occurs more often the call fails and lists where, unless replaceAll: true is set on that edit. ' +
      'When there is no exact match, lines are matched ignoring indentation and runs of whitespace, the new text is re-indented to fit, and the result says so. ' +
      'Line endings (LF or CRLF), a byte-order mark and the presence or absence of a final newline are kept. Use dryRun: true to preview the diff without writing. ' +
      `The write is atomic. Files up to ${MAX_EDIT_BYTES / (1024 * 1024)} MiB. Only works within allowed directories.`,
    input: z.object({
      path: z.string().describe('Text file to edit'),
      edits: z.array(editInput).min(1).describe('Replacements, applied in order'),
      dryRun: z.boolean().default(false).describe('Preview the diff without changing the file'),
    }),
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

interface EditOutcome {
  /** The file's text with LF line endings and without a BOM (what the diff compares). */
  before: string;
  after: string;
  crlf: boolean;
  results: EditResult[];
  /** Restores the file's BOM and line endings. */
  encode(text: string): string;
}

/**
 * Applies the edits to the file's text. Matching happens on LF text; a file whose every line
 * ends in CRLF is converted back afterwards, and a mixed file is left mixed (its lines are
 * compared with trailing whitespace ignored in the tolerant pass, so a stray CR does not hide a
 * match).
 */
export function applyEdits(original: string, edits: readonly Edit[], userPath: string): EditOutcome {
  const bom = original.startsWith('\uFEFF');
  const body = bom ? original.slice(1) : original;
  const crlf = body.includes('\r\n') && !/(^|[^\r])\n/.test(body);
  const before = crlf ? body.replace(/\r\n/g, '\n') : body;
  let text = before;
  const results: EditResult[] = [];
  edits.forEach((edit, index) => {
    const number = index + 1;
    const oldText = edit.oldText.replace(/\r\n/g, '\n');
    const newText = edit.newText.replace(/\r\n/g, '\n');
    if (oldText.length === 0) {
      throw ToolError.invalidArgument(`Edit #${number}: oldText is empty. Give the text to replace, or use write_file to write a whole file.`);
    }
    const exact = findAll(text, oldText);
    if (exact.length > 0) {
      if (exact.length > 1 && edit.replaceAll !== true) throw ambiguous(number, userPath, exact.map((at) => lineOf(text, at)));
      const lines = exact.map((at) => lineOf(text, at));
      text = edit.replaceAll === true ? replaceAt(text, exact, oldText.length, newText) : replaceAt(text, [exact[0]!], oldText.length, newText);
      results.push({ edit: number, replacements: edit.replaceAll === true ? exact.length : 1, matching: 'exact', lines });
      return;
    }
    const tolerant = tolerantReplace(text, oldText, newText, edit.replaceAll === true, number, userPath);
    if (!tolerant) {
      const firstLine = oldText.split('\n').find((line) => line.trim().length > 0) ?? oldText;
      const shown = firstLine.trim().length > 80 ? `${firstLine.trim().slice(0, 77)}...` : firstLine.trim();
      throw ToolError.notFound(
        `Edit #${number}: oldText (starting ${JSON.stringify(shown)}) was not found in ${userPath}, not even ignoring indentation and whitespace. ` +
          `Read the file again and copy the text exactly${number > 1 ? ' (earlier edits in this call have already been applied when this one runs)' : ''}. No changes were made.`,
      );
    }
    text = tolerant.text;
    results.push({ edit: number, replacements: tolerant.lines.length, matching: 'whitespace-tolerant', lines: tolerant.lines });
  });
  return {
    before,
    after: text,
    crlf,
    results,
    encode: (value) => (bom ? '\uFEFF' : '') + (crlf ? value.replace(/\n/g, '\r\n') : value),
  };
}

function ambiguous(number: number, userPath: string, lines: number[]): ToolError {
  const shown = lines.length > 10 ? `${lines.slice(0, 10).join(', ')}, ...` : lines.join(', ');
  return ToolError.conflict(
    `Edit #${number}: oldText occurs ${lines.length} times in ${userPath} (at lines ${shown}). ` +
      `Include more surrounding lines to make it unique, or set replaceAll: true on this edit to replace all ${lines.length}. No changes were made.`,
  );
}

/** Start offsets of the non-overlapping occurrences of `needle`. */
function findAll(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + needle.length)) found.push(at);
  return found;
}

function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function replaceAt(text: string, offsets: readonly number[], length: number, replacement: string): string {
  const parts: string[] = [];
  let last = 0;
  for (const at of offsets) {
    parts.push(text.slice(last, at), replacement);
    last = at + length;
  }
  parts.push(text.slice(last));
  return parts.join('');
}

const normalizeWhitespace = (line: string): string => line.trim().replace(/\s+/g, ' ');
const indentOf = (line: string): string => /^[ \t]*/.exec(line)![0];

/**
 * The fallback: compares whole lines with indentation and runs of whitespace ignored, and
 * replaces the matched lines with the new text shifted from oldText's indentation to the file's.
 */
function tolerantReplace(
  text: string,
  oldText: string,
  newText: string,
  replaceAll: boolean,
  number: number,
  userPath: string,
): { text: string; lines: number[] } | undefined {
  const oldLines = oldText.split('\n');
  if (oldLines.length > 1 && oldLines[oldLines.length - 1] === '') oldLines.pop();
  const wanted = oldLines.map(normalizeWhitespace);
  const anchor = wanted.findIndex((line) => line.length > 0);
  if (anchor === -1) return undefined;

  const fileLines = text.split('\n');
  // A text ending in a newline splits into a last empty string that is not a line of the file.
  const lineCount = text.endsWith('\n') ? fileLines.length - 1 : fileLines.length;
  const starts: number[] = [];
  for (let i = 0; i + wanted.length <= lineCount; i++) {
    let matches = true;
    for (let j = 0; j < wanted.length; j++) {
      if (normalizeWhitespace(fileLines[i + j]!) !== wanted[j]) {
        matches = false;
        break;
      }
    }
    if (matches) {
      starts.push(i);
      i += wanted.length - 1;
    }
  }
  if (starts.length === 0) return undefined;
  if (starts.length > 1 && !replaceAll) throw ambiguous(number, userPath, starts.map((i) => i + 1));
  const chosen = replaceAll ? starts : [starts[0]!];

  const replacementLines = newText.length === 0 ? [] : newText.replace(/\n$/, '').split('\n');
  const editIndent = indentOf(oldLines[anchor]!);
  // Splice from the end so earlier line numbers stay valid.
  for (const start of [...chosen].reverse()) {
    const fileIndent = indentOf(fileLines[start + anchor]!);
    const reindented = replacementLines.map((line) => {
      if (line.trim().length === 0) return '';
      if (line.startsWith(editIndent)) return fileIndent + line.slice(editIndent.length);
      return fileIndent + line.trimStart();
    });
    fileLines.splice(start, wanted.length, ...reindented);
  }
  return { text: fileLines.join('\n'), lines: chosen.map((i) => i + 1) };
}
