import { readSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { CancelledError, TimeBudget, ToolError, type ContentBlock, type PathGuard, type RequestContext, type SuiteServer, type ToolAnnotations } from '@suite/shared';
import type { FilesystemConfig } from '../config.js';
import { withPathErrors } from '../fs-errors.js';
import { BinaryContentError, readLastLines, readLinesForward, type LineSlice } from '../lines.js';
import { mimeTypeFor } from '../mime.js';
import { formatSize } from '../sizes.js';
import { ChunkReader, openVerifiedSync, type VerifiedFile } from '../verified-open.js';

const READ_ONLY: Omit<ToolAnnotations, 'title'> = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** How many files read_multiple_files reads at the same time. */
const MULTI_READ_CONCURRENCY = 16;
/** read_multiple_files returns at most this many times the single-read byte cap in total. */
const MULTI_READ_BUDGET_FACTOR = 4;
const MAX_MULTI_PATHS = 200;
const BINARY_SNIFF_BYTES = 8192;
const SYNC_READ_BYTES = 64 * 1024;
/** read_media_file reads in pieces this big, so no single read blocks for long. */
const MEDIA_CHUNK_BYTES = 1024 * 1024;

const lineCount = z.number().int().nonnegative();

const readTextInput = z.object({
  path: z.string().describe('Path of the file, absolute or relative to the first allowed directory.'),
  head: lineCount.optional().describe('If provided, returns only the first N lines of the file'),
  tail: lineCount.optional().describe('If provided, returns only the last N lines of the file'),
  offset: z.number().int().min(1).optional().describe('Line number to start reading at (1 = first line). Use with limit to page through a large file.'),
  limit: z.number().int().min(1).optional().describe('Most lines to return, starting at offset (or at line 1).'),
});

const readTextOutput = z.object({
  content: z.string().describe('The text read (without the truncation marker).'),
  path: z.string(),
  size: z.number().describe('Size of the whole file in bytes.'),
  startLine: z.number().optional().describe('1-based number of the first line returned, when known.'),
  lineCount: z.number().describe('Lines returned.'),
  totalLines: z.number().optional().describe('Lines in the file, when the read reached its end.'),
  truncated: z.boolean().describe('True when the byte cap cut the result short.'),
  nextOffset: z.number().optional().describe('Pass as offset to continue after a truncated read.'),
});

type ReadTextOutput = z.output<typeof readTextOutput>;

interface TextRead {
  slice: LineSlice;
  size: number;
}

interface OpenedFile {
  file: VerifiedFile;
  reader: ChunkReader;
  size: number;
  real: string;
}

async function openRegularFile(guard: PathGuard, userPath: string): Promise<OpenedFile> {
  const { real } = await guard.resolve(userPath, { mustExist: true });
  return withPathErrors(userPath, async () => {
    const file = openVerifiedSync(guard, real, userPath);
    try {
      if (file.stat.isDirectory()) throw ToolError.invalidArgument(`${userPath} is a directory, not a file. Use list_directory to see what it contains.`);
      if (!file.stat.isFile()) throw ToolError.invalidArgument(`${userPath} is not a regular file.`);
      return { file, reader: new ChunkReader(file.fd), size: file.stat.size, real };
    } catch (error) {
      file.close();
      throw error;
    }
  });
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

interface TextReadRequest {
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

/** The budget of one read call: past it, the read stops with a timeout saying what was stopped and what to do instead. */
function readBudget(ctx: RequestContext, ms: number, message: (limit: string) => string): TimeBudget {
  return new TimeBudget(ctx.signal, ms, (budget) => ToolError.timeout(message(`${budget.describe()} (the time limit of one call, --read-timeout)`)));
}

async function readTextFile(guard: PathGuard, userPath: string, args: TextReadRequest, maxBytes: number, budget: TimeBudget): Promise<{ text: string; output: ReadTextOutput }> {
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

const readMultipleInput = z.object({
  paths: z
    .array(z.string())
    .min(1, 'At least one file path must be provided')
    .max(MAX_MULTI_PATHS)
    .describe('Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.'),
});

const readMultipleOutput = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      ok: z.boolean(),
      content: z.string().optional(),
      size: z.number().optional(),
      truncated: z.boolean().optional(),
      error: z.string().optional(),
    }),
  ),
  succeeded: z.number(),
  failed: z.number(),
});

type MultiFile = z.output<typeof readMultipleOutput>['files'][number];

const readMediaInput = z.object({ path: z.string().describe('Path of the image, audio or other binary file.') });
const readMediaOutput = z.object({
  path: z.string(),
  mimeType: z.string(),
  size: z.number().describe('Size in bytes before base64 encoding.'),
  kind: z.enum(['image', 'audio', 'resource']).describe('Which content block carries the data.'),
});

async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  });
  await Promise.all(workers);
  return results;
}

export function registerReadTools(server: SuiteServer, config: FilesystemConfig): void {
  const maxBytes = config.limits.maxReadBytes;

  const readHandler = async (args: z.output<typeof readTextInput>, ctx: RequestContext) => {
    const guard = await ctx.paths();
    const budget = readBudget(ctx, config.limits.readTimeoutMs, (limit) =>
      args.offset !== undefined
        ? `Reading ${args.path} up to line ${args.offset} was stopped after ${limit}: reaching a line means reading the file from its start. For the end of a huge file use tail; to find a line use search_content.`
        : `Reading ${args.path} was stopped after ${limit}.`,
    );
    const { text, output } = await readTextFile(guard, args.path, args, maxBytes, budget);
    return { text, structured: output };
  };

  const readDescription =
    'Read a file as UTF-8 text. Use head or tail for the first or last N lines, or offset and limit (in lines) ' +
    `to page through a large file. A read returns at most ${formatSize(maxBytes)}; when the limit cuts it, the text ends ` +
    'with a "[truncated: ...]" marker that says how much was left out and which offset continues. head and tail read only ' +
    'the part they need, so they are fast on huge files. Binary files are refused (use read_media_file). Only works within allowed directories.';

  server.tool({
    name: 'read_file',
    description: `DEPRECATED: use read_text_file instead (this is an alias kept for compatibility with the same arguments). ${readDescription}`,
    input: readTextInput,
    output: readTextOutput,
    annotations: { title: 'Read File (Deprecated)', ...READ_ONLY },
    handler: readHandler,
  });

  server.tool({
    name: 'read_text_file',
    description: readDescription,
    input: readTextInput,
    output: readTextOutput,
    annotations: { title: 'Read Text File', ...READ_ONLY },
    handler: readHandler,
  });

  server.tool({
    name: 'read_media_file',
    description:
      'Read an image, audio or other binary file and return it base64-encoded with its MIME type: images as image ' +
      `content, audio as audio content, anything else as an embedded resource. Files over ${formatSize(config.limits.maxMediaBytes)} are refused. ` +
      'Only works within allowed directories.',
    input: readMediaInput,
    output: readMediaOutput,
    annotations: { title: 'Read Media File', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const budget = readBudget(ctx, config.limits.readTimeoutMs, (limit) => `Reading ${args.path} was stopped after ${limit}.`);
      const { file, reader, size, real } = await openRegularFile(guard, args.path);
      try {
        if (size > config.limits.maxMediaBytes) {
          throw ToolError.invalidArgument(
            `${args.path} is ${formatSize(size)}, over the ${formatSize(config.limits.maxMediaBytes)} limit for read_media_file.`,
          );
        }
        const data = await withPathErrors(args.path, async () => {
          const buffer = Buffer.allocUnsafe(size);
          let filled = 0;
          while (filled < size) {
            budget.check();
            const bytesRead = await reader.read(buffer, filled, Math.min(MEDIA_CHUNK_BYTES, size - filled), filled);
            if (bytesRead === 0) break;
            filled += bytesRead;
          }
          return buffer.subarray(0, filled).toString('base64');
        });
        const mimeType = mimeTypeFor(real);
        const kind: 'image' | 'audio' | 'resource' = mimeType.startsWith('image/') ? 'image' : mimeType.startsWith('audio/') ? 'audio' : 'resource';
        const block: ContentBlock =
          kind === 'image'
            ? { type: 'image', data, mimeType }
            : kind === 'audio'
              ? { type: 'audio', data, mimeType }
              : { type: 'resource', resource: { uri: pathToFileURL(real).href, mimeType, blob: data } };
        return { content: [block], structured: { path: args.path, mimeType, size, kind } };
      } finally {
        file.close();
      }
    },
  });

  server.tool({
    name: 'read_multiple_files',
    description:
      'Read several text files at once; more efficient than one call per file. Each file comes back with its path as a ' +
      'heading; a file that cannot be read reports its own error without failing the others. Each file is capped like ' +
      `read_text_file, and the whole answer at ${formatSize(maxBytes * MULTI_READ_BUDGET_FACTOR)}. Only works within allowed directories.`,
    input: readMultipleInput,
    output: readMultipleOutput,
    annotations: { title: 'Read Multiple Files', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      // One time budget for the whole call: files left when it runs out report the timeout as their error.
      const budget = readBudget(ctx, config.limits.readTimeoutMs, (limit) => `Not read: read_multiple_files was stopped after ${limit}. Read fewer files per call.`);
      let bytesLeft = maxBytes * MULTI_READ_BUDGET_FACTOR;
      const files = await mapWithConcurrency(args.paths, MULTI_READ_CONCURRENCY, async (userPath): Promise<MultiFile & { text: string }> => {
        // Each file reserves its cap from the shared budget before reading and gives back what it did not use,
        // so files read in parallel cannot together overshoot the budget.
        const cap = Math.min(maxBytes, bytesLeft);
        bytesLeft -= cap;
        try {
          budget.check();
          if (cap <= 0) throw ToolError.unavailable('skipped: the combined size limit for one call was reached; read it separately.');
          const { text, output } = await readTextFile(guard, userPath, {}, cap, budget);
          bytesLeft += cap - Buffer.byteLength(output.content);
          return { path: userPath, ok: true, content: output.content, size: output.size, truncated: output.truncated, text };
        } catch (error) {
          bytesLeft += cap;
          if (error instanceof CancelledError) throw error;
          const message = error instanceof ToolError ? error.message : 'the file could not be read.';
          return { path: userPath, ok: false, error: message, text: '' };
        }
      });
      const text = files.map((f) => (f.ok ? `${f.path}:\n${f.text}\n` : `${f.path}: Error - ${f.error}`)).join('\n---\n');
      const succeeded = files.filter((f) => f.ok).length;
      return {
        text,
        structured: {
          files: files.map(({ text: _text, ...file }) => file),
          succeeded,
          failed: files.length - succeeded,
        },
      };
    },
  });
}
