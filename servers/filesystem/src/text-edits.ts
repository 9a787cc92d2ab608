import { z } from 'zod';
import { ToolError } from '@suite/shared';

/**
 * What edit_file does to a file's text: exact replacements, with a whitespace-tolerant line match
 * as the fallback, keeping the file's line endings and byte-order mark.
 */

export const editSchema = z.object({
  oldText: z.string().describe('Text to search for: copy it exactly from the file, with enough surrounding lines to be unique'),
  newText: z.string().describe('Text to replace it with'),
  replaceAll: z.boolean().optional().describe('Replace every occurrence instead of failing when oldText occurs more than once'),
});

export const editResultSchema = z.object({
  edit: z.number().int().describe('1-based position of the edit in the request'),
  replacements: z.number().int(),
  matching: z.enum(['exact', 'whitespace-tolerant']),
  lines: z.array(z.number().int()).describe('First line (1-based, in the file as it was when this edit ran) of each replaced occurrence'),
});

export type EditResult = z.output<typeof editResultSchema>;
export type Edit = z.output<typeof editSchema>;

export interface EditOutcome {
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
