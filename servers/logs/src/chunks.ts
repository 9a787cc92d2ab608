import { isAscii } from 'node:buffer';
import { read, readSync } from 'node:fs';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { scanBuffer } from '@suite/shared/search';

/**
 * Forward reading in chunks of whole lines, from a plain file or through a gzip stream, with
 * memory bounded by the chunk size plus the longest line (itself bounded). A chunk always ends on
 * a newline (except the last one of the file), so decoding a chunk never splits a UTF-8
 * character: 0x0A never occurs inside a multi-byte sequence. Shared by the worker thread (search,
 * statistics) and the main thread (ranges, new lines); imports nothing of the package.
 */

/**
 * Below Node's threshold for external strings (about 1 MB): a chunk's decoded text then lives in
 * the young generation and is collected at once, instead of as malloc'd memory that waits for a
 * full collection (with 1 MiB chunks, log_stats over 1 GB peaked 60 MB higher).
 */
export const CHUNK_BYTES = 512 * 1024;
/**
 * Reads land at the same offset modulo this as the file position they read from. The kernel
 * copies from the page cache several times slower when the destination trails the source by 1 to
 * 31 bytes modulo a page (measured on this VM: 5x at 1 to 15, 2x at 16 to 31), which a partial
 * line moved in front of each read caused for about one read in four: 60 ms of CPU per GB.
 */
const READ_ALIGN = 64;
/** A "line" longer than this is cut into pieces of this size, so one huge line cannot exhaust memory. */
export const MAX_LINE_BYTES = 1024 * 1024;
export const NEWLINE = 0x0a;

export interface LineChunk {
  /**
   * Whole lines, the last one ending with a newline unless it is the end of the stream. Valid only
   * until the next chunk is asked for: a plain file's chunks share one buffer.
   */
  bytes: Buffer;
  /** Offset of bytes[0] in the (decompressed) stream. */
  offset: number;
}

export interface RawSource {
  /** The stream in chunks of whole lines. Iterate once. */
  lineChunks(): AsyncIterable<LineChunk>;
  /** Bytes of the file itself read so far (compressed bytes for gzip): what progress is measured in. */
  consumed(): number;
}

function readAsync(fd: number, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, offset, length, position, (error, n) => (error ? reject(error) : resolve(n))));
}

/**
 * A plain file from `start` to `end` (default: its end when read), in chunks of whole lines read
 * into one buffer that is reused: no allocation per chunk, so a scan of gigabytes leaves no garbage
 * behind it. The partial line at the end of a read moves to the front of the buffer, where it puts
 * the next read (right after it) at that read's file offset modulo READ_ALIGN. `sync` reads block
 * the thread: right in the worker, which has nothing else to do, and far cheaper there than a
 * round trip through the thread pool per chunk.
 */
export function plainSource(fd: number, options: PlainOptions = {}): RawSource {
  const read = { bytes: 0 };
  return { lineChunks: () => plainChunks(fd, options, read), consumed: () => read.bytes };
}

interface PlainOptions {
  start?: number;
  end?: number;
  chunkBytes?: number;
  sync?: boolean;
  alignReads?: boolean;
}

/**
 * plainSource's chunks. One generator function for every source, at module level: a generator
 * function made per source gives its generators a map of their own, and the search loop that
 * iterates them (searchSource, TurboFan-compiled) was thrown out and compiled again for each
 * file and part, about 20 ms of CPU per part searched.
 */
async function* plainChunks(fd: number, options: PlainOptions, read: { bytes: number }): AsyncGenerator<LineChunk> {
  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const end = options.end ?? Infinity;
  let position = options.start ?? 0;
  // In the worker (sync reads, one scan at a time) the thread's scan buffer: newlines are counted where the bytes are read.
  const size = READ_ALIGN + chunkBytes + MAX_LINE_BYTES;
  const buffer = options.sync ? scanBuffer(size).subarray(0, size) : Buffer.allocUnsafe(size);
  // The partial line a read continues is buffer[lead, lead + carry); the read lands right after it.
  let lead = 0;
  let carry = 0;
  let offset = position;
  for (;;) {
    // The read lands at the file position's offset modulo READ_ALIGN (see there): the partial line moves in front of that place.
    const nextLead = (((position - carry) % READ_ALIGN) + READ_ALIGN) % READ_ALIGN;
    if (nextLead !== lead) buffer.copyWithin(nextLead, lead, lead + carry);
    lead = nextLead;
    // alignReads: every read ends at a multiple of chunkBytes, as the reads of a scan from the
    // start do, so a part of a file that starts at one of its chunk cuts is cut where that scan cuts it.
    const length = Math.min(options.alignReads ? chunkBytes - (position % chunkBytes) : chunkBytes, end - position, buffer.length - lead - carry);
    const at = lead + carry;
    const n = length <= 0 ? 0 : options.sync ? readSync(fd, buffer, at, length, position) : await readAsync(fd, buffer, at, length, position);
    position += n;
    read.bytes += n;
    const filled = at + n;
    if (n === 0) {
      if (filled > lead) yield { bytes: buffer.subarray(lead, filled), offset };
      return;
    }
    const lastNewline = buffer.lastIndexOf(NEWLINE, filled - 1);
    let cut: number;
    if (lastNewline >= lead) cut = lastNewline + 1;
    else if (filled - lead >= MAX_LINE_BYTES) cut = utf8Boundary(buffer, filled); // one huge line: give it in pieces
    else {
      carry = filled - lead;
      continue;
    }
    yield { bytes: buffer.subarray(lead, cut), offset };
    offset += cut - lead;
    carry = filled - cut;
    lead = cut;
  }
}

/** Compression formats a file named .gz may really hold, told by their magic bytes. */
export type OtherCompression = 'zstd' | 'xz' | 'bzip2' | 'lz4' | 'zip';

const MAGIC: readonly { format: OtherCompression; bytes: readonly number[] }[] = [
  { format: 'zstd', bytes: [0x28, 0xb5, 0x2f, 0xfd] },
  { format: 'xz', bytes: [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00] },
  { format: 'bzip2', bytes: [0x42, 0x5a, 0x68] },
  { format: 'lz4', bytes: [0x04, 0x22, 0x4d, 0x18] },
  { format: 'zip', bytes: [0x50, 0x4b, 0x03, 0x04] },
];

/** The compression format the first bytes of a file announce, when it is one of the others gzip is mistaken for. */
export function otherCompression(head: Buffer): OtherCompression | undefined {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return undefined;
  return MAGIC.find((m) => head.length >= m.bytes.length && m.bytes.every((b, i) => head[i] === b))?.format;
}

/** The error a gzip source fails with when the file is another format under a .gz name. */
export class NotGzipError extends Error {
  readonly code = 'NOT_GZIP';
  constructor(readonly format: OtherCompression) {
    super(`${format} data, not gzip`);
  }
}

/** The decompressed bytes of a gzip file (several members, as `cat a.gz b.gz` makes, are one stream). */
export function gzipSource(fd: number, options: { chunkBytes?: number; sync?: boolean } = {}): RawSource {
  let consumed = 0;
  async function* compressedChunks(): AsyncGenerator<Buffer> {
    let position = 0;
    for (;;) {
      const buffer = Buffer.allocUnsafe(256 * 1024);
      const n = options.sync ? readSync(fd, buffer, 0, buffer.length, position) : await readAsync(fd, buffer, 0, buffer.length, position);
      if (n === 0) return;
      if (position === 0) {
        // zstd, xz or bzip2 data under a .gz name: say what it is rather than "corrupt".
        const other = otherCompression(buffer.subarray(0, n));
        if (other) throw new NotGzipError(other);
      }
      position += n;
      consumed += n;
      yield n === buffer.length ? buffer : buffer.subarray(0, n);
    }
  }
  return {
    lineChunks: () => {
      const gunzip = createGunzip({ chunkSize: 256 * 1024 });
      const input = Readable.from(compressedChunks(), { objectMode: false });
      input.on('error', (error) => gunzip.destroy(error));
      // A reader that stops early (a tail, a range) destroys the output: stop reading the file too.
      gunzip.on('close', () => input.destroy());
      input.pipe(gunzip);
      return regroup(gunzip as AsyncIterable<Buffer>, options.chunkBytes ?? CHUNK_BYTES);
    },
    consumed: () => consumed,
  };
}

export type GzipFailure = 'truncated' | 'corrupt' | OtherCompression;

/**
 * What a zlib error from a gzip stream says about the file: `truncated` (the compressed stream
 * ends early: a copy still being written, or cut short), `corrupt` (bytes that are not gzip data),
 * the real format of a file that is another compression under a .gz name, or undefined for any
 * other error (a read error).
 */
export function gzipFailure(error: unknown): GzipFailure | undefined {
  if (error instanceof NotGzipError) return error.format;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'Z_BUF_ERROR') return 'truncated';
  if (code === 'Z_DATA_ERROR' || code === 'Z_NEED_DICT' || code === 'Z_STREAM_ERROR') return 'corrupt';
  return undefined;
}

/**
 * Regroups pieces of a stream (gzip gives small ones) into chunks of whole lines of about `target`
 * bytes. When the stream fails (truncated gzip data), the whole lines it gave before come first,
 * then the error.
 */
async function* regroup(raw: AsyncIterable<Buffer>, target: number): AsyncGenerator<LineChunk> {
  let offset = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const iterator = raw[Symbol.asyncIterator]();
  try {
    for (;;) {
      let step: IteratorResult<Buffer>;
      try {
        step = await iterator.next();
      } catch (error) {
        const data = Buffer.concat(pending, pendingBytes);
        const lastNewline = data.lastIndexOf(NEWLINE);
        if (lastNewline !== -1) yield { bytes: data.subarray(0, lastNewline + 1), offset };
        throw error;
      }
      if (step.done) break;
      const piece = step.value;
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
      yield { bytes: data.subarray(0, cut), offset };
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
  } finally {
    // A reader that stopped early: stop the stream (gunzip) too.
    await iterator.return?.();
  }
}

/** The index at or before `end` where a UTF-8 character starts (steps back over continuation bytes). */
export function utf8Boundary(buf: Buffer, end: number): number {
  let i = end;
  while (i > 0 && end - i < 3 && i < buf.length && ((buf[i] as number) & 0xc0) === 0x80) i--;
  return i > 0 ? i : end;
}

/** Newlines in buf[start, end): shared's SIMD count (no copy for a buffer from `scanBuffer`). */
export { countNewlines } from '@suite/shared/search';

/** A chunk's text; pure ASCII (most logs) decodes as Latin-1, three times faster than UTF-8 and the same text. */
export function decodeChunk(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
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
