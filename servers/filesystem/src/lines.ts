import type { TimeBudget } from '@suite/shared';
import type { ChunkReader } from './verified-open.js';

/**
 * Line-oriented reads over an open file that never load the whole file: forward reads stop as
 * soon as the wanted lines (or the byte cap) are reached, and tail reads go backwards from the
 * end in chunks. Memory use is bounded by the byte cap plus one chunk.
 */

const CHUNK_BYTES = 64 * 1024;
const NEWLINE = 0x0a;
/** The time budget is checked every this many chunks (1 MiB). */
const CHECK_EVERY = 16;

/** A NUL byte turned up in what was read: the file is binary (the caller says so with its own words). */
export class BinaryContentError extends Error {
  constructor() {
    super('binary content');
    this.name = 'BinaryContentError';
  }
}

/** Every byte read is looked at, skipped lines included: a huge sparse file is refused at its first chunk, not scanned. */
function refuseBinary(data: Buffer): void {
  if (data.indexOf(0) !== -1) throw new BinaryContentError();
}

export interface LineSlice {
  text: string;
  /** 1-based number of the first line returned; undefined for tail reads (not counted) or when nothing was returned. */
  firstLine: number | undefined;
  /** How many lines (whole or cut) the text holds. */
  lineCount: number;
  /** The byte cap stopped the read before the lines asked for were complete. */
  cutByBytes: boolean;
  /** Nothing in the file follows the returned text. */
  reachedEnd: boolean;
  /** When the end was reached: the number of lines in the file. */
  totalLines: number | undefined;
}

/** Index just past the last complete UTF-8 character in buf[0..end). */
function utf8SafeEnd(buf: Buffer, end: number): number {
  let i = end;
  // Step back over at most 3 continuation bytes to the lead byte; drop the character if incomplete.
  let back = 0;
  while (i > 0 && back < 4 && ((buf[i - 1] as number) & 0xc0) === 0x80) {
    i--;
    back++;
  }
  if (i === 0) return end;
  const lead = buf[i - 1] as number;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return back + 1 >= need ? end : i - 1;
}

/** Index of the first byte that starts a UTF-8 character at or after `start`. */
function utf8SafeStart(buf: Buffer, start: number): number {
  let i = start;
  while (i < buf.length && i - start < 4 && ((buf[i] as number) & 0xc0) === 0x80) i++;
  return i;
}

function decode(parts: Buffer[], normalizeNewlines: boolean): string {
  const text = Buffer.concat(parts).toString('utf8');
  return normalizeNewlines ? text.replace(/\r\n/g, '\n') : text;
}

export interface ForwardOptions {
  /** 1-based line to start at. */
  startLine: number;
  /** Most lines to return (Infinity for all). */
  maxLines: number;
  maxBytes: number;
  /** File size from fstat; lets the read stop without an extra read at the end. */
  size: number;
  /** Keep the bytes exactly (full reads) instead of dropping the final newline and CRs. */
  exact?: boolean;
  budget?: TimeBudget;
}

/**
 * Reads lines [startLine, startLine + maxLines) from the start of the file. When the byte cap
 * cuts the range, whole lines are kept (a single line longer than the cap is cut at a character
 * boundary).
 */
export async function readLinesForward(reader: ChunkReader, options: ForwardOptions): Promise<LineSlice> {
  const { startLine, maxLines, maxBytes, size } = options;
  const chunk = Buffer.allocUnsafe(Math.max(1, Math.min(CHUNK_BYTES, size + 1)));
  const parts: Buffer[] = [];
  let bytes = 0;
  let lineNo = 1;
  let linesOut = 0;
  let position = 0;
  let cutByBytes = false;
  let done = false;
  let moreAfter = false;
  // Byte length (within `parts`) at the end of the last complete line collected.
  let bytesAtLastLineEnd = 0;
  let linesAtLastLineEnd = 0;
  let partialOpen = false;
  // Whether the last bytes seen so far are a line without its newline yet (collected or not).
  let lastSegmentOpen = false;
  let reads = 0;

  while (!done) {
    if (++reads % CHECK_EVERY === 0) options.budget?.check();
    const bytesRead = await reader.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    refuseBinary(chunk.subarray(0, bytesRead));
    position += bytesRead;
    let i = 0;
    while (i < bytesRead) {
      const nl = chunk.indexOf(NEWLINE, i);
      const hasNewline = nl !== -1 && nl < bytesRead;
      const end = hasNewline ? nl + 1 : bytesRead;
      if (lineNo >= startLine) {
        if (linesOut >= maxLines) {
          moreAfter = true;
          done = true;
          break;
        }
        const segment = chunk.subarray(i, end);
        if (bytes + segment.length > maxBytes) {
          const room = maxBytes - bytes;
          if (room > 0) parts.push(Buffer.from(segment.subarray(0, room)));
          bytes += Math.max(0, room);
          cutByBytes = true;
          partialOpen = true;
          moreAfter = true;
          done = true;
          break;
        }
        parts.push(Buffer.from(segment));
        bytes += segment.length;
        partialOpen = !hasNewline;
        if (hasNewline) {
          linesOut++;
          bytesAtLastLineEnd = bytes;
          linesAtLastLineEnd = linesOut;
        }
      }
      lastSegmentOpen = !hasNewline;
      if (hasNewline) lineNo++;
      i = end;
    }
    if (!done && position >= size && bytesRead < chunk.length) break;
  }

  let lineCount = linesOut;
  let collected = parts;
  if (cutByBytes) {
    const all = Buffer.concat(parts);
    if (linesAtLastLineEnd > 0) {
      collected = [all.subarray(0, bytesAtLastLineEnd)];
      lineCount = linesAtLastLineEnd;
    } else {
      collected = [all.subarray(0, utf8SafeEnd(all, all.length))];
      lineCount = 1;
    }
  } else if (partialOpen) {
    // The file ends without a newline: its last line still counts.
    lineCount++;
  }

  let text = decode(collected, !options.exact);
  if (!options.exact && text.endsWith('\n')) text = text.slice(0, -1);
  const reachedEnd = !moreAfter;
  return {
    text,
    firstLine: lineCount > 0 ? startLine : undefined,
    lineCount,
    cutByBytes,
    reachedEnd,
    totalLines: reachedEnd ? lineNo - 1 + (lastSegmentOpen ? 1 : 0) : undefined,
  };
}

export interface TailOptions {
  lines: number;
  maxBytes: number;
  size: number;
  budget?: TimeBudget;
}

/** Reads the last `lines` lines by reading backwards from the end in chunks. */
export async function readLastLines(reader: ChunkReader, options: TailOptions): Promise<LineSlice> {
  const { lines, maxBytes, size } = options;
  if (size === 0 || lines <= 0) {
    return { text: '', firstLine: undefined, lineCount: 0, cutByBytes: false, reachedEnd: true, totalLines: size === 0 ? 0 : undefined };
  }
  const parts: Buffer[] = [];
  let position = size;
  let collectedBytes = 0;
  let newlines = 0;
  let startFound = false;
  let cutByBytes = false;
  let first = true;
  let reads = 0;

  while (position > 0) {
    if (++reads % CHECK_EVERY === 0) options.budget?.check();
    const length = Math.min(CHUNK_BYTES, position);
    position -= length;
    const buf = Buffer.allocUnsafe(length);
    const bytesRead = await reader.read(buf, 0, length, position);
    const data = buf.subarray(0, bytesRead);
    refuseBinary(data);
    let scanEnd = data.length;
    // A newline that ends the file terminates the last line rather than starting a new one.
    if (first && data[data.length - 1] === NEWLINE) scanEnd--;
    first = false;
    let cutAt = -1;
    for (let i = scanEnd - 1; i >= 0; i--) {
      if (data[i] === NEWLINE && ++newlines === lines) {
        cutAt = i + 1;
        break;
      }
    }
    if (cutAt !== -1) {
      parts.unshift(data.subarray(cutAt));
      collectedBytes += data.length - cutAt;
      startFound = true;
      break;
    }
    parts.unshift(data);
    collectedBytes += data.length;
    if (collectedBytes > maxBytes) {
      cutByBytes = true;
      break;
    }
  }

  let all = Buffer.concat(parts);
  if (all.length > maxBytes) {
    cutByBytes = true;
    all = all.subarray(all.length - maxBytes);
  }
  if (cutByBytes) {
    // Keep whole lines: start after the first newline inside the window when there is one.
    const nl = all.indexOf(NEWLINE);
    all = nl !== -1 && nl < all.length - 1 ? all.subarray(nl + 1) : all.subarray(utf8SafeStart(all, 0));
  }
  let text = decode([all], true);
  if (text.endsWith('\n')) text = text.slice(0, -1);
  const lineCount = text.length === 0 && all.length === 0 ? 0 : text.split('\n').length;
  const wholeFile = !startFound && !cutByBytes;
  return {
    text,
    firstLine: wholeFile ? 1 : undefined,
    lineCount,
    cutByBytes,
    reachedEnd: true,
    totalLines: wholeFile ? lineCount : undefined,
  };
}
