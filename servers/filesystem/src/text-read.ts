import { readSync } from 'node:fs';
import { z } from 'zod';
import { ToolError, type PathGuard, type TimeBudget } from '@suite/shared';
import { withPathErrors } from './fs-errors.js';
import { BinaryContentError, readLastLines, readLinesForward, type LineSlice } from './lines.js';
import { openRegularFile } from './regular-file.js';
import { formatSize } from './sizes.js';
import { openVerifiedSync, type ChunkReader } from './verified-open.js';

/**
 * Reading a text file whole or in part (head, tail, offset/limit) under a byte cap: what
 * read_text_file returns, and what read_multiple_files returns for each of its files.
 */

const BINARY_SNIFF_BYTES = 8192;
const SYNC_READ_BYTES = 64 * 1024;

export const readTextOutput = z.object({
  content: z.string().describe('The text read (without the truncation marker).'),
  path: z.string(),
  size: z.number().describe('Size of the whole file in bytes.'),
  startLine: z.number().optional().describe('1-based number of the first line returned, when known.'),
  lineCount: z.number().describe('Lines returned.'),
  totalLines: z.number().optional().describe('Lines in the file, when the read reached its end.'),
  truncated: z.boolean().describe('True when the byte cap cut the result short.'),
  nextOffset: z.number().optional().describe('Pass as offset to continue after a truncated read.'),
});

export type ReadTextOutput = z.output<typeof readTextOutput>;

interface TextRead {
  slice: LineSlice;
  size: number;
}

/**
 * Small whole-file reads (the common case) take a synchronous path: a verified O_NOFOLLOW open,
 * fstat and one read of at most SYNC_READ_BYTES. For a file that size this costs microseconds,
 * less than the thread-pool round trips of the async path, and keeps small reads as fast as a
 * bare readFile. Returns undefined (having closed the file) whenever the file is not a small
 * regular file, so the caller takes the general path, which also produces the right errors.
 */
function readSmallWholeFile(guard: PathGuard, real: string, userPath: string, maxBytes: number): Buffer | undefined {
  const file = openVerifiedSync(guard, real, userPath);
  try {
    const size = file.stat.size;
    if (!file.stat.isFile() || size > SYNC_READ_BYTES || size > maxBytes) return undefined;
    const buffer = Buffer.allocUnsafe(size + 1);
    let filled = 0;
    while (filled < buffer.length) {
      const n = readSync(file.fd, buffer, filled, buffer.length - filled, filled);
      if (n === 0) break;
      filled += n;
    }
    // The file grew since fstat: let the general path apply the caps.
    return filled > size ? undefined : buffer.subarray(0, filled);
  } finally {
    file.close();
  }
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
}

export interface TextReadRequest {
  head?: number | undefined;
  tail?: number | undefined;
  offset?: number | undefined;
  limit?: number | undefined;
}

function validateReadRequest(args: TextReadRequest): void {
  // The official server treats 0 as "not given"; so do we.
  const head = args.head || undefined;
  const tail = args.tail || undefined;
  if (head !== undefined && tail !== undefined) throw ToolError.invalidArgument('Cannot specify both head and tail parameters simultaneously.');
  if (tail !== undefined && (args.offset !== undefined || args.limit !== undefined)) {
    throw ToolError.invalidArgument('tail cannot be combined with offset/limit. Use tail alone, or offset and limit.');
  }
  if (head !== undefined && args.limit !== undefined) throw ToolError.invalidArgument('head and limit mean the same thing; give only one.');
}

async function readText(reader: ChunkReader, size: number, args: TextReadRequest, maxBytes: number, budget: TimeBudget): Promise<TextRead> {
  const tail = args.tail || undefined;
  const head = args.head || undefined;
  if (tail !== undefined) {
    // A tail reads the end only; one small read of the start makes "binary" a property of the file, not of the part read.
    const start = Buffer.allocUnsafe(Math.min(BINARY_SNIFF_BYTES, size));
    const sniffed = start.length > 0 ? await reader.read(start, 0, start.length, 0) : 0;
    if (start.subarray(0, sniffed).includes(0)) throw new BinaryContentError();
    return { slice: await readLastLines(reader, { lines: tail, maxBytes, size, budget }), size };
  }
  const ranged = head !== undefined || args.offset !== undefined || args.limit !== undefined;
  const slice = await readLinesForward(reader, {
    startLine: args.offset ?? 1,
    maxLines: head ?? args.limit ?? Infinity,
    maxBytes,
    size,
    exact: !ranged,
    budget,
  });
  return { slice, size };
}

/** The explicit marker appended when a cap cut the read, saying how much was left out and how to get it. */
function truncationMarker(read: TextRead, args: TextReadRequest, maxBytes: number): string | undefined {
  const { slice, size } = read;
  if (!slice.cutByBytes) return undefined;
  const returnedBytes = Buffer.byteLength(slice.text);
  if (args.tail) {
    return `[truncated: the last ${args.tail} lines exceed the ${formatSize(maxBytes)} read limit; showing the last ${slice.lineCount} lines. ${size - returnedBytes} more bytes precede them.]`;
  }
  const first = slice.firstLine ?? 1;
  const last = first + slice.lineCount - 1;
  const start = args.offset ?? 1;
  const moreBytes = start === 1 ? Math.max(0, size - returnedBytes) : undefined;
  const more = moreBytes !== undefined ? `${moreBytes} more bytes` : 'more lines';
  return `[truncated: ${more} not shown (the read limit is ${formatSize(maxBytes)}; the file is ${formatSize(size)}). Showing lines ${first}-${last}; continue with offset=${last + 1}, or use head/tail.]`;
}

function toOutput(userPath: string, read: TextRead): ReadTextOutput {
  const { slice, size } = read;
  const out: ReadTextOutput = {
    content: slice.text,
    path: userPath,
    size,
    lineCount: slice.lineCount,
    truncated: slice.cutByBytes,
  };
  if (slice.firstLine !== undefined) out.startLine = slice.firstLine;
  if (slice.totalLines !== undefined) out.totalLines = slice.totalLines;
  if (slice.cutByBytes && slice.firstLine !== undefined) out.nextOffset = slice.firstLine + slice.lineCount;
  return out;
}

function binaryFile(userPath: string): ToolError {
  return ToolError.invalidArgument(`${userPath} looks like a binary file (it contains NUL bytes). Use read_media_file to get it as base64.`);
}

/**
 * Reads a text file (whole, head, tail, or a range of lines) returning at most `maxBytes` of it:
 * `text` as the model sees it (with a "[truncated: ...]" marker when the cap cut it) and the
 * structured output. A binary file is refused.
 */
export async function readTextFile(guard: PathGuard, userPath: string, args: TextReadRequest, maxBytes: number, budget: TimeBudget): Promise<{ text: string; output: ReadTextOutput }> {
  validateReadRequest(args);
  const whole = !args.head && !args.tail && args.offset === undefined && args.limit === undefined;
  if (whole) {
    const { real } = await guard.resolve(userPath, { mustExist: true });
    const bytes = await withPathErrors(userPath, async () => readSmallWholeFile(guard, real, userPath, maxBytes));
    if (bytes) {
      if (bytes.includes(0)) throw binaryFile(userPath);
      const text = bytes.toString('utf8');
      const lines = countLines(text);
      const output: ReadTextOutput = { content: text, path: userPath, size: bytes.length, lineCount: lines, totalLines: lines, truncated: false };
      if (lines > 0) output.startLine = 1;
      return { text, output };
    }
  }
  const { file, reader, size } = await openRegularFile(guard, userPath);
  try {
    return await withPathErrors(userPath, async () => {
      let read: TextRead;
      try {
        read = await readText(reader, size, args, maxBytes, budget);
      } catch (error) {
        // Every chunk read is checked (skipped lines too), so a huge sparse file is refused at its first chunk.
        if (error instanceof BinaryContentError) throw binaryFile(userPath);
        throw error;
      }
      const marker = truncationMarker(read, args, maxBytes);
      const text = marker ? `${read.slice.text}\n${marker}` : read.slice.text;
      return { text, output: toOutput(userPath, read) };
    });
  } finally {
    file.close();
  }
}
