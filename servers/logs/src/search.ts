import { ByteFinder, requiredLiteral } from '@suite/shared/search';
import { NEWLINE, countNewlines, decodeChunk, splitLines, type RawSource } from './chunks.js';
import { fieldsMatch, groupOf, requiredTexts } from './fields.js';
import { CriJoiner, joinsFragments } from './formats/cri.js';
import { parserFor, type FormatSpec, type LineParser } from './formats/parsers.js';
import { atLeast } from './levels.js';
import type { SearchMatch, SearchQuery } from './scan-protocol.js';

/**
 * The search of one file, as the scan worker runs it: chunk by chunk, with memory bounded by the
 * chunk size. A chunk in which the pattern cannot occur (the common case for a rare pattern) is
 * never split into lines: a literal, or the text every match of a regular expression must contain,
 * is looked for in the raw bytes (no decoding at all: see ByteFinder); a regular expression without
 * such text is run over the chunk's text with the `m` flag, which finds a superset of the lines
 * that match. Only then are lines tested one by one.
 */

/** Matched lines and context lines are cut to this many characters around the match. */
export const MAX_SHOWN_LINE = 500;
/** How far back (in lines of the current chunk) the start of a multi-line entry is looked for. */
const HEAD_LOOKBACK_LINES = 5000;

export interface CompiledQuery {
  /** False when no line of the chunk can match. */
  chunkMayMatch(bytes: Buffer, text: () => string): boolean;
  lineMatches(line: string): boolean;
  /** For cutting long lines around the match. */
  locate(line: string): number;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function compileQuery(query: Pick<SearchQuery, 'pattern' | 'literal' | 'caseSensitive'>): CompiledQuery {
  const { pattern } = query;
  if (pattern === undefined) return { chunkMayMatch: () => true, lineMatches: () => true, locate: () => 0 };
  const insensitive = !query.caseSensitive;
  if (query.literal) {
    const finder = ByteFinder.for(pattern, insensitive);
    const lower = pattern.toLowerCase();
    const regex = new RegExp(escapeRegExp(pattern), insensitive ? 'im' : 'm');
    return {
      chunkMayMatch: (bytes, text) => (finder ? finder.occursIn(bytes) : regex.test(text())),
      lineMatches: insensitive ? (line) => line.toLowerCase().includes(lower) : (line) => line.includes(pattern),
      locate: (line) => Math.max(0, (insensitive ? line.toLowerCase() : line).indexOf(insensitive ? lower : pattern)),
    };
  }
  const flags = insensitive ? 'i' : '';
  const line = new RegExp(pattern, flags);
  const chunk = new RegExp(pattern, `${flags}m`);
  // Text every match contains: chunks without it are skipped in their raw bytes, lines without it untested.
  const required = requiredLiteral(pattern);
  const finder = required !== undefined ? ByteFinder.for(required, insensitive) : undefined;
  const precheck = required !== undefined && !insensitive ? required : undefined;
  return {
    chunkMayMatch: (bytes, text) => (finder ? finder.occursIn(bytes) : chunk.test(text())),
    lineMatches: precheck !== undefined ? (l) => l.includes(precheck) && line.test(l) : (l) => line.test(l),
    locate: (l) => Math.max(0, l.search(line)),
  };
}

export function clipAround(line: string, at: number): string {
  if (line.length <= MAX_SHOWN_LINE) return line;
  const start = Math.max(0, Math.min(at - 100, line.length - MAX_SHOWN_LINE));
  return `${start > 0 ? '…' : ''}${line.slice(start, start + MAX_SHOWN_LINE)}${start + MAX_SHOWN_LINE < line.length ? '…' : ''}`;
}

/** The last `n` lines of a chunk, decoded. */
export function lastLines(bytes: Buffer, n: number): string[] {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === NEWLINE) end--;
  let from = 0;
  let cursor = end;
  for (let k = 0; k < n && cursor > 0; k++) {
    const nl = bytes.lastIndexOf(NEWLINE, cursor - 1);
    if (nl === -1) {
      from = 0;
      break;
    }
    from = nl + 1;
    cursor = nl;
  }
  return splitLines(bytes.toString('utf8', from, end)).slice(-n);
}

/** The first `n` lines of a chunk, decoded. */
export function firstLines(bytes: Buffer, n: number): string[] {
  let end = 0;
  for (let k = 0; k < n; k++) {
    const nl = bytes.indexOf(NEWLINE, end);
    if (nl === -1) {
      end = bytes.length;
      break;
    }
    end = nl + 1;
  }
  return splitLines(bytes.toString('utf8', 0, end)).slice(0, n);
}

/** The last line of a chunk that starts an entry, looking back at most HEAD_LOOKBACK_LINES lines. */
export function lastHead(bytes: Buffer, parser: LineParser): string | undefined {
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === NEWLINE) end--;
  for (let k = 0; k < HEAD_LOOKBACK_LINES && end > 0; k++) {
    const nl = bytes.lastIndexOf(NEWLINE, end - 1);
    const start = nl === -1 ? 0 : nl + 1;
    let line = bytes.toString('utf8', start, end);
    if (line.endsWith('\r')) line = line.slice(0, -1);
    if (parser.head(line) !== undefined) return line;
    if (nl === -1) break;
    end = nl;
  }
  return undefined;
}

export interface SearchHooks {
  deadline: number;
  /** Results still wanted (across all files, when this one starts). */
  limit: number;
  /** Matches whose context is complete, in file order. */
  emit(matches: SearchMatch[]): void;
  /** Called once per chunk: progress and cancellation points. */
  chunkDone(): void;
  /**
   * For a part of a file that more of the file follows: the first `n` lines after it, which
   * complete the after-context of the part's last matches.
   */
  linesAfter: ((n: number) => string[]) | undefined;
}

/** Where a part of a file starts: what a search from the start of the file would know there. */
export interface PartStart {
  /** The last line before the part that starts an entry. */
  prevHead?: string;
  /** The last lines before the part (as many as the context asks). */
  prevTail: string[];
}

export interface SearchOutcome {
  lines: number;
  bytes: number;
  stopped?: 'max-results' | 'time-budget';
}

interface Pending {
  match: SearchMatch;
  left: number;
}

export async function searchSource(source: RawSource, display: string, spec: FormatSpec, query: SearchQuery, compiled: CompiledQuery, hooks: SearchHooks, part?: PartStart): Promise<SearchOutcome> {
  if (joinsFragments(spec)) return searchJoined(source, display, spec, query, compiled, hooks);
  const parser = parserFor(spec);
  const fieldFilters = query.fields && query.fields.length > 0 ? query.fields : undefined;
  const filters = query.minLevel !== undefined || query.since !== undefined || query.until !== undefined || fieldFilters !== undefined;
  // Text a chunk must hold for any entry in it to pass the field filters: most chunks are skipped in their raw bytes.
  // (Only without a pattern: then every match is an entry's first line, which holds its fields.)
  const fieldTexts = query.pattern === undefined ? requiredTexts(fieldFilters, spec.format !== 'cri') : [];
  const fieldFinders = fieldTexts.flatMap((t) => ByteFinder.for(t, false) ?? []);
  const headsOnly = query.pattern === undefined;
  const context = query.contextLines;
  let lineNo = 1;
  let bytes = 0;
  let prevTail: string[] = part ? [...part.prevTail] : [];
  let prevHead: string | undefined = part?.prevHead;
  let pending: Pending[] = [];
  let found = 0;
  let stopped: SearchOutcome['stopped'];

  const finish = (out: SearchMatch[]): void => {
    if (out.length > 0) hooks.emit(out);
  };
  const flushPending = (lines: readonly string[]): SearchMatch[] => {
    const done: SearchMatch[] = [];
    for (const p of pending) {
      const take = lines.slice(0, p.left);
      p.match.after = [...(p.match.after ?? []), ...take.map((l) => clipAround(l, 0))];
      p.left -= take.length;
    }
    const still: Pending[] = [];
    for (const p of pending) {
      if (p.left > 0) still.push(p);
      else done.push(p.match);
    }
    pending = still;
    return done;
  };

  for await (const chunk of source.lineChunks()) {
    bytes += chunk.bytes.length;
    const ready: SearchMatch[] = [];
    if (pending.length > 0) ready.push(...flushPending(firstLines(chunk.bytes, context)));
    if (stopped) {
      finish(ready);
      if (pending.length === 0) break;
      continue;
    }
    let text: string | undefined;
    const decode = (): string => (text ??= decodeChunk(chunk.bytes));
    if (!fieldFinders.every((f) => f.occursIn(chunk.bytes)) || !compiled.chunkMayMatch(chunk.bytes, decode)) {
      lineNo += countNewlines(chunk.bytes);
      if (context > 0) prevTail = lastLines(chunk.bytes, context);
      prevHead = lastHead(chunk.bytes, parser) ?? prevHead;
      finish(ready);
      hooks.chunkDone();
      if (Date.now() > hooks.deadline) {
        stopped = 'time-budget';
        break;
      }
      continue;
    }
    const lines = splitLines(decode());
    // The latest entry start seen in this chunk, and how far back lines have been looked at for one.
    let chunkHead: string | undefined;
    let examinedTo = -1;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] as string;
      // Matches go out as soon as they are complete: a regular expression stuck on a later line
      // (terminated at the deadline) must not take them with it.
      if (ready.length > 0) finish(ready.splice(0));
      if ((i & 255) === 255 && Date.now() > hooks.deadline) {
        stopped = 'time-budget';
        break;
      }
      // Lines after a match that do not match themselves are its after-context. A line without
      // the filtered keys and values is no match either, and is never parsed.
      if ((fieldTexts.length > 0 && !fieldTexts.every((t) => line.includes(t))) || !compiled.lineMatches(line)) {
        if (pending.length > 0) ready.push(...flushPending([line]));
        continue;
      }
      let headLine: string | undefined = line;
      const isHead = parser.head(line) !== undefined;
      // Without a pattern the filters select entries: their first lines are the matches.
      if (headsOnly && !isHead) {
        if (pending.length > 0) ready.push(...flushPending([line]));
        continue;
      }
      if (!isHead) {
        // The entry started earlier: in this chunk or in an earlier one. Each line of the chunk is
        // looked at once for this, however many continuation lines match.
        for (let k = i - 1; k > examinedTo && k >= i - HEAD_LOOKBACK_LINES; k--) {
          if (parser.head(lines[k] as string) !== undefined) {
            chunkHead = lines[k];
            break;
          }
        }
        examinedTo = i - 1;
        headLine = chunkHead ?? prevHead;
      } else {
        chunkHead = line;
        examinedTo = i;
      }
      const head = headLine !== undefined ? parser.head(headLine) : undefined;
      if (filters) {
        if (!atLeast(head?.level, query.minLevel)) {
          if (pending.length > 0) ready.push(...flushPending([line]));
          continue;
        }
        if (query.since !== undefined || query.until !== undefined) {
          const t = head?.time;
          if (t === undefined || (query.since !== undefined && t < query.since) || (query.until !== undefined && t > query.until)) {
            if (pending.length > 0) ready.push(...flushPending([line]));
            continue;
          }
        }
        if (fieldFilters && !fieldsMatch(head?.record, fieldFilters)) {
          if (pending.length > 0) ready.push(...flushPending([line]));
          continue;
        }
      }
      if (pending.length > 0) ready.push(...flushPending([line]));
      if (found >= hooks.limit) {
        // One match more than wanted: there are more. The lines from here are the last matches' after-context.
        stopped = 'max-results';
        if (pending.length > 0) ready.push(...flushPending(lines.slice(i + 1, i + 1 + context)));
        break;
      }
      const match: SearchMatch = { file: display, line: lineNo + i, text: clipAround(line, compiled.locate(line)) };
      if (head?.time !== undefined) match.time = new Date(head.time).toISOString();
      if (head?.level !== undefined) match.level = head.level;
      if (!isHead && headLine !== undefined) match.entry = clipAround(headLine, 0);
      if (query.groupBy !== undefined) match.group = groupOf(head?.record, query.groupBy);
      if (context > 0) {
        const before = lines.slice(Math.max(0, i - context), i);
        const fromPrevious = context - before.length > 0 ? prevTail.slice(-(context - before.length)) : [];
        match.before = [...fromPrevious, ...before].map((l) => clipAround(l, 0));
        match.after = [];
        pending.push({ match, left: context });
      } else {
        ready.push(match);
      }
      found++;
    }
    lineNo += lines.length;
    if (context > 0) prevTail = lines.slice(-context);
    const tailHead = lastHead(chunk.bytes, parser);
    prevHead = tailHead ?? chunkHead ?? prevHead;
    finish(ready);
    hooks.chunkDone();
    if (stopped === 'time-budget' || (!stopped && Date.now() > hooks.deadline)) {
      stopped = 'time-budget';
      break;
    }
  }
  // The part ended with matches still waiting for after-context: it is in the lines after it.
  if (pending.length > 0 && stopped !== 'time-budget' && hooks.linesAfter) finish(flushPending(hooks.linesAfter(context)));
  // The file ended (or the search stopped) with matches still waiting for after-context.
  finish(pending.map((p) => p.match));
  pending = [];
  return { lines: lineNo - 1, bytes, ...(stopped ? { stopped } : {}) };
}

/** Bytes that only a CRI partial line holds: a chunk without them (and without fragments waiting) has no entry to join. */
const PARTIAL_TAGS = [Buffer.from(' stdout P '), Buffer.from(' stderr P ')];
/** The tag of a stream's F line: what ends the fragments waiting on that stream. */
const END_TAGS = { stdout: Buffer.from(' stdout F '), stderr: Buffer.from(' stderr F ') } as const;
/** Lines kept for the before-context of an entry whose fragments span many lines. */
const RECENT_LINES = 256;

/**
 * The search of a CRI file whose partial lines are joined: the pattern and the filters see each
 * entry whole (a pattern may span the cut between two fragments; the fields of a JSON line split
 * in fragments are found). A match is the joined entry, numbered by its first fragment's line;
 * its context lines are the file's lines before that and after its last fragment. Matches go out
 * in line order (an entry of one stream waiting for its F line holds back later ones). The file is
 * never cut in parts (planParts leaves CRI files whole), so every fragment is seen by this loop.
 */
async function searchJoined(source: RawSource, display: string, spec: FormatSpec, query: SearchQuery, compiled: CompiledQuery, hooks: SearchHooks): Promise<SearchOutcome> {
  const parser = parserFor(spec);
  const fieldFilters = query.fields && query.fields.length > 0 ? query.fields : undefined;
  const fieldTexts = query.pattern === undefined ? requiredTexts(fieldFilters, false) : [];
  const fieldFinders = fieldTexts.flatMap((t) => ByteFinder.for(t, false) ?? []);
  const context = query.contextLines;
  const joiner = new CriJoiner();
  // The last lines read, by index, for before-context.
  const recent: { index: number; text: string }[] = [];
  let pending: Pending[] = [];
  let done: SearchMatch[] = [];
  let index = 0;
  let bytes = 0;
  let found = 0;
  let stopped: SearchOutcome['stopped'];

  const release = (all: boolean): void => {
    if (done.length === 0) return;
    const oldest = all ? Infinity : (joiner.oldestPending ?? Infinity) + 1;
    const waiting = pending.reduce((n, p) => Math.min(n, p.match.line), Infinity);
    const limit = Math.min(oldest, waiting);
    done.sort((a, b) => a.line - b.line);
    const out = all ? done : done.filter((m) => m.line < limit);
    done = all ? [] : done.filter((m) => m.line >= limit);
    if (out.length > 0) hooks.emit(out);
  };
  const after = (line: string): void => {
    if (pending.length === 0) return;
    for (const p of pending) {
      (p.match.after ??= []).push(clipAround(line, 0));
      p.left--;
    }
    done.push(...pending.filter((p) => p.left <= 0).map((p) => p.match));
    pending = pending.filter((p) => p.left > 0);
  };
  const consider = (entry: { line: string; first: number }): void => {
    const { line } = entry;
    if (fieldTexts.length > 0 && !fieldTexts.every((t) => line.includes(t))) return;
    if (!compiled.lineMatches(line)) return;
    const head = parser.head(line);
    if (query.pattern === undefined && head === undefined) return;
    if (!atLeast(head?.level, query.minLevel)) return;
    if (query.since !== undefined || query.until !== undefined) {
      const t = head?.time;
      if (t === undefined || (query.since !== undefined && t < query.since) || (query.until !== undefined && t > query.until)) return;
    }
    if (fieldFilters && !fieldsMatch(head?.record, fieldFilters)) return;
    if (found >= hooks.limit) {
      stopped = 'max-results';
      return;
    }
    found++;
    const match: SearchMatch = { file: display, line: entry.first + 1, text: clipAround(line, compiled.locate(line)) };
    if (head?.time !== undefined) match.time = new Date(head.time).toISOString();
    if (head?.level !== undefined) match.level = head.level;
    if (query.groupBy !== undefined) match.group = groupOf(head?.record, query.groupBy);
    if (context > 0) {
      match.before = recent.filter((r) => r.index < entry.first && r.index >= entry.first - context).map((r) => clipAround(r.text, 0));
      match.after = [];
      pending.push({ match, left: context });
    } else done.push(match);
  };

  for await (const chunk of source.lineChunks()) {
    bytes += chunk.bytes.length;
    if (stopped) {
      // Only after-context is still wanted.
      for (const line of firstLines(chunk.bytes, context)) after(line);
      index += countNewlines(chunk.bytes);
      if (pending.length === 0) break;
      continue;
    }
    const fragments = joiner.pending || PARTIAL_TAGS.some((t) => chunk.bytes.includes(t));
    // No line of the chunk matches by itself: only an entry joined from fragments still may (a pattern across a cut).
    const unmatched = pending.length === 0 && (!fieldFinders.every((f) => f.occursIn(chunk.bytes)) || !compiled.chunkMayMatch(chunk.bytes, () => decodeChunk(chunk.bytes)));
    if (unmatched && fragments && context === 0) {
      // Only fragments, and the F lines that end them, are decoded and joined: the next such line is found by its tag
      // in the raw bytes (a tag's text inside a message only costs a look at that line), the lines between are counted.
      const b = chunk.bytes;
      // Where each tag occurs next: looked for again only once passed, so the chunk is read about once per tag.
      const found = new Map<Buffer, number>();
      const nextOf = (tag: Buffer, start: number): number => {
        let at = found.get(tag);
        if (at === undefined || (at !== -1 && at < start)) {
          at = b.indexOf(tag, start);
          found.set(tag, at);
        }
        return at;
      };
      for (let start = 0; start < b.length; ) {
        let next = -1;
        for (const tag of [...PARTIAL_TAGS, ...[...joiner.waiting].map((s) => END_TAGS[s])]) {
          const at = nextOf(tag, start);
          if (at !== -1 && (next === -1 || at < next)) next = at;
        }
        const lineStart = next === -1 ? b.length : b.lastIndexOf(NEWLINE, next) + 1;
        const skipped = countNewlines(b, Math.min(start, lineStart), lineStart);
        joiner.skipWhole(skipped);
        index += skipped;
        if (next === -1) {
          // The last line of the file may lack its newline: it is a line too.
          if (b[b.length - 1] !== NEWLINE && lineStart > start) {
            joiner.skipWhole(1);
            index++;
          }
          break;
        }
        const nl = b.indexOf(NEWLINE, next);
        const end = nl === -1 ? b.length : nl;
        let line = b.toString('utf8', lineStart, end);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        const entry = joiner.push(line);
        index++;
        if (entry && entry.lines > 1) consider(entry);
        start = end + 1;
        if (stopped || Date.now() > hooks.deadline) {
          stopped ??= 'time-budget';
          break;
        }
      }
      release(false);
    } else if (unmatched && !fragments) {
      const n = countNewlines(chunk.bytes);
      recent.length = 0;
      if (context > 0) {
        const tail = lastLines(chunk.bytes, context);
        tail.forEach((text, k) => recent.push({ index: index + n - tail.length + k, text }));
      }
      index += n;
    } else {
      const lines = splitLines(decodeChunk(chunk.bytes));
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] as string;
        if ((i & 255) === 255 && Date.now() > hooks.deadline) {
          stopped = 'time-budget';
          break;
        }
        after(line);
        const entry = joiner.push(line);
        if (context > 0) {
          recent.push({ index, text: line });
          if (recent.length > RECENT_LINES + context) recent.splice(0, recent.length - context);
        }
        index++;
        if (entry) consider(entry);
        if (stopped) {
          for (const rest of lines.slice(i + 1, i + 1 + context)) after(rest);
          break;
        }
      }
      release(false);
    }
    hooks.chunkDone();
    if (stopped === 'time-budget' || (!stopped && Date.now() > hooks.deadline)) {
      stopped = 'time-budget';
      break;
    }
  }
  // Fragments whose F line is not in this file: an entry of their own, marked as never finished.
  if (!stopped) for (const entry of joiner.flush()) consider(entry);
  done.push(...pending.map((p) => p.match));
  pending = [];
  release(true);
  return { lines: index, bytes, ...(stopped ? { stopped } : {}) };
}
