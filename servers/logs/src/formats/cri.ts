import { MAX_LINE_BYTES, utf8Boundary } from '../chunks.js';
import { parseIsoAt } from '../timestamps.js';

/**
 * Kubernetes' container runtimes cut a line the container wrote into fragments of 16 KiB: every
 * fragment but the last is tagged P (partial), the last F. Fragments of stdout and of stderr
 * interleave independently, so they are joined per stream. A joined entry is written as one CRI
 * line (`<first fragment's time> <stream> F <the texts, concatenated>`) that the CRI parser reads
 * like any other; it stands for all its fragments' lines: line counts stay those of the file.
 * A partial line that never ends is bounded: the joined text stops at MAX_JOINED_BYTES, and the
 * entry says it was cut.
 */

/** The longest joined text kept; the rest of the fragments still count as lines, their text is dropped. */
export const MAX_JOINED_BYTES = MAX_LINE_BYTES;

export type CriStream = 'stdout' | 'stderr';

export interface CriFragment {
  stream: CriStream;
  partial: boolean;
  /** Where the fragment's tag is in its line (what precedes it is the time and the stream). */
  tagAt: number;
  /** Where the fragment's text starts in its line. */
  textStart: number;
}

/** The stream and tag of a CRI line, or undefined for a line that is not one. */
export function criFragment(line: string): CriFragment | undefined {
  const parsed = parseIsoAt(line, 0);
  if (!parsed || line.charCodeAt(parsed.end) !== 32) return undefined;
  const i = parsed.end + 1;
  const stream: CriStream | undefined = line.startsWith('stdout ', i) ? 'stdout' : line.startsWith('stderr ', i) ? 'stderr' : undefined;
  if (!stream) return undefined;
  const tag = line[i + 7];
  if ((tag !== 'F' && tag !== 'P') || (line.length > i + 8 && line.charCodeAt(i + 8) !== 32)) return undefined;
  return { stream, partial: tag === 'P', tagAt: i + 7, textStart: Math.min(line.length, i + 9) };
}

/** A whole entry: a line that is not a fragment, a lone F line, or fragments joined. */
export interface JoinedEntry {
  /** The entry as one line: the joined CRI line, or the line itself. */
  line: string;
  /** Index (in the order lines were fed) of the entry's first line. */
  first: number;
  /** Lines of the file the entry was written in. */
  lines: number;
  /** Its text passed MAX_JOINED_BYTES and was cut there. */
  cut: boolean;
  /** Fragments whose F line never came (the end of what was read, or a rotated copy's end). */
  unfinished: boolean;
}

interface Open {
  prefix: string;
  parts: string[];
  bytes: number;
  first: number;
  lines: number;
  cut: boolean;
}

/** The joined line an entry is shown as: marks say what a reader must know (cut, never finished). */
function joinedLine(open: Open, unfinished: boolean): string {
  const text = open.parts.join('');
  const tag = unfinished ? 'P' : 'F';
  const mark = open.cut ? ` [cut at ${open.bytes} bytes of ${open.lines} fragments]` : '';
  return `${open.prefix}${tag} ${text}${mark}`;
}

/**
 * Joins the fragments of a file read forward. `push` gives the entries a line completes (a line
 * that is not a partial one completes itself, and an F line its stream's fragments); memory is
 * bounded by MAX_JOINED_BYTES per stream.
 */
export class CriJoiner {
  private readonly open = new Map<CriStream, Open>();
  private index = 0;

  constructor(private readonly maxBytes = MAX_JOINED_BYTES) {}

  /** True when fragments wait for their F line. */
  get pending(): boolean {
    return this.open.size > 0;
  }

  /** Index of the first line of the oldest entry still waiting, if any. */
  get oldestPending(): number | undefined {
    let oldest: number | undefined;
    for (const o of this.open.values()) if (oldest === undefined || o.first < oldest) oldest = o.first;
    return oldest;
  }

  /** The streams whose fragments wait for their F line. */
  get waiting(): ReadonlySet<CriStream> {
    return new Set(this.open.keys());
  }

  /** Counts `n` lines that hold no fragment and no F line of a waiting stream, without looking at them. */
  skipWhole(n: number): void {
    this.index += n;
  }

  push(line: string): JoinedEntry | undefined {
    const at = this.index++;
    // Most lines are whole (F) lines of a stream with nothing waiting: told by the tag alone, without parsing the time.
    const space = line.indexOf(' ');
    if (space > 0 && line.charCodeAt(space + 8) === 70 /* F */) {
      const stream = line.startsWith('stdout ', space + 1) ? 'stdout' : line.startsWith('stderr ', space + 1) ? 'stderr' : undefined;
      if (stream !== undefined && !this.open.has(stream)) return { line, first: at, lines: 1, cut: false, unfinished: false };
    }
    const fragment = criFragment(line);
    if (!fragment) return { line, first: at, lines: 1, cut: false, unfinished: false };
    const open = this.open.get(fragment.stream);
    if (!open && !fragment.partial) return { line, first: at, lines: 1, cut: false, unfinished: false };
    const text = line.slice(fragment.textStart);
    const target = open ?? { prefix: line.slice(0, fragment.tagAt), parts: [], bytes: 0, first: at, lines: 0, cut: false };
    target.lines++;
    if (!target.cut) {
      const size = Buffer.byteLength(text);
      if (target.bytes + size <= this.maxBytes) {
        target.parts.push(text);
        target.bytes += size;
      } else {
        const room = this.maxBytes - target.bytes;
        // Cut at the start of a character: `room` characters are at least `room` bytes.
        const head = Buffer.from(text.slice(0, room));
        const piece = head.length <= room ? head.toString('utf8') : head.toString('utf8', 0, utf8Boundary(head, room));
        target.parts.push(piece);
        target.bytes += Buffer.byteLength(piece);
        target.cut = true;
      }
    }
    if (fragment.partial) {
      if (!open) this.open.set(fragment.stream, target);
      return undefined;
    }
    this.open.delete(fragment.stream);
    return { line: joinedLine(target, false), first: target.first, lines: target.lines, cut: target.cut, unfinished: false };
  }

  /** The fragments still waiting (their F never came), oldest first, as entries; the joiner is empty after. */
  flush(): JoinedEntry[] {
    const out = [...this.open.values()]
      .sort((a, b) => a.first - b.first)
      .map((o) => ({ line: joinedLine(o, true), first: o.first, lines: o.lines, cut: o.cut, unfinished: true }));
    this.open.clear();
    return out;
  }
}

/** Lines of a CRI file, in order, as entries in the order of their first lines (fragments left at the end are unfinished). */
export function joinCriLines(lines: readonly string[], maxBytes = MAX_JOINED_BYTES): JoinedEntry[] {
  const joiner = new CriJoiner(maxBytes);
  const out: JoinedEntry[] = [];
  for (const line of lines) {
    const entry = joiner.push(line);
    if (entry) out.push(entry);
  }
  out.push(...joiner.flush());
  return out.sort((a, b) => a.first - b.first);
}

/** True for a format spec whose fragments are joined: CRI, unless the operator's --entry-pattern decides entries. */
export function joinsFragments(spec: { format: string; entryPattern?: string }): boolean {
  return spec.format === 'cri' && spec.entryPattern === undefined;
}

/**
 * Of whole lines read so far, how many can be given now without cutting an entry: those before
 * the first line of the oldest fragments still waiting for their F line. Undefined when nothing
 * waits (or the lines hold no CRI fragment at all).
 */
export function linesBeforePending(lines: readonly string[]): number | undefined {
  const joiner = new CriJoiner(0);
  for (const line of lines) joiner.push(line);
  return joiner.oldestPending;
}
