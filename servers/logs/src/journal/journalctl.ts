import { CancelledError, ToolError, spawnManaged } from '@suite/shared';
import type { JournalSource } from '../config.js';
import { journalEntry, type JournalEntry } from './entries.js';
import type { EntryPrefilter } from './prefilter.js';

/**
 * Reading the journal through `journalctl -o export` (its own serialisation: several times faster
 * to write and to read than `-o json`, and binary values come as bytes): the only reader of journal files that knows
 * every version of their format, their compression and their locking. Always an argument array
 * (never a shell), in a process group of its own that is stopped when the caller stops reading,
 * at the deadline, or when the request is cancelled. What journalctl can filter with its indexes
 * (unit, priority, time, exact field values, cursor) it filters; the rest is ours.
 */

export const JOURNALCTL = 'journalctl';

export interface JournalQuery {
  /** `--unit`: the unit's own entries and systemd's about it. */
  unit?: string;
  /** `--priority 0..N`: that severity and the more severe ones. */
  maxPriority?: number;
  /** Milliseconds since the epoch. */
  since?: number;
  until?: number;
  /** Exact field matches (`_BOOT_ID=…`), ANDed. */
  matches?: string[];
  /** Entries after this cursor only. */
  afterCursor?: string;
  /** Newest first. */
  reverse?: boolean;
  /** `-n`: the last N entries (oldest first unless reverse). */
  lines?: number;
}

/** A journal field name as journald allows it: a match on anything else is not passed to journalctl. */
export const FIELD_NAME = /^[A-Z0-9_]{1,64}$/;
/** Unit names as systemd writes them (a template instance may hold \x escapes); a glob is refused. */
export const UNIT_NAME = /^[A-Za-z0-9:_.@\\-]{1,256}$/;

function seconds(ms: number): string {
  return `@${(ms / 1000).toFixed(3)}`;
}

export function sourceArgs(source: JournalSource): string[] {
  return source.kind === 'directory' ? ['--directory', source.directory] : [];
}

export function journalArgs(source: JournalSource, query: JournalQuery): string[] {
  const args = ['--output', 'export', '--no-pager', '--quiet', ...sourceArgs(source)];
  if (query.unit !== undefined) args.push('--unit', query.unit);
  if (query.maxPriority !== undefined && query.maxPriority < 7) args.push('--priority', `0..${query.maxPriority}`);
  if (query.since !== undefined) args.push('--since', seconds(query.since));
  if (query.until !== undefined) args.push('--until', seconds(query.until));
  if (query.afterCursor !== undefined) args.push('--after-cursor', query.afterCursor);
  if (query.reverse) args.push('--reverse');
  if (query.lines !== undefined) args.push('--lines', String(query.lines));
  // Matches come last, after `--`: a value is never read as an option.
  if (query.matches && query.matches.length > 0) args.push('--', ...query.matches);
  return args;
}

/** A field value longer than this (a hostile entry) is left out, not buffered: its bytes are skipped. */
const MAX_FIELD_BYTES = 8 * 1024 * 1024;
const MAX_STDERR = 4096;

export interface ReadOptions {
  signal: AbortSignal;
  /** Stop (and stop journalctl) at this time. */
  deadline?: number;
}

export interface EntryStream {
  entries: AsyncGenerator<JournalEntry>;
  /** Bytes of journalctl output read so far. */
  bytes(): number;
  /** Whether the deadline ended the stream before journalctl did. */
  timedOut(): boolean;
}

/**
 * The entries journalctl gives for a query, as they come. Breaking out of the loop stops the
 * process. A journalctl that fails (a missing directory, a corrupt cursor) is a ToolError with
 * what it said.
 */
export function readJournal(source: JournalSource, query: JournalQuery, options: ReadOptions): EntryStream {
  const parser = new ExportParser();
  return spawnReader(source, query, options, (chunk) => parser.push(chunk).flatMap((fields) => journalEntry(fields) ?? []));
}

export interface FilteredStream {
  /** Entries that may match, and between them the number of entries left out (each would have been one line). */
  entries: AsyncGenerator<JournalEntry | number>;
  bytes(): number;
  timedOut(): boolean;
}

/** readJournal, with the entries whose export bytes cannot hold a match of the search counted, not made into lines. */
export function readJournalFiltered(source: JournalSource, query: JournalQuery, options: ReadOptions, prefilter: EntryPrefilter): FilteredStream {
  const parser = new FilteringExportParser(prefilter);
  return spawnReader(source, query, options, (chunk) => parser.push(chunk).flatMap((item) => (typeof item === 'number' ? item : (journalEntry(item) ?? []))));
}

function spawnReader<T extends JournalEntry | number>(source: JournalSource, query: JournalQuery, options: ReadOptions, parse: (chunk: Buffer) => T[]): { entries: AsyncGenerator<T>; bytes(): number; timedOut(): boolean } {
  let bytes = 0;
  let timedOut = false;
  async function* run(): AsyncGenerator<T> {
    if (options.signal.aborted) throw new CancelledError();
    const child = spawnManaged(JOURNALCTL, journalArgs(source, query), { stderr: 'pipe', env: { SYSTEMD_PAGER: 'cat', SYSTEMD_COLORS: '0' } });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_STDERR) stderr += chunk.toString('utf8');
    });
    const onAbort = (): void => child.kill('SIGTERM');
    options.signal.addEventListener('abort', onAbort, { once: true });
    const timer = options.deadline !== undefined ? setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
    }, Math.max(0, options.deadline - Date.now())) : undefined;
    let produced = 0;
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        for (const item of parse(chunk)) {
          produced++;
          yield item;
        }
      }
      const exit = await child.exited;
      if (options.signal.aborted) throw new CancelledError();
      if (exit.error) throw ToolError.unavailable(`journalctl could not be started (${exit.error.message}). Install systemd's journalctl to read the journal.`);
      if (!timedOut && exit.exitCode !== 0 && produced === 0) throw journalFailure(stderr);
    } finally {
      if (timer) clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      if (!child.hasExited) await child.terminate(500);
    }
  }
  return { entries: run(), bytes: () => bytes, timedOut: () => timedOut };
}

/** journalctl's complaint as an actionable error (its first line: what it could not do). */
function journalFailure(stderr: string): ToolError {
  const said = stderr.split('\n').map((l) => l.trim()).find((l) => l.length > 0 && !l.startsWith('Hint:'));
  if (said && /cursor/i.test(said)) return ToolError.invalidArgument(`journalctl refused the cursor (${said.slice(0, 300)}). Call without a cursor to start again from the end of the journal.`);
  return ToolError.unavailable(`journalctl failed${said ? `: ${said.slice(0, 300)}` : ''}. Check that the journal directory holds journal files the server's user may read.`);
}

/** All entries of a query, up to `max` (the stream is stopped there). */
export async function collect(stream: EntryStream, max: number): Promise<JournalEntry[]> {
  const out: JournalEntry[] = [];
  for await (const entry of stream.entries) {
    out.push(entry);
    if (out.length >= max) break;
  }
  return out;
}

/** The values a field takes in a source (`journalctl -F`), at most `max`. */
export async function fieldValues(source: JournalSource, field: string, options: ReadOptions & { max: number }): Promise<string[]> {
  const child = spawnManaged(JOURNALCTL, ['--no-pager', '--quiet', ...sourceArgs(source), '--field', field], { stderr: 'ignore', env: { SYSTEMD_COLORS: '0' } });
  const onAbort = (): void => child.kill('SIGTERM');
  options.signal.addEventListener('abort', onAbort, { once: true });
  const values: string[] = [];
  let rest = '';
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const part of parts) if (part !== '' && values.length < options.max) values.push(part);
      if (values.length >= options.max || (options.deadline !== undefined && Date.now() > options.deadline)) break;
    }
  } finally {
    options.signal.removeEventListener('abort', onAbort);
    if (!child.hasExited) await child.terminate(500);
  }
  return values.sort();
}

/**
 * `journalctl -o export`, parsed as it streams: an entry is fields up to an empty line; a field is
 * `NAME=text` on one line, or (for a value that is not printable text) `NAME`, a newline, its size
 * as 64-bit little endian, the bytes and a newline. Memory stays bounded: a value over
 * MAX_FIELD_BYTES is skipped and named as left out.
 */
export class ExportParser {
  private buffer = Buffer.alloc(0);
  private fields = new Map<string, string[]>();
  /** Bytes of an oversized value still to skip (plus its newline). */
  private skip = 0;
  /** A text line too long to keep: skipped to its newline. */
  private skipLine = false;

  private add(name: string, value: string): void {
    const all = this.fields.get(name);
    if (all) all.push(value);
    else this.fields.set(name, [value]);
  }

  push(chunk: Buffer): Map<string, string[]>[] {
    const out: Map<string, string[]>[] = [];
    let data = chunk;
    if (this.skip > 0) {
      const n = Math.min(this.skip, data.length);
      this.skip -= n;
      data = data.subarray(n);
    }
    const buf = this.buffer.length > 0 ? Buffer.concat([this.buffer, data]) : data;
    let pos = 0;
    for (;;) {
      if (this.skipLine) {
        const nl = buf.indexOf(0x0a, pos);
        if (nl === -1) {
          pos = buf.length;
          break;
        }
        this.skipLine = false;
        pos = nl + 1;
        continue;
      }
      const nl = buf.indexOf(0x0a, pos);
      if (nl === -1) {
        if (buf.length - pos > MAX_FIELD_BYTES) {
          this.skipLine = true;
          pos = buf.length;
        }
        break;
      }
      if (nl === pos) {
        if (this.fields.size > 0) out.push(this.fields);
        this.fields = new Map();
        pos = nl + 1;
        continue;
      }
      // Field names are short: the `=` is looked for among their bytes only.
      let eq = pos;
      while (eq < nl && eq - pos < 80 && buf[eq] !== 0x3d) eq++;
      if (eq < nl && buf[eq] === 0x3d) {
        this.add(buf.toString('latin1', pos, eq), buf.toString('utf8', eq + 1, nl));
        pos = nl + 1;
        continue;
      }
      if (buf.length < nl + 9) break;
      const size = Number(buf.readBigUInt64LE(nl + 1));
      const name = buf.toString('latin1', pos, nl);
      if (size > MAX_FIELD_BYTES) {
        this.add(name, `[${size} bytes left out]`);
        const available = buf.length - (nl + 9);
        if (available >= size + 1) pos = nl + 9 + size + 1;
        else {
          this.skip = size + 1 - available;
          pos = buf.length;
        }
        continue;
      }
      if (buf.length < nl + 9 + size + 1) break;
      this.add(name, buf.toString('utf8', nl + 9, nl + 9 + size));
      pos = nl + 9 + size + 1;
    }
    this.buffer = pos >= buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(pos));
    return out;
  }
}

const BOUNDARY = Buffer.from('\n\n');
/**
 * Bytes that hold no NUL hold no field in the binary form (its 64-bit size has NUL bytes; text
 * fields are printable): there every entry ends at an empty line. A false empty line can end
 * within the first 9 bytes of a binary field's start (its name's newline, then size bytes).
 */
const BINARY_REACH = 10;
/** An entry still incomplete at this size goes to ExportParser, which skips oversized values. */
const MAX_PENDING = 1024 * 1024;

/**
 * The export format read for a search that has an EntryPrefilter: runs of entries in text form
 * are searched for the prefilter's bytes and only the entries holding a hit are parsed (the rest
 * are counted); an entry with a binary field is always parsed (its bytes are not its text). Gives
 * fields as ExportParser does, and numbers of entries left out.
 */
export class FilteringExportParser {
  private pending = Buffer.alloc(0);
  private fallback: ExportParser | undefined;

  constructor(private readonly prefilter: EntryPrefilter) {}

  push(chunk: Buffer): (Map<string, string[]> | number)[] {
    if (this.fallback) return this.fallback.push(chunk);
    const buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const out: (Map<string, string[]> | number)[] = [];
    let left = 0;
    let pos = 0;
    while (pos < buf.length) {
      const nul = buf.indexOf(0, pos);
      const limit = (nul === -1 ? buf.length : nul) - BINARY_REACH;
      const last = limit >= pos ? buf.lastIndexOf(BOUNDARY, limit) : -1;
      if (last >= pos) {
        const end = last + 2;
        left = this.scan(buf.subarray(pos, end), out, left);
        pos = end;
        continue;
      }
      const entry = parseEntry(buf, pos);
      if (entry === 'incomplete') break;
      if (entry === 'oversized') {
        this.toFallback(buf, pos, out, left);
        return out;
      }
      if (!entry.binary && !this.hit(buf.subarray(pos, entry.end))) left++;
      else {
        if (left > 0) out.push(left);
        left = 0;
        if (entry.fields.size > 0) out.push(entry.fields);
      }
      pos = entry.end;
    }
    if (left > 0) out.push(left);
    if (buf.length - pos > MAX_PENDING) {
      this.toFallback(buf, pos, out, 0);
      return out;
    }
    this.pending = pos >= buf.length ? Buffer.alloc(0) : Buffer.from(buf.subarray(pos));
    return out;
  }

  private hit(bytes: Buffer): boolean {
    return this.prefilter.finders.some((f) => f.find(bytes, 0) !== -1);
  }

  private toFallback(buf: Buffer, pos: number, out: (Map<string, string[]> | number)[], left: number): void {
    if (left > 0) out.push(left);
    this.fallback = new ExportParser();
    out.push(...this.fallback.push(buf.subarray(pos)));
    this.pending = Buffer.alloc(0);
  }

  /**
   * Entries of text fields only, each ending at an empty line: those with a hit go to `out`, each
   * after the count of entries left out before it (`left`: those already counted before the
   * region); returns the count left out since the last entry that went out.
   */
  private scan(region: Buffer, out: (Map<string, string[]> | number)[], left: number): number {
    const finders = this.prefilter.finders;
    const next = finders.map((f) => f.find(region, 0));
    let at = 0;
    for (;;) {
      let hit = -1;
      for (let i = 0; i < next.length; i++) {
        let n = next[i] as number;
        if (n !== -1 && n < at) next[i] = n = (finders[i] as (typeof finders)[number]).find(region, at);
        if (n !== -1 && (hit === -1 || n < hit)) hit = n;
      }
      if (hit === -1) break;
      const previous = hit >= 2 ? region.lastIndexOf(BOUNDARY, hit - 2) : -1;
      const start = previous === -1 || previous + 2 < at ? at : previous + 2;
      left += countBoundaries(region, at, start);
      const entry = parseEntry(region, start);
      if (typeof entry === 'string') {
        // Not the export format (a field line without `=` in a run of text fields): left out.
        left++;
        const end = region.indexOf(BOUNDARY, hit);
        at = end === -1 ? region.length : end + 2;
        continue;
      }
      if (left > 0) out.push(left);
      left = 0;
      if (entry.fields.size > 0) out.push(entry.fields);
      at = entry.end;
    }
    return left + countBoundaries(region, at, region.length);
  }
}

function countBoundaries(buf: Buffer, from: number, to: number): number {
  let n = 0;
  for (let i = buf.indexOf(BOUNDARY, from); i !== -1 && i + 2 <= to; i = buf.indexOf(BOUNDARY, i + 2)) n++;
  return n;
}

/** One entry from `pos` (its fields, and where the next starts), as ExportParser reads it. */
function parseEntry(buf: Buffer, pos: number): { fields: Map<string, string[]>; end: number; binary: boolean } | 'incomplete' | 'oversized' {
  const fields = new Map<string, string[]>();
  let binary = false;
  const add = (name: string, value: string): void => {
    const all = fields.get(name);
    if (all) all.push(value);
    else fields.set(name, [value]);
  };
  for (;;) {
    const nl = buf.indexOf(0x0a, pos);
    if (nl === -1) return 'incomplete';
    if (nl === pos) return { fields, end: nl + 1, binary };
    let eq = pos;
    while (eq < nl && eq - pos < 80 && buf[eq] !== 0x3d) eq++;
    if (eq < nl && buf[eq] === 0x3d) {
      add(buf.toString('latin1', pos, eq), buf.toString('utf8', eq + 1, nl));
      pos = nl + 1;
      continue;
    }
    if (buf.length < nl + 9) return 'incomplete';
    const size = Number(buf.readBigUInt64LE(nl + 1));
    if (size > MAX_FIELD_BYTES) return 'oversized';
    if (buf.length < nl + 9 + size + 1) return 'incomplete';
    binary = true;
    add(buf.toString('latin1', pos, nl), buf.toString('utf8', nl + 9, nl + 9 + size));
    pos = nl + 9 + size + 1;
  }
}
