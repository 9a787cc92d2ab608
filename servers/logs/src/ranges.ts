import { throwIfCancelled } from '@suite/shared';
import type { OpenedLog } from './access.js';
import { NEWLINE, countNewlines, gzipSource, plainSource, splitLines, type RawSource } from './chunks.js';
import { parserFor, type FormatSpec, type LineParser } from './formats/parsers.js';

/**
 * A part of a log by line numbers or by time. Lines are counted from the start (at memchr speed,
 * without decoding what is skipped); a time range in a plain file is found by bisection over byte
 * offsets, since logs are written in time order, then read forward.
 */

export interface RangeOptions {
  spec: FormatSpec;
  maxLines: number;
  maxBytes: number;
  signal: AbortSignal;
  deadline: number;
}

export interface RangeResult {
  lines: string[];
  /** Line number of lines[0] (1-based); undefined when nothing was returned. */
  firstLine: number | undefined;
  /** The range goes on past what was returned (maxLines or maxBytes). */
  more: boolean;
  /** The file has fewer lines than asked for / nothing in the time range. */
  reachedEnd: boolean;
  /** The time budget stopped the read. */
  timedOut: boolean;
}

function sourceOf(log: OpenedLog, start = 0): RawSource {
  return log.compressed ? gzipSource(log.handle.fd) : plainSource(log.handle.fd, { start });
}

class Collector {
  readonly lines: string[] = [];
  private bytes = 0;
  more = false;
  constructor(private readonly options: RangeOptions) {}
  /** False once full (the line is then not taken). */
  add(line: string): boolean {
    const size = Buffer.byteLength(line) + 1;
    if (this.lines.length >= this.options.maxLines || (this.bytes + size > this.options.maxBytes && this.lines.length > 0)) {
      this.more = true;
      return false;
    }
    this.bytes += size;
    this.lines.push(size > this.options.maxBytes ? `${line.slice(0, this.options.maxBytes)}…` : line);
    return true;
  }
}

/** Lines [startLine, endLine] (1-based, inclusive). */
export async function readLineRange(log: OpenedLog, startLine: number, endLine: number, options: RangeOptions): Promise<RangeResult> {
  const out = new Collector(options);
  let lineNo = 1;
  let timedOut = false;
  let reachedEnd = true;
  for await (const chunk of sourceOf(log).lineChunks()) {
    throwIfCancelled(options.signal);
    const inChunk = countNewlines(chunk.bytes) + (chunk.bytes[chunk.bytes.length - 1] === NEWLINE ? 0 : 1);
    if (lineNo + inChunk <= startLine) {
      lineNo += inChunk;
    } else {
      const lines = splitLines(chunk.bytes.toString('utf8'));
      let stop = false;
      for (const line of lines) {
        if (lineNo > endLine) {
          stop = true;
          reachedEnd = false;
          break;
        }
        if (lineNo >= startLine && !out.add(line)) {
          stop = true;
          reachedEnd = false;
          break;
        }
        lineNo++;
      }
      if (stop) break;
    }
    if (Date.now() > options.deadline) {
      timedOut = true;
      reachedEnd = false;
      break;
    }
  }
  return { lines: out.lines, firstLine: out.lines.length > 0 ? startLine : undefined, more: out.more, reachedEnd, timedOut };
}

/** The time of the first entry that starts in [offset, offset + window), and where its line starts. */
async function firstTimedHead(log: OpenedLog, offset: number, parser: LineParser, window: number): Promise<{ time: number; offset: number } | undefined> {
  const length = Math.min(window, log.size - offset);
  if (length <= 0) return undefined;
  const buffer = Buffer.allocUnsafe(length);
  const { bytesRead } = await log.handle.read(buffer, 0, length, offset);
  let start = 0;
  // Not at the start of a line: skip to the next one.
  if (offset > 0) {
    const before = Buffer.alloc(1);
    await log.handle.read(before, 0, 1, offset - 1);
    if (before[0] !== NEWLINE) {
      const nl = buffer.indexOf(NEWLINE);
      if (nl === -1 || nl >= bytesRead) return undefined;
      start = nl + 1;
    }
  }
  while (start < bytesRead) {
    const nl = buffer.indexOf(NEWLINE, start);
    // The last, incomplete line of the window is not looked at.
    if (nl === -1 || nl >= bytesRead) return undefined;
    const head = parser.head(buffer.toString('utf8', start, nl).replace(/\r$/, ''));
    if (head?.time !== undefined) return { time: head.time, offset: offset + start };
    start = nl + 1;
  }
  return undefined;
}

/**
 * A byte offset at or before the first entry at or after `since`: bisection, each probe reading
 * the first timed entry after the midpoint (a window that grows up to 1 MiB when the midpoint
 * falls in a long stack trace).
 */
async function offsetBefore(log: OpenedLog, since: number, parser: LineParser, signal: AbortSignal): Promise<number> {
  let lo = 0;
  let hi = log.size;
  while (hi - lo > 64 * 1024) {
    throwIfCancelled(signal);
    const mid = Math.floor((lo + hi) / 2);
    let probe: { time: number; offset: number } | undefined;
    for (let window = 64 * 1024; window <= 1024 * 1024 && !probe; window *= 4) probe = await firstTimedHead(log, mid, parser, window);
    if (probe === undefined || probe.time >= since) hi = mid;
    else lo = probe.offset;
  }
  return lo;
}

/** Entries whose time is in [since, until], with their continuation lines. */
export async function readTimeRange(log: OpenedLog, since: number | undefined, until: number | undefined, options: RangeOptions): Promise<RangeResult> {
  const parser = parserFor(options.spec);
  const out = new Collector(options);
  let start = 0;
  let lineNo = 1;
  if (!log.compressed && since !== undefined) {
    start = await offsetBefore(log, since, parser, options.signal);
    // Line numbers: count what the bisection skipped, without decoding it.
    for await (const chunk of plainSource(log.handle.fd, { end: start }).lineChunks()) {
      throwIfCancelled(options.signal);
      lineNo += countNewlines(chunk.bytes);
    }
  }
  let firstLine: number | undefined;
  let inRange = false;
  let timedOut = false;
  let reachedEnd = true;
  outer: for await (const chunk of sourceOf(log, start).lineChunks()) {
    throwIfCancelled(options.signal);
    for (const line of splitLines(chunk.bytes.toString('utf8'))) {
      const head = parser.head(line);
      if (head !== undefined) {
        const t = head.time;
        if (t !== undefined && until !== undefined && t > until) {
          reachedEnd = false;
          break outer;
        }
        inRange = t !== undefined && (since === undefined || t >= since);
      }
      if (inRange) {
        if (!out.add(line)) {
          reachedEnd = false;
          break outer;
        }
        firstLine ??= lineNo;
      }
      lineNo++;
    }
    if (Date.now() > options.deadline) {
      timedOut = true;
      reachedEnd = false;
      break;
    }
  }
  return { lines: out.lines, firstLine, more: out.more, reachedEnd, timedOut };
}
