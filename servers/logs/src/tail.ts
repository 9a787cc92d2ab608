import type { FileHandle } from 'node:fs/promises';
import { throwIfCancelled } from '@suite/shared';
import type { OpenedLog } from './access.js';
import { MAX_LINE_BYTES, NEWLINE, countNewlines, gzipSource, splitLines, utf8Boundary } from './chunks.js';
import { fieldsMatch, type FieldFilter } from './fields.js';
import { CriJoiner, MAX_JOINED_BYTES, criFragment, joinsFragments, type CriStream, type JoinedEntry } from './formats/cri.js';
import { parserFor, type FormatSpec, type LineParser } from './formats/parsers.js';
import { atLeast, type Level } from './levels.js';

/**
 * The end of a log, read backwards from its end in chunks: the time it takes depends on what is
 * returned, not on the size of the file. Lines are cut out of the bytes at newlines and only then
 * decoded, so a multi-byte UTF-8 character that straddles two chunks is never split (0x0A never
 * occurs inside one). With a filter, lines are grouped into entries (a stack trace stays with the
 * line that starts it) and the last matching entries are returned.
 */

const BACKWARD_CHUNK = 64 * 1024;

async function readFully(handle: FileHandle, buffer: Buffer, position: number): Promise<number> {
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, position + filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled;
}

function decodeLine(data: Buffer, start: number, end: number): string {
  const text = data.toString('utf8', start, end);
  return text.endsWith('\r') ? text.slice(0, -1) : text;
}

export interface BackwardLine {
  text: string;
  /** Byte offset of the line's start in the file. */
  offset: number;
}

/**
 * The lines before `end`, last first. A newline that ends the file does not make an empty last
 * line. A line longer than MAX_LINE_BYTES comes out in pieces (bounded memory).
 */
export async function* linesBackward(handle: FileHandle, end: number, chunkBytes = BACKWARD_CHUNK): AsyncGenerator<BackwardLine> {
  let position = end;
  let carry: Buffer | undefined;
  let atEnd = true;
  while (position > 0) {
    const length = Math.min(chunkBytes, position);
    position -= length;
    const buffer = Buffer.allocUnsafe(length);
    const n = await readFully(handle, buffer, position);
    // The file shrank under us (truncated): what is left is read as it is.
    const read = n === length ? buffer : buffer.subarray(0, n);
    const data = carry ? Buffer.concat([read, carry]) : read;
    let lineEnd = data.length;
    if (atEnd) {
      atEnd = false;
      if (lineEnd > 0 && data[lineEnd - 1] === NEWLINE) lineEnd--;
    }
    let nl = lineEnd > 0 ? data.lastIndexOf(NEWLINE, lineEnd - 1) : -1;
    while (nl !== -1) {
      yield { text: decodeLine(data, nl + 1, lineEnd), offset: position + nl + 1 };
      lineEnd = nl;
      nl = lineEnd > 0 ? data.lastIndexOf(NEWLINE, lineEnd - 1) : -1;
    }
    carry = data.subarray(0, lineEnd);
    if (carry.length > MAX_LINE_BYTES) {
      const start = utf8Boundary(carry, carry.length - MAX_LINE_BYTES);
      yield { text: decodeLine(carry, start, carry.length), offset: position + start };
      carry = Buffer.from(carry.subarray(0, start));
    }
  }
  if (carry !== undefined) yield { text: decodeLine(carry, 0, carry.length), offset: 0 };
}

export interface EntryFilter {
  minLevel?: Level;
  since?: number;
  /** Case-insensitive text that one of the entry's lines contains. */
  grep?: string;
  /** Filters on the entry's fields (JSON lines, logfmt). */
  fields?: FieldFilter[];
}

export function hasFilter(filter: EntryFilter): boolean {
  return filter.minLevel !== undefined || filter.since !== undefined || (filter.grep !== undefined && filter.grep.length > 0) || (filter.fields !== undefined && filter.fields.length > 0);
}

export interface TailOptions {
  /** Lines without a filter, entries with one. */
  count: number;
  maxBytes: number;
  filter: EntryFilter;
  spec: FormatSpec;
  signal: AbortSignal;
  deadline: number;
  /** A filtered tail gives up after reading this much backwards. */
  maxScanBytes: number;
}

export interface TailResult {
  lines: string[];
  /** The same lines grouped by entry (one line per group without a filter), oldest first. */
  groups: string[][];
  /** The time of each group's entry, when known (with a filter). */
  times: (number | undefined)[];
  /** Entries returned (equal to lines.length without a filter). */
  entries: number;
  /** The byte cap dropped older lines (or cut the one line returned). */
  cutByBytes: boolean;
  /** Everything from the start of the file was looked at. */
  reachedStart: boolean;
  /**
   * The end of the file was read. False only for a .gz file whose decompression did not reach its
   * end within the time budget: no lines are returned then, since they would not be the last ones.
   */
  reachedEnd: boolean;
  /** Lines decompressed before a .gz tail stopped short of the end. */
  linesRead?: number;
  /** A filtered tail stopped before finding `count` entries: the time budget or the scan cap. */
  stoppedEarly?: 'time-budget' | 'scan-limit';
  scannedBytes: number;
}

function clipToBytes(line: string, maxBytes: number): string {
  if (Buffer.byteLength(line) <= maxBytes) return line;
  const bytes = Buffer.from(line);
  // Room for the ellipsis (3 bytes); then forward to the start of a character.
  let start = bytes.length - maxBytes + 3;
  while (start < bytes.length && ((bytes[start] as number) & 0xc0) === 0x80) start++;
  return `…${bytes.toString('utf8', start)}`;
}

/**
 * Lines grouped into entries as they are seen backwards: continuation lines wait for the line that
 * starts them. A runaway "entry" (no start in sight) keeps only its lines nearest the start, up to
 * `maxBytes`: it could not be returned whole anyway, and memory stays bounded.
 */
class BackwardEntries {
  private continuation: string[] = [];
  private bytes = 0;
  constructor(
    private readonly parser: LineParser,
    private readonly maxBytes: number,
  ) {}

  /** Feeds one line (last first); returns the entry it completes, in file order, with its head. */
  push(line: string): { lines: string[]; head: ReturnType<LineParser['head']> } | undefined {
    const head = this.parser.head(line);
    if (head === undefined) {
      this.continuation.push(line);
      this.bytes += line.length;
      while (this.bytes > this.maxBytes && this.continuation.length > 1) this.bytes -= (this.continuation.shift() as string).length;
      return undefined;
    }
    const lines = [line, ...this.continuation.reverse()];
    this.continuation = [];
    this.bytes = 0;
    return { lines, head };
  }

  /** Lines before the first entry start of the file. */
  rest(): string[] {
    const lines = this.continuation.reverse();
    this.continuation = [];
    this.bytes = 0;
    return lines;
  }
}

export function entryMatches(lines: readonly string[], head: ReturnType<LineParser['head']>, filter: EntryFilter): boolean {
  if (filter.minLevel !== undefined && !atLeast(head?.level, filter.minLevel)) return false;
  if (filter.since !== undefined && (head?.time === undefined || head.time < filter.since)) return false;
  if (filter.fields && filter.fields.length > 0 && !fieldsMatch(head?.record, filter.fields)) return false;
  if (filter.grep) {
    const needle = filter.grep.toLowerCase();
    if (!lines.some((l) => l.toLowerCase().includes(needle))) return false;
  }
  return true;
}

/** How many entries older than `since` in a row end a backward scan (logs are nearly in order). */
const OLDER_STREAK = 50;

export async function tailPlain(log: OpenedLog, options: TailOptions): Promise<TailResult> {
  const filtered = hasFilter(options.filter);
  const picked: string[][] = [];
  const times: (number | undefined)[] = [];
  let bytes = 0;
  let cutByBytes = false;
  let reachedStart = true;
  let stoppedEarly: TailResult['stoppedEarly'];
  let scanned = 0;
  let seen = 0;
  const take = (lines: string[], time?: number): boolean => {
    const size = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    if (bytes + size > options.maxBytes) {
      cutByBytes = true;
      if (picked.length === 0) {
        picked.push(lines.map((l) => clipToBytes(l, options.maxBytes)));
        times.push(time);
      }
      return false;
    }
    bytes += size;
    picked.push(lines);
    times.push(time);
    return picked.length < options.count;
  };

  const entries = filtered ? new BackwardEntries(parserFor(options.spec), options.maxBytes) : undefined;
  let olderStreak = 0;
  for await (const line of linesBackward(log.handle, log.size)) {
    scanned = log.size - line.offset;
    if ((++seen & 1023) === 0) {
      throwIfCancelled(options.signal);
      if (Date.now() > options.deadline) stoppedEarly = 'time-budget';
      else if (filtered && scanned > options.maxScanBytes) stoppedEarly = 'scan-limit';
      if (stoppedEarly) {
        reachedStart = false;
        break;
      }
    }
    if (!entries) {
      if (!take([line.text])) {
        reachedStart = line.offset === 0;
        break;
      }
      continue;
    }
    const entry = entries.push(line.text);
    if (!entry) continue;
    if (entryMatches(entry.lines, entry.head, options.filter)) {
      olderStreak = 0;
      if (!take(entry.lines, entry.head?.time)) {
        reachedStart = line.offset === 0;
        break;
      }
    } else if (options.filter.since !== undefined && entry.head?.time !== undefined && entry.head.time < options.filter.since) {
      if (++olderStreak >= OLDER_STREAK) {
        reachedStart = false;
        break;
      }
    }
  }
  if (entries && reachedStart && !stoppedEarly && picked.length < options.count) {
    const orphan = entries.rest();
    if (orphan.length > 0 && entryMatches(orphan, undefined, options.filter)) take(orphan);
  }
  picked.reverse();
  times.reverse();
  return { lines: picked.flat(), groups: picked, times, entries: picked.length, cutByBytes, reachedStart, reachedEnd: true, scannedBytes: scanned, ...(stoppedEarly ? { stoppedEarly } : {}) };
}

/**
 * The end of a .gz log: it can only be read from the start. Without a filter, the raw chunks
 * stream through a window that keeps just enough of the newest ones (no line is decoded until the
 * end); with one, entries stream through a window of the last matching ones. Memory stays bounded
 * whatever the file. When the time budget runs out before the end, nothing is returned: the lines
 * seen so far are from the middle of the file, and must not pass for its last ones.
 */
export async function tailCompressed(log: OpenedLog, options: TailOptions): Promise<TailResult> {
  // A CRI log's entries are joined from its fragments: read by entries even without a filter.
  const joiner = joinsFragments(options.spec) ? new CriJoiner() : undefined;
  const filtered = hasFilter(options.filter) || joiner !== undefined;
  const parser = parserFor(options.spec);
  // The last entries seen, bounded in count and in bytes (the answer's cap): memory stays bounded whatever the file.
  const window: { lines: string[]; time: number | undefined; size: number }[] = [];
  let windowBytes = 0;
  let current: { lines: string[]; head: ReturnType<LineParser['head']>; size: number } | undefined;
  let linesRead = 0;
  const source = gzipSource(log.handle.fd);
  const keep = (entry: { lines: string[]; head: ReturnType<LineParser['head']>; size: number }): void => {
    if (filtered && !entryMatches(entry.lines, entry.head, options.filter)) return;
    window.push({ lines: entry.lines, time: entry.head?.time, size: entry.size });
    windowBytes += entry.size;
    while (window.length > 1 && (window.length > options.count || windowBytes - (window[0] as { size: number }).size >= options.maxBytes)) {
      windowBytes -= (window.shift() as { size: number }).size;
    }
  };
  // Unfiltered: the newest chunks (each ends at a newline) that hold more than `count` lines or more than maxBytes.
  const chunks: { bytes: Buffer; lines: number }[] = [];
  let chunkBytes = 0;
  let chunkLines = 0;
  for await (const chunk of source.lineChunks()) {
    throwIfCancelled(options.signal);
    if (!filtered) {
      const bytes = Buffer.from(chunk.bytes);
      const lines = countNewlines(bytes);
      linesRead += lines;
      chunks.push({ bytes, lines });
      chunkBytes += bytes.length;
      chunkLines += lines;
      for (let oldest = chunks[0]; chunks.length > 1 && oldest && (chunkLines - oldest.lines > options.count || chunkBytes - oldest.bytes.length > options.maxBytes); oldest = chunks[0]) {
        chunks.shift();
        chunkBytes -= oldest.bytes.length;
        chunkLines -= oldest.lines;
      }
    } else {
      for (const line of splitLines(chunk.bytes.toString('utf8'))) {
        linesRead++;
        if (joiner) {
          const joined = joiner.push(line);
          if (joined) keep({ lines: [joined.line], head: parser.head(joined.line), size: joined.line.length + 1 });
          continue;
        }
        const head = parser.head(line);
        if (head === undefined && current) {
          // An entry longer than the answer can hold keeps its start.
          if (current.size < options.maxBytes) {
            current.lines.push(line);
            current.size += line.length + 1;
          }
          continue;
        }
        if (current) keep(current);
        current = { lines: [line], head, size: line.length + 1 };
      }
    }
    if (Date.now() > options.deadline) {
      return { lines: [], groups: [], times: [], entries: 0, cutByBytes: false, reachedStart: false, reachedEnd: false, linesRead, stoppedEarly: 'time-budget', scannedBytes: source.consumed() };
    }
  }
  if (!filtered) {
    const all = splitLines(Buffer.concat(chunks.map((c) => c.bytes)).toString('utf8'));
    for (const line of all.slice(-options.count)) keep({ lines: [line], head: undefined, size: line.length + 1 });
  } else if (current) keep(current);
  for (const joined of joiner?.flush() ?? []) keep({ lines: [joined.line], head: parser.head(joined.line), size: joined.line.length + 1 });
  // Apply the byte cap from the newest entry back, as for a plain file.
  const picked: string[][] = [];
  const times: (number | undefined)[] = [];
  let bytes = 0;
  let cutByBytes = false;
  for (let i = window.length - 1; i >= 0; i--) {
    const { lines, time } = window[i] as { lines: string[]; time: number | undefined; size: number };
    const size = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    if (bytes + size > options.maxBytes) {
      cutByBytes = true;
      if (picked.length === 0) {
        picked.push(lines.map((l) => clipToBytes(l, options.maxBytes)));
        times.push(time);
      }
      break;
    }
    bytes += size;
    picked.push(lines);
    times.push(time);
  }
  picked.reverse();
  times.reverse();
  return { lines: picked.flat(), groups: picked, times, entries: picked.length, cutByBytes, reachedStart: true, reachedEnd: true, scannedBytes: source.consumed() };
}

export function tailLog(log: OpenedLog, options: TailOptions): Promise<TailResult> {
  if (log.compressed) return tailCompressed(log, options);
  return joinsFragments(options.spec) ? tailJoined(log, options) : tailPlain(log, options);
}

interface Gathered {
  /** Fragments, the newest first (they are met backwards). */
  parts: string[];
  bytes: number;
  /** Offset of the entry's last line: entries are ordered by where they end. */
  end: number;
  /** Offset of its earliest fragment read so far. */
  oldest: number;
  cut: boolean;
  unfinished: boolean;
  /** The backward read stopped before the entry's start. */
  early?: boolean;
}

/**
 * The end of a CRI log whose partial lines are joined, read backwards: each stream's fragments
 * gather until the line before them of that stream is not a partial one (or the file starts); a
 * gathered entry then is whole, is joined, and kept if it passes the filter. Entries are ordered
 * by where they end (the order a follower sees them finish). Memory per stream is bounded by
 * MAX_JOINED_BYTES: a partial line that never ends keeps its start and says it was cut.
 */
async function tailJoined(log: OpenedLog, options: TailOptions): Promise<TailResult> {
  const parser = parserFor(options.spec);
  const kept: { line: string; time: number | undefined; end: number }[] = [];
  const open = new Map<CriStream, Gathered>();
  let scanned = 0;
  let seen = 0;
  let stoppedEarly: TailResult['stoppedEarly'];
  let reachedStart = true;
  const consider = (line: string, end: number): void => {
    const head = parser.head(line);
    if (!entryMatches([line], head, options.filter)) return;
    kept.push({ line, time: head?.time, end });
    if (kept.length >= 2 * options.count + 64) trim();
  };
  // Only the newest entries that fit in the answer can be returned: memory stays bounded by count and bytes.
  const trim = (): void => {
    kept.sort((a, b) => b.end - a.end);
    let bytes = 0;
    let n = 0;
    while (n < kept.length && n < options.count && bytes <= options.maxBytes) bytes += Buffer.byteLength((kept[n++] as { line: string }).line) + 1;
    kept.length = n;
  };
  const close = (g: Gathered): void => {
    const joiner = new CriJoiner();
    let joined: JoinedEntry | undefined;
    for (let i = g.parts.length - 1; i >= 0; i--) joined = joiner.push(g.parts[i] as string) ?? joined;
    const line = joined?.line ?? joiner.flush()[0]?.line ?? '';
    const marks = [...(g.cut ? [`cut: the entry's end did not fit in ${MAX_JOINED_BYTES} bytes`] : []), ...(g.early ? ['its start is before the part read'] : [])];
    consider(marks.length > 0 ? `${line} [${marks.join('; ')}]` : line, g.end);
  };
  // Enough entries once `count` are kept and no stream still gathers one that ends after the count-th newest.
  const enough = (): boolean => {
    if (kept.length < options.count) return false;
    const newest = [...kept].sort((a, b) => b.end - a.end);
    const bar = (newest[options.count - 1] as { end: number }).end;
    for (const g of open.values()) if (g.end > bar) return false;
    return true;
  };
  for await (const line of linesBackward(log.handle, log.size)) {
    scanned = log.size - line.offset;
    if ((++seen & 1023) === 0) {
      throwIfCancelled(options.signal);
      if (Date.now() > options.deadline) stoppedEarly = 'time-budget';
      // Unfiltered too: fragments that never end could otherwise keep a tail reading back to the start.
      else if (scanned > options.maxScanBytes) stoppedEarly = 'scan-limit';
      if (stoppedEarly) {
        reachedStart = false;
        break;
      }
    }
    const fragment = criFragment(line.text);
    if (!fragment) consider(line.text, line.offset);
    else {
      const g = open.get(fragment.stream);
      if (g && fragment.partial) {
        g.oldest = line.offset;
        g.parts.push(line.text);
        g.bytes += line.text.length;
        // Keep the entry's start: the newest fragments go first.
        while (g.bytes > MAX_JOINED_BYTES && g.parts.length > 1) {
          g.bytes -= (g.parts.shift() as string).length;
          g.cut = true;
        }
      } else {
        if (g) close(g);
        open.set(fragment.stream, { parts: [line.text], bytes: line.text.length, end: line.offset, oldest: line.offset, cut: false, unfinished: fragment.partial });
      }
    }
    // A runtime writes a line's fragments one after another, with at most a few lines of the other stream between them:
    // an entry with no line of its stream in the MiB before it is whole (a rare stream does not make the tail read back far).
    for (const [stream, g] of open) {
      if (g.oldest - line.offset > MAX_JOINED_BYTES) {
        open.delete(stream);
        close(g);
      }
    }
    if (enough()) {
      reachedStart = line.offset === 0;
      break;
    }
  }
  // At the start of the file what is gathered is whole; stopped short, it may have begun earlier, and says so.
  for (const g of open.values()) close(reachedStart ? g : { ...g, early: true });
  kept.sort((a, b) => a.end - b.end);
  const picked: string[][] = [];
  const times: (number | undefined)[] = [];
  let bytes = 0;
  let cutByBytes = false;
  for (let i = kept.length - 1; i >= 0 && picked.length < options.count; i--) {
    const { line, time } = kept[i] as { line: string; time: number | undefined };
    const size = Buffer.byteLength(line) + 1;
    if (bytes + size > options.maxBytes) {
      cutByBytes = true;
      if (picked.length === 0) {
        picked.push([clipToBytes(line, options.maxBytes)]);
        times.push(time);
      }
      break;
    }
    bytes += size;
    picked.push([line]);
    times.push(time);
  }
  picked.reverse();
  times.reverse();
  return { lines: picked.flat(), groups: picked, times, entries: picked.length, cutByBytes, reachedStart, reachedEnd: true, scannedBytes: scanned, ...(stoppedEarly ? { stoppedEarly } : {}) };
}
