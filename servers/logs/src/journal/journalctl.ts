import { CancelledError, ToolError, spawnManaged } from '@suite/shared';
import type { JournalSource } from '../config.js';
import { journalEntry, type JournalEntry } from './entries.js';

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
  let bytes = 0;
  let timedOut = false;
  async function* run(): AsyncGenerator<JournalEntry> {
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
    const parser = new ExportParser();
    let produced = 0;
    try {
      for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        for (const fields of parser.push(chunk)) {
          const entry = journalEntry(fields);
          if (entry) {
            produced++;
            yield entry;
          }
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
