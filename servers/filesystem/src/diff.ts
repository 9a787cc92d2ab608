/**
 * Line-based unified diffs (the format of `diff -u` and `git diff`), for edit_file's preview.
 *
 * Common leading and trailing lines are trimmed first, then Myers' O(ND) algorithm runs on what
 * is left, so an edit in a large file costs time proportional to the file plus the square of the
 * change rather than the square of the file. A change larger than `maxEditDistance` falls back to
 * one block of removed lines followed by one block of added lines: still a correct patch, just
 * not a minimal one.
 */

export interface DiffOptions {
  /** Unchanged lines shown around each change. */
  context?: number;
  /** Above this many inserted plus deleted lines, stop looking for a minimal diff. */
  maxEditDistance?: number;
}

export interface DiffStats {
  added: number;
  removed: number;
  hunks: number;
}

interface SplitText {
  lines: string[];
  /** The last line ends without a newline. */
  missingFinalNewline: boolean;
}

enum Op {
  Equal = 0,
  Delete = 1,
  Insert = 2,
}

function splitLines(text: string): SplitText {
  if (text.length === 0) return { lines: [], missingFinalNewline: false };
  const lines = text.split('\n');
  const missingFinalNewline = lines[lines.length - 1] !== '';
  if (!missingFinalNewline) lines.pop();
  return { lines, missingFinalNewline };
}

/** Interns lines as integers so the inner loop compares numbers, not strings. */
function intern(old: SplitText, next: SplitText): { a: Int32Array; b: Int32Array } {
  const ids = new Map<string, number>();
  const idOf = (line: string): number => {
    let id = ids.get(line);
    if (id === undefined) {
      id = ids.size;
      ids.set(line, id);
    }
    return id;
  };
  // A last line without a newline differs from the same text with one, as in diff(1).
  const encode = (s: SplitText): Int32Array =>
    Int32Array.from(s.lines, (line, i) => idOf(i === s.lines.length - 1 && s.missingFinalNewline ? `${line}\u0000no-eol` : line));
  return { a: encode(old), b: encode(next) };
}

/** Myers' greedy shortest edit script over a[lo..hiA) and b[lo..hiB); undefined when too far apart. */
function myers(a: Int32Array, b: Int32Array, limit: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    if (d > limit) return undefined;
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, d, n, m);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], depth: number, n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = depth; d > 0; d--) {
    const prev = trace[d]!;
    const at = (k: number): number => prev[k + d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(Op.Equal);
      x--;
      y--;
    }
    if (x === prevX) {
      ops.push(Op.Insert);
      y--;
    } else {
      ops.push(Op.Delete);
      x--;
    }
  }
  while (x > 0 && y > 0) {
    ops.push(Op.Equal);
    x--;
    y--;
  }
  return ops.reverse();
}

function editScript(a: Int32Array, b: Int32Array, limit: number): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const middleA = a.subarray(start, endA);
  const middleB = b.subarray(start, endB);
  const middle =
    myers(middleA, middleB, limit) ?? [...new Array<Op>(middleA.length).fill(Op.Delete), ...new Array<Op>(middleB.length).fill(Op.Insert)];
  const ops = new Array<Op>(start).fill(Op.Equal);
  for (const op of middle) ops.push(op);
  for (let i = endA; i < a.length; i++) ops.push(Op.Equal);
  return ops;
}

function range(start: number, length: number): string {
  // diff(1) convention: an empty range is given as the line before it.
  if (length === 0) return `${start},0`;
  return length === 1 ? `${start + 1}` : `${start + 1},${length}`;
}

/**
 * A unified diff from `oldText` to `newText`, with `---`/`+++` headers naming the file. Returns
 * an empty string when the texts are equal.
 */
export function unifiedDiff(oldText: string, newText: string, oldName: string, newName: string, options: DiffOptions = {}): { diff: string; stats: DiffStats } {
  const context = options.context ?? 3;
  const old = splitLines(oldText);
  const next = splitLines(newText);
  const { a, b } = intern(old, next);
  const ops = editScript(a, b, options.maxEditDistance ?? 2000);

  // Positions (in old and new lines) where each op starts, to cut hunks out of the script.
  const oldAt = new Int32Array(ops.length + 1);
  const newAt = new Int32Array(ops.length + 1);
  for (let i = 0; i < ops.length; i++) {
    oldAt[i + 1] = oldAt[i]! + (ops[i] === Op.Insert ? 0 : 1);
    newAt[i + 1] = newAt[i]! + (ops[i] === Op.Delete ? 0 : 1);
  }

  const out: string[] = [];
  const stats: DiffStats = { added: 0, removed: 0, hunks: 0 };
  let i = 0;
  while (i < ops.length) {
    while (i < ops.length && ops[i] === Op.Equal) i++;
    if (i >= ops.length) break;
    // Extend the hunk while the next change is within 2 * context unchanged lines.
    const hunkStart = Math.max(0, i - context);
    let end = i;
    for (;;) {
      while (end < ops.length && ops[end] !== Op.Equal) end++;
      let gap = end;
      while (gap < ops.length && ops[gap] === Op.Equal) gap++;
      if (gap < ops.length && gap - end <= 2 * context) {
        end = gap;
        continue;
      }
      break;
    }
    const hunkEnd = Math.min(ops.length, end + context);
    if (stats.hunks === 0) out.push(`--- ${oldName}`, `+++ ${newName}`);
    stats.hunks++;
    out.push(`@@ -${range(oldAt[hunkStart]!, oldAt[hunkEnd]! - oldAt[hunkStart]!)} +${range(newAt[hunkStart]!, newAt[hunkEnd]! - newAt[hunkStart]!)} @@`);
    for (let j = hunkStart; j < hunkEnd; j++) {
      const op = ops[j]!;
      let line: string;
      let noEol: boolean;
      if (op === Op.Insert) {
        const index = newAt[j]!;
        line = `+${next.lines[index]}`;
        noEol = next.missingFinalNewline && index === next.lines.length - 1;
        stats.added++;
      } else {
        const index = oldAt[j]!;
        line = `${op === Op.Delete ? '-' : ' '}${old.lines[index]}`;
        noEol = old.missingFinalNewline && index === old.lines.length - 1;
        if (op === Op.Delete) stats.removed++;
      }
      out.push(line);
      if (noEol) out.push('\\ No newline at end of file');
    }
    i = hunkEnd;
  }
  return { diff: out.length > 0 ? `${out.join('\n')}\n` : '', stats };
}
