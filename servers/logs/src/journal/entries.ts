import { LEVELS, type Level } from '../levels.js';

/**
 * A journal entry as `journalctl -o json` writes it, turned into one JSON line of the shape the
 * JSON-lines parser already reads (`time`, `level`, `message`, then the journal's own fields), so
 * search, statistics, field filters, group_by and the viewer's columns work on the journal as on
 * any JSON log. A leaf of the package apart from levels.
 */

/** syslog severities 0..7 as our levels. */
const PRIORITY_LEVELS: readonly Level[] = ['emergency', 'alert', 'critical', 'error', 'warning', 'notice', 'info', 'debug'];

/** The `--priority` a level filter asks journalctl for: that severity and the more severe ones (trace and debug: all). */
export function priorityOf(level: Level): number {
  const index = PRIORITY_LEVELS.indexOf(level);
  return index === -1 ? 7 : index;
}

export function levelOfPriority(value: unknown): Level | undefined {
  const n = typeof value === 'string' && /^[0-7]$/.test(value) ? Number(value) : undefined;
  return n === undefined ? undefined : PRIORITY_LEVELS[n];
}

/**
 * Fields left out of the line: what the line says otherwise (time, message), the reader's
 * bookkeeping (cursor, sequence numbers, monotonic time), and long trusted fields that only add noise.
 */
const DROPPED = new Set([
  '__CURSOR',
  '__REALTIME_TIMESTAMP',
  '__MONOTONIC_TIMESTAMP',
  '__SEQNUM',
  '__SEQNUM_ID',
  'MESSAGE',
  '_SOURCE_REALTIME_TIMESTAMP',
  '_SOURCE_MONOTONIC_TIMESTAMP',
  '_CAP_EFFECTIVE',
  '_SELINUX_CONTEXT',
  '_STREAM_ID',
]);

/** The fields shown first (and so as the viewer's first columns), in this order. */
const LEADING = ['_SYSTEMD_UNIT', 'SYSLOG_IDENTIFIER', '_PID', '_BOOT_ID', '_HOSTNAME', '_TRANSPORT', 'PRIORITY'];

/** A field's value is cut to this many characters: a journal field may hold megabytes. */
export const MAX_FIELD_CHARS = 64 * 1024;

/**
 * A field's text. journalctl writes a value that is not printable UTF-8 (binary data, or text with
 * control characters such as terminal escapes) as an array of byte values, and a field that occurs
 * more than once in an entry as an array of its values.
 */
export function fieldValue(value: unknown): string | string[] | undefined {
  if (typeof value === 'string') return clipField(value);
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'number')) return clipField(Buffer.from(value.slice(0, MAX_FIELD_CHARS * 4) as number[]).toString('utf8'));
    const all = value.map((v) => fieldValue(v)).filter((v): v is string => typeof v === 'string');
    return all.length > 0 ? all : undefined;
  }
  return undefined;
}

function clipField(text: string): string {
  return text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS)}…` : text;
}

export interface JournalEntry {
  cursor: string;
  /** Microseconds since the epoch. */
  micros: number;
  /** The entry as one JSON line. */
  line: string;
}

function isoMicros(micros: number): string {
  const ms = Math.floor(micros / 1000);
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}

/** One line of `journalctl -o json` as an entry, or undefined when it is not one (a hint journalctl printed, garbage). */
export function parseJournalLine(text: string): JournalEntry | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const cursor = r.__CURSOR;
  const realtime = r.__REALTIME_TIMESTAMP;
  if (typeof cursor !== 'string' || typeof realtime !== 'string' || !/^\d{1,17}$/.test(realtime)) return undefined;
  const micros = Number(realtime);
  const out: Record<string, unknown> = { time: isoMicros(micros) };
  const level = levelOfPriority(r.PRIORITY);
  if (level !== undefined && (LEVELS as readonly string[]).includes(level)) out.level = level;
  const message = fieldValue(r.MESSAGE);
  out.message = Array.isArray(message) ? message.join('\n') : (message ?? '');
  for (const key of LEADING) {
    const value = fieldValue(r[key]);
    if (value !== undefined) out[key] = value;
  }
  for (const [key, value] of Object.entries(r)) {
    if (DROPPED.has(key) || key in out) continue;
    const text = fieldValue(value);
    if (text !== undefined) out[key] = text;
  }
  return { cursor, micros, line: JSON.stringify(out) };
}
