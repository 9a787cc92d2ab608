import { read, readSync } from 'node:fs';
import { CancelledError, ToolError, type PathGuard, type TimeBudget } from '@suite/shared';
import { openVerifiedSync, type VerifiedFile } from '../src/verified-open.js';

/**
 * The previous release's search of one file (main before the search engine moved to worker
 * threads), kept as it was as the oracle of search-engine.test.ts: the new engine must give the
 * same matches, in the same order, with the same caps.
 *
 * Searches one file for a pattern, line by line, reading it in chunks so memory stays bounded
 * whatever the file's size. Chunks without a match (the common case) are not split into lines.
 */

const CHUNK_BYTES = 256 * 1024;
/** A single line longer than this is searched only in its first part. */
const MAX_LINE_BYTES = 1024 * 1024;
/** Lines returned to the client are cut to this many characters around the match. */
export const MAX_SHOWN_LINE = 400;

export interface LineMatch {
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

export interface FileSearchOptions {
  /** Tests one line (no newline). Must be stateless (no `g`/`y` flag). */
  lineTest: RegExp;
  /** Quick test of a whole chunk of text; false means no line in it can match. */
  chunkTest: (text: string) => boolean;
  contextLines: number;
  /** Files larger than this are not searched. */
  maxFileBytes: number;
  /** Stop after this many matches in this file. */
  maxMatches: number;
  /** The call's time budget and cancellation, checked once per chunk. */
  budget: TimeBudget;
}

export type FileSearchOutcome = { kind: 'searched'; matches: LineMatch[] } | { kind: 'binary' } | { kind: 'too-large' } | { kind: 'unreadable' };

/** Cuts a long line to MAX_SHOWN_LINE characters, keeping the match in view. */
export function clipLine(text: string, test: RegExp): string {
  if (text.length <= MAX_SHOWN_LINE) return text;
  const m = test.exec(text);
  const at = m ? m.index : 0;
  const start = Math.max(0, Math.min(at - 80, text.length - MAX_SHOWN_LINE));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + MAX_SHOWN_LINE)}${start + MAX_SHOWN_LINE < text.length ? '…' : ''}`;
}

function readAt(fd: number, buffer: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => read(fd, buffer, 0, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))));
}

export async function searchFile(guard: PathGuard, file: string, options: FileSearchOptions): Promise<FileSearchOutcome> {
  let opened: VerifiedFile;
  try {
    opened = openVerifiedSync(guard, file, file);
  } catch {
    return { kind: 'unreadable' };
  }
  try {
    if (!opened.stat.isFile()) return { kind: 'unreadable' };
    if (opened.stat.size > options.maxFileBytes) return { kind: 'too-large' };
    return await searchOpenFile(opened.fd, opened.stat.size, options);
  } catch (error) {
    // The budget running out or a cancellation stops the search; other failures only skip this file.
    if (error instanceof ToolError || error instanceof CancelledError) throw error;
    return { kind: 'unreadable' };
  } finally {
    opened.close();
  }
}

/** Files up to this size are read with one synchronous read: microseconds, cheaper than a thread-pool round trip. */
const SYNC_READ_BYTES = 64 * 1024;

async function searchOpenFile(fd: number, size: number, options: FileSearchOptions): Promise<FileSearchOutcome> {
  const { lineTest, chunkTest, contextLines, maxMatches, budget } = options;
  const small = size < SYNC_READ_BYTES;
  // One byte more than the size, so a file that is exactly one chunk still sees its end in one read.
  const chunk = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size + 1));
  const matches: LineMatch[] = [];
  const recent: string[] = [];
  let pendingAfter: LineMatch[] = [];
  let afterLeft = 0;
  let lineNo = 1;
  let carry: Buffer | undefined;
  let position = 0;

  const consume = (text: string): boolean => {
    const lines = text.split('\n');
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (lineTest.test(line)) {
        if (matches.length >= maxMatches) return false;
        const match: LineMatch = { line: lineNo, text: clipLine(line, lineTest) };
        if (contextLines > 0) {
          match.before = recent.slice(-contextLines).map((l) => clipLine(l, lineTest));
          match.after = [];
          pendingAfter.push(match);
          afterLeft = contextLines;
        }
        matches.push(match);
      } else if (afterLeft > 0) {
        const shown = clipLine(line, lineTest);
        for (const m of pendingAfter) m.after?.push(shown);
        afterLeft--;
        if (afterLeft === 0) pendingAfter = [];
      }
      if (contextLines > 0) {
        recent.push(line);
        if (recent.length > contextLines) recent.shift();
      }
      lineNo++;
    }
    return true;
  };

  /** Advances line numbers (and the context window) over text that cannot match. */
  const skip = (buf: Buffer, text: () => string): void => {
    if (contextLines > 0) {
      const lines = text().split('\n');
      lineNo += lines.length;
      for (const l of lines.slice(-contextLines)) {
        recent.push(l.endsWith('\r') ? l.slice(0, -1) : l);
        if (recent.length > contextLines) recent.shift();
      }
      return;
    }
    let count = 1;
    for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) count++;
    lineNo += count;
  };

  for (;;) {
    budget.check();
    const bytesRead = small ? readSync(fd, chunk, 0, chunk.length, position) : await readAt(fd, chunk, chunk.length, position);
    // Every chunk, not only the first: text followed by gigabytes of zeros (a sparse file) is binary at its first zero chunk.
    if (chunk.subarray(0, bytesRead).includes(0)) return { kind: 'binary' };
    const eof = bytesRead === 0;
    position += bytesRead;
    let data = carry ? Buffer.concat([carry, chunk.subarray(0, bytesRead)]) : chunk.subarray(0, bytesRead);
    carry = undefined;
    let body: Buffer;
    if (eof) {
      body = data;
    } else {
      const lastNl = data.lastIndexOf(0x0a);
      if (lastNl === -1) {
        // One line longer than a chunk: keep gathering it, up to a bound.
        if (data.length < MAX_LINE_BYTES) {
          carry = Buffer.from(data);
          continue;
        }
        body = data;
        data = Buffer.alloc(0);
      } else {
        body = data.subarray(0, lastNl);
        carry = Buffer.from(data.subarray(lastNl + 1));
      }
    }
    if (body.length > 0) {
      let decoded: string | undefined;
      const text = (): string => (decoded ??= body.toString('utf8'));
      if (afterLeft > 0 || chunkTest(text())) {
        if (!consume(text())) break;
      } else {
        skip(body, text);
      }
    }
    if (eof) break;
  }
  return { kind: 'searched', matches };
}
