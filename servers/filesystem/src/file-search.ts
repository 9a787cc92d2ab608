import { closeSync, fstatSync, readSync } from 'node:fs';
import { countNewlines, lineFinder, lineText, nextLineWith, scanBuffer, type ByteFinder } from '@suite/shared/search';
import type { CheckedOpener } from './open-checked.js';

/**
 * Searches one file for a pattern, line by line, reading it in chunks so memory stays bounded
 * whatever the file's size. Synchronous: it runs in the search worker threads (worker/search-worker.ts),
 * which read files one after another and have nothing else to do. A leaf module (node:fs and
 * shared's search engine only), so the worker's bundle stays small.
 *
 * The fast path: a literal, or the text every match of a regular expression must contain, is
 * looked for in the raw bytes (shared's ByteFinder); only the lines that hold it are decoded and
 * tested, and line numbers are counted (with SIMD) only up to a match. A regular expression
 * without such text is run over each chunk's text with the `m` flag, which finds a superset of the
 * lines that match, and only then line by line. Either way the lines tested, the matches, their
 * context and the caps are those of a plain line-by-line search.
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

export type FileSearchOutcome =
  | { kind: 'searched'; matches: LineMatch[] }
  | { kind: 'binary' }
  | { kind: 'too-large' }
  | { kind: 'unreadable' }
  /** The search was told to stop (cancelled, out of time) before this file was done. */
  | { kind: 'stopped' };

export interface ContentQuery {
  pattern: string;
  literal: boolean;
  caseSensitive: boolean;
  contextLines: number;
  /** Files larger than this are not searched. */
  maxFileBytes: number;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface CompiledContentQuery {
  /** Tests one line (no newline). Stateless (no `g`/`y` flag). */
  lineTest: RegExp;
  /** Quick test of a whole chunk of text; false means no line in it can match. */
  chunkTest: (text: string) => boolean;
  /** Text every matching line holds, in bytes; undefined when there is none to look for. */
  finder: ByteFinder | undefined;
}

/** Compiles a query; throws the RegExp constructor's SyntaxError for an invalid expression. */
export function compileContentQuery(pattern: string, literal: boolean, caseSensitive: boolean): CompiledContentQuery {
  const source = literal ? escapeRegExp(pattern) : pattern;
  const flags = caseSensitive ? '' : 'i';
  const lineTest = new RegExp(source, flags);
  const chunkRegex = new RegExp(source, `${flags}m`);
  const finder = lineFinder(pattern, literal, caseSensitive);
  if (literal && caseSensitive) return { lineTest, chunkTest: (text) => text.includes(pattern), finder };
  return {
    lineTest,
    // Lines are tested without their CR; do the same to the chunk so `$` behaves alike.
    chunkTest: (text) => chunkRegex.test(text.includes('\r') ? text.replace(/\r(?=\n)/g, '') : text),
    finder,
  };
}

/** Cuts a long line to MAX_SHOWN_LINE characters, keeping the match in view. */
export function clipLine(text: string, test: RegExp): string {
  if (text.length <= MAX_SHOWN_LINE) return text;
  const m = test.exec(text);
  const at = m ? m.index : 0;
  const start = Math.max(0, Math.min(at - 80, text.length - MAX_SHOWN_LINE));
  return `${start > 0 ? '…' : ''}${text.slice(start, start + MAX_SHOWN_LINE)}${start + MAX_SHOWN_LINE < text.length ? '…' : ''}`;
}

/** Outcomes without matches, one object each (they are only read): most files of a search end in one of them. */
const NO_MATCHES: FileSearchOutcome = Object.freeze({ kind: 'searched', matches: Object.freeze([]) as unknown as LineMatch[] });
const BINARY: FileSearchOutcome = Object.freeze({ kind: 'binary' });
const TOO_LARGE: FileSearchOutcome = Object.freeze({ kind: 'too-large' });
const UNREADABLE: FileSearchOutcome = Object.freeze({ kind: 'unreadable' });
const STOPPED: FileSearchOutcome = Object.freeze({ kind: 'stopped' });

/**
 * Opens the file `name` of `directory` (checked against the roots by `opener`), then searches it.
 * `maxMatches`: stop after this many matches in it. `stop` is asked once per chunk; true ends the
 * file as 'stopped'.
 */
export function searchFileSync(
  directory: string,
  name: string,
  opener: CheckedOpener,
  query: ContentQuery,
  compiled: CompiledContentQuery,
  maxMatches: number,
  stop: () => boolean,
): FileSearchOutcome {
  let fd: number;
  try {
    fd = opener.openIn(directory, name);
  } catch {
    return UNREADABLE;
  }
  try {
    // The first chunk is read before the size is asked: a file that fits in it (nearly every
    // file of a source tree) then needs no fstat, its size being what the read returned. A read
    // that fills the chunk, or returns nothing, asks: the file is larger (or not a regular file:
    // a FIFO reads nothing; a directory fails the read, which makes it unreadable as well).
    const first = scanBuffer(CHUNK_BYTES).subarray(0, CHUNK_BYTES);
    const got = readSync(fd, first, 0, CHUNK_BYTES, 0);
    let size = got;
    if (got === CHUNK_BYTES || got === 0) {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return UNREADABLE;
      size = stat.size;
    }
    if (size > query.maxFileBytes) return TOO_LARGE;
    // Read whole (nearly every file of a source tree) without the text every matching line holds:
    // no line matches, which is all the search below would find out, at a cost per file.
    if (compiled.finder && got > 0 && got < CHUNK_BYTES) {
      if (stop()) return STOPPED;
      const whole = first.subarray(0, got);
      if (whole.includes(0)) return BINARY;
      if (!compiled.finder.occursIn(whole)) return NO_MATCHES;
    }
    return searchOpenFile(fd, size, got, query.contextLines, compiled, maxMatches, stop);
  } catch {
    return UNREADABLE;
  } finally {
    closeSync(fd);
  }
}

/** `firstRead`: the bytes the caller already read from the start into the thread's scan buffer. */
function searchOpenFile(fd: number, size: number, firstRead: number, contextLines: number, compiled: CompiledContentQuery, maxMatches: number, stop: () => boolean): FileSearchOutcome {
  const { lineTest, chunkTest, finder } = compiled;
  // One byte more than the size, so a file that is exactly one chunk still sees its end in one read.
  const length = Math.min(CHUNK_BYTES, size + 1);
  const chunk = scanBuffer(length).subarray(0, length);
  let preRead: number | undefined = Math.min(firstRead, length);
  const matches: LineMatch[] = [];
  const recent: string[] = [];
  let pendingAfter: LineMatch[] = [];
  let afterLeft = 0;
  let lineNo = 1;
  let carry: Buffer | undefined;
  let position = 0;

  /** One line (CR dropped) of a plain line-by-line search; false once maxMatches is passed. */
  const step = (line: string): boolean => {
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
    return true;
  };

  const consume = (text: string): boolean => {
    for (const raw of text.split('\n')) if (!step(raw.endsWith('\r') ? raw.slice(0, -1) : raw)) return false;
    return true;
  };

  /**
   * `pieces` lines that cannot match, the last of them ending at `lastEnd`: counted (unless
   * `last`: nothing follows them), and kept as context.
   */
  const skip = (body: Buffer, from: number, lastEnd: number, pieces: number, last: boolean): void => {
    if (pieces === 0) return;
    if (contextLines > 0) {
      const tail: string[] = [];
      let end = lastEnd;
      for (let k = 0; k < Math.min(pieces, contextLines); k++) {
        const nl = end - 1 >= from ? body.lastIndexOf(0x0a, end - 1) : -1;
        const start = nl >= from ? nl + 1 : from;
        tail.unshift(lineText(body, { start, end }));
        end = start - 1;
      }
      for (const l of tail) {
        recent.push(l);
        if (recent.length > contextLines) recent.shift();
      }
    }
    if (!last) lineNo += pieces;
  };

  /**
   * The lines of a body (split at every newline, as `consume` splits its text), through the
   * finder. Newlines are counted only up to a line that is tested, and past the last one only when
   * more of the file follows (`last` false).
   */
  const scan = (body: Buffer, last: boolean): boolean => {
    const f = finder as ByteFinder;
    let pos = 0;
    while (pos <= body.length) {
      if (afterLeft > 0) {
        const nl = body.indexOf(0x0a, pos);
        const end = nl === -1 ? body.length : nl;
        if (!step(lineText(body, { start: pos, end }))) return false;
        pos = end + 1;
        continue;
      }
      const span = nextLineWith(f, body, pos);
      if (!span) {
        if (contextLines > 0 || !last) skip(body, pos, body.length, countNewlines(body, pos, body.length) + 1, last);
        return true;
      }
      if (span.start > pos) skip(body, pos, span.start - 1, countNewlines(body, pos, span.start), false);
      if (!step(lineText(body, span))) return false;
      pos = span.end + 1;
    }
    return true;
  };

  /** Searches one body: the lines between two chunk cuts. False once maxMatches is passed. */
  const search = (body: Buffer, last: boolean): boolean => {
    if (body.length === 0) return true;
    if (finder) return scan(body, last);
    let decoded: string | undefined;
    const text = (): string => (decoded ??= body.toString('utf8'));
    if (afterLeft > 0 || chunkTest(text())) return consume(text());
    if (contextLines > 0 || !last) skip(body, 0, body.length, countNewlines(body) + 1, last);
    return true;
  };

  for (;;) {
    if (stop()) return STOPPED;
    const bytesRead = preRead ?? readSync(fd, chunk, 0, chunk.length, position);
    preRead = undefined;
    const read = chunk.subarray(0, bytesRead);
    // Every chunk, not only the first: text followed by gigabytes of zeros (a sparse file) is binary at its first zero chunk.
    if (read.includes(0)) return BINARY;
    position += bytesRead;
    const data = carry ? Buffer.concat([carry, read]) : read;
    carry = undefined;
    if (bytesRead === 0) {
      search(data, true);
      break;
    }
    // A regular file reads short only at its end: that read is the last. What is left after its
    // last newline is searched at once, as the read of 0 bytes that says so would have had it.
    const short = bytesRead < chunk.length;
    const lastNl = data.lastIndexOf(0x0a);
    if (lastNl === -1) {
      // One line longer than a chunk: keep gathering it, up to a bound.
      if (short) {
        search(data, true);
        break;
      }
      if (data.length < MAX_LINE_BYTES) {
        carry = Buffer.from(data);
        continue;
      }
      if (!search(data, false)) break;
      continue;
    }
    const rest = data.subarray(lastNl + 1);
    if (!search(data.subarray(0, lastNl), short && rest.length === 0)) break;
    if (short) {
      search(rest, true);
      break;
    }
    carry = Buffer.from(data.subarray(lastNl + 1));
  }
  return { kind: 'searched', matches };
}
