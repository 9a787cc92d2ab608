import { read, readSync } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/**
 * Forward reading in chunks of whole lines, from a plain file or through a gzip stream, with
 * memory bounded by the chunk size plus the longest line (itself bounded). A chunk always ends on
 * a newline (except the last one of the file), so decoding a chunk never splits a UTF-8
 * character: 0x0A never occurs inside a multi-byte sequence. Shared by the worker thread (search,
 * statistics) and the main thread (ranges, new lines); imports nothing of the package.
 */

export const CHUNK_BYTES = 1024 * 1024;
/** A "line" longer than this is cut into pieces of this size, so one huge line cannot exhaust memory. */
export const MAX_LINE_BYTES = 1024 * 1024;
export const NEWLINE = 0x0a;

export interface RawSource {
  chunks: AsyncIterable<Buffer>;
  /** Bytes of the file itself read so far (compressed bytes for gzip): what progress is measured in. */
  consumed(): number;
}

function readAsync(fd: number, buffer: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, buffer.length, position, (error, n) => (error ? reject(error) : resolve(n))));
}

/**
 * The bytes of a plain file from `start` to `end` (default: its end when read). `sync` reads block
 * the thread: right in the worker, which has nothing else to do, and three times faster there
 * than a round trip through the thread pool per megabyte.
 */
export function plainSource(fd: number, options: { start?: number; end?: number; chunkBytes?: number; sync?: boolean } = {}): RawSource {
  let position = options.start ?? 0;
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const end = options.end ?? Infinity;
  let consumed = 0;
  async function* chunks(): AsyncGenerator<Buffer> {
    while (position < end) {
      const buffer = Buffer.allocUnsafe(Math.min(chunkBytes, end - position));
      const n = options.sync ? readSync(fd, buffer, 0, buffer.length, position) : await readAsync(fd, buffer, position);
      if (n === 0) return;
      position += n;
      consumed += n;
      yield n === buffer.length ? buffer : buffer.subarray(0, n);
    }
  }
  return { chunks: chunks(), consumed: () => consumed };
}

/** The decompressed bytes of a gzip file (several members, as `cat a.gz b.gz` makes, are one stream). */
export function gzipSource(fd: number, options: { chunkBytes?: number; sync?: boolean } = {}): RawSource {
  const compressed = plainSource(fd, { chunkBytes: 256 * 1024, ...(options.sync !== undefined ? { sync: options.sync } : {}) });
  const gunzip = createGunzip({ chunkSize: Math.min(options.chunkBytes ?? CHUNK_BYTES, 256 * 1024) });
  const input = Readable.from(compressed.chunks, { objectMode: false });
  input.on('error', (error) => gunzip.destroy(error));
  // A reader that stops early (a tail, a range) destroys the output: stop reading the file too.
  gunzip.on('close', () => input.destroy());
  input.pipe(gunzip);
  return { chunks: gunzip as AsyncIterable<Buffer>, consumed: () => compressed.consumed() };
}

export interface LineChunk {
  /** Whole lines, the last one ending with a newline unless it is the end of the stream. */
  bytes: Buffer;
  /** Offset of bytes[0] in the (decompressed) stream. */
  offset: number;
}

/**
 * Regroups raw chunks so that each ends on a line boundary, gathering up to `chunkBytes` before
 * yielding (gzip streams give small pieces).
 */
export async function* lineChunks(raw: AsyncIterable<Buffer>, options: { start?: number; chunkBytes?: number } = {}): AsyncGenerator<LineChunk> {
  const target = options.chunkBytes ?? CHUNK_BYTES;
  let offset = options.start ?? 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const piece of raw) {
    pending.push(piece);
    pendingBytes += piece.length;
    if (pendingBytes < target) continue;
    const data = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
    const lastNewline = data.lastIndexOf(NEWLINE);
    if (lastNewline === -1 && data.length < MAX_LINE_BYTES + target) {
      pending = [data];
      continue;
    }
    const cut = lastNewline === -1 ? utf8Boundary(data, data.length) : lastNewline + 1;
    const bytes = data.subarray(0, cut);
    yield { bytes, offset };
    offset += cut;
    // Copy the remainder: it must not keep the whole chunk it came from alive.
    const rest = data.length > cut ? Buffer.from(data.subarray(cut)) : undefined;
    pending = rest ? [rest] : [];
    pendingBytes = rest ? rest.length : 0;
  }
  if (pendingBytes > 0) {
    const data = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending, pendingBytes);
    yield { bytes: data, offset };
  }
}

/** The index at or before `end` where a UTF-8 character starts (steps back over continuation bytes). */
export function utf8Boundary(buf: Buffer, end: number): number {
  let i = end;
  while (i > 0 && end - i < 3 && i < buf.length && ((buf[i] as number) & 0xc0) === 0x80) i--;
  return i > 0 ? i : end;
}

/** Newlines in buf[start, end): indexOf runs at memchr speed, far faster than a loop over bytes. */
export function countNewlines(buf: Buffer, start = 0, end = buf.length): number {
  let count = 0;
  for (let i = buf.indexOf(NEWLINE, start); i !== -1 && i < end; i = buf.indexOf(NEWLINE, i + 1)) count++;
  return count;
}

/**
 * The text of a chunk as lines: the final newline does not make an empty last line, and a CR
 * before a newline is dropped (CRLF files).
 */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  if (text.includes('\r')) for (let i = 0; i < lines.length; i++) if ((lines[i] as string).endsWith('\r')) lines[i] = (lines[i] as string).slice(0, -1);
  return lines;
}
