/**
 * The diff viewer's reading of a diff tool's text answer (no DOM: Node tests check it): the title
 * line, git's diff sections per file (renames, added and deleted files, hunks with line numbers),
 * binary and unmerged files as the server summarises them, the notes of what the budget cut, and
 * side-by-side rows.
 */

export type FileStatus = 'added' | 'deleted' | 'modified' | 'renamed' | 'copied' | 'binary' | 'unmerged';

export interface DiffLine {
  kind: '+' | '-' | ' ' | '\\';
  text: string;
  oldNo?: number;
  newNo?: number;
}

export interface Hunk {
  header: string;
  lines: DiffLine[];
}

export interface FileDiff {
  path: string;
  from?: string;
  status: FileStatus;
  added: number;
  deleted: number;
  hunks: Hunk[];
  /** What the server said instead of or after the diff (a binary file's sizes, a cut). */
  notes: string[];
}

export interface ParsedDiff {
  title: string;
  files: FileDiff[];
  /** The lines of what the budget left out, and other notes. */
  notes: string[];
  /** An answer that is not a diff (a message, a file at a revision): shown as it is. */
  plain: string | undefined;
}

/** git's C-quoted path ("a/x y") or a plain one, without its a/ or b/ prefix. */
function unquote(path: string): string {
  if (!path.startsWith('"')) return path;
  try {
    return JSON.parse(path) as string;
  } catch {
    return path.slice(1, -1);
  }
}

/** The new path of `a/P b/P` (the same path twice when there is no rename, whatever it holds), or a best guess. */
function headerPath(rest: string): string {
  const half = (rest.length - 1) / 2;
  if (Number.isInteger(half) && rest.startsWith('a/') && rest[half] === ' ' && rest.slice(half + 1) === `b/${rest.slice(2, half)}`) return rest.slice(2, half);
  const m = /^("(?:[^"\\]|\\.)*"|\S+) ("(?:[^"\\]|\\.)*"|\S+)$/.exec(rest);
  return m ? unquote(m[2]!).replace(/^b\//, '') : rest;
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseDiff(text: string): ParsedDiff {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const parsed: ParsedDiff = { title: '', files: [], notes: [], plain: undefined };
  let i = 0;
  if (lines[0] !== undefined && !lines[0].startsWith('diff --git ') && /:$/.test(lines[0])) parsed.title = lines[i++]!.slice(0, -1);
  let file: FileDiff | undefined;
  let hunk: Hunk | undefined;
  let oldNo = 0;
  let newNo = 0;
  let preamble: string[] = [];
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith('diff --git ')) {
      file = { path: headerPath(line.slice(11)), status: 'modified', added: 0, deleted: 0, hunks: [], notes: [] };
      parsed.files.push(file);
      hunk = undefined;
      continue;
    }
    if (file && !hunk) {
      if (line.startsWith('new file mode')) file.status = 'added';
      else if (line.startsWith('deleted file mode')) file.status = 'deleted';
      else if (line.startsWith('rename from ')) [file.status, file.from] = ['renamed', line.slice(12)];
      else if (line.startsWith('copy from ')) [file.status, file.from] = ['copied', line.slice(10)];
      else if (line.startsWith('Binary files ')) file.status = 'binary';
      else if (line.startsWith('rename to ')) file.path = line.slice(10);
      // The paths of ---/+++ are unambiguous where the header's are not (a name with spaces).
      // git ends a name holding a space with a tab there.
      else if (line.startsWith('+++ ') && line !== '+++ /dev/null') file.path = unquote(line.slice(4).replace(/\t$/, '')).replace(/^b\//, '');
      else if (line.startsWith('--- ') && line !== '--- /dev/null' && file.status === 'deleted') file.path = unquote(line.slice(4).replace(/\t$/, '')).replace(/^a\//, '');
    }
    const h = HUNK.exec(line);
    if (file && h) {
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      oldNo = Number(h[1]);
      newNo = Number(h[2]);
      continue;
    }
    if (file && hunk && /^[-+ \\]/.test(line) && !line.startsWith('--- a/') && !line.startsWith('+++ b/')) {
      const kind = line[0] as DiffLine['kind'];
      const entry: DiffLine = { kind, text: line.slice(1) };
      if (kind === '-') {
        entry.oldNo = oldNo++;
        file.deleted++;
      } else if (kind === '+') {
        entry.newNo = newNo++;
        file.added++;
      } else if (kind === ' ') {
        entry.oldNo = oldNo++;
        entry.newNo = newNo++;
      }
      hunk.lines.push(entry);
      continue;
    }
    const binary = /^Binary file (.+?)(?: \((added|deleted|modified|renamed|copied|[a-z ]+)\))?: (.*)$/.exec(line);
    if (binary && !line.startsWith('Binary files ')) {
      const [, desc, , sizes] = binary;
      const renamed = / -> /.test(desc!) ? desc!.split(' -> ') : undefined;
      parsed.files.push({ path: renamed ? renamed[1]! : desc!, ...(renamed ? { from: renamed[0]! } : {}), status: 'binary', added: 0, deleted: 0, hunks: [], notes: [`Binary file: ${sizes}`] });
      file = undefined;
      hunk = undefined;
      continue;
    }
    const unmerged = /^Unmerged file (.+?): (.*)$/.exec(line);
    if (unmerged) {
      parsed.files.push({ path: unmerged[1]!, status: 'unmerged', added: 0, deleted: 0, hunks: [], notes: [unmerged[2]!] });
      file = undefined;
      hunk = undefined;
      continue;
    }
    if (line.startsWith('[') && file) {
      file.notes.push(line.replace(/^\[|\]$/g, ''));
      continue;
    }
    if (line.startsWith('#') || line === '') {
      if (line !== '') parsed.notes.push(line.replace(/^#\s?/, ''));
      file = undefined;
      hunk = undefined;
      continue;
    }
    if (!file) preamble.push(line);
  }
  if (parsed.files.length === 0) parsed.plain = text;
  else if (preamble.length > 0) parsed.notes.unshift(...preamble);
  preamble = [];
  return parsed;
}

/** Side by side: context on both sides, a run of deletions paired with the run of additions after it. */
export function sideBySide(hunk: Hunk): { left?: DiffLine; right?: DiffLine }[] {
  const rows: { left?: DiffLine; right?: DiffLine }[] = [];
  const lines = hunk.lines.filter((l) => l.kind !== '\\');
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    if (line.kind === ' ') {
      rows.push({ left: line, right: line });
      i++;
      continue;
    }
    const minus: DiffLine[] = [];
    const plus: DiffLine[] = [];
    while (i < lines.length && lines[i]!.kind === '-') minus.push(lines[i++]!);
    while (i < lines.length && lines[i]!.kind === '+') plus.push(lines[i++]!);
    for (let k = 0; k < Math.max(minus.length, plus.length); k++) rows.push({ ...(minus[k] ? { left: minus[k] } : {}), ...(plus[k] ? { right: plus[k] } : {}) });
  }
  return rows;
}
