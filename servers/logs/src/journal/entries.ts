import type { Level } from '../levels.js';

/**
 * A journal entry as `journalctl -o export` writes it, turned into one JSON line of the shape the
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

export function levelOfPriority(value: string | undefined): Level | undefined {
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

/**
 * An entry from its fields as `journalctl -o export` gives them (each field's values in order: a
 * field may occur more than once), or undefined without a cursor and a time. Values are bytes
 * decoded as UTF-8; control characters stay in them, for the tools' answers to show as escapes.
 */
export function journalEntry(fields: ReadonlyMap<string, string[]>): JournalEntry | undefined {
  const one = (name: string): string | undefined => fields.get(name)?.[0];
  const cursor = one('__CURSOR');
  const realtime = one('__REALTIME_TIMESTAMP');
  if (cursor === undefined || realtime === undefined || !/^\d{1,17}$/.test(realtime)) return undefined;
  const micros = Number(realtime);
  const value = (name: string): string | string[] | undefined => {
    const all = fields.get(name);
    if (!all || all.length === 0) return undefined;
    return all.length === 1 ? clipField(all[0] as string) : all.map(clipField);
  };
  const out: Record<string, unknown> = { time: isoMicros(micros) };
  const level = levelOfPriority(one('PRIORITY'));
  if (level !== undefined) out.level = level;
  const message = value('MESSAGE');
  out.message = Array.isArray(message) ? message.join('\n') : (message ?? '');
  for (const key of LEADING) {
    const v = value(key);
    if (v !== undefined) out[key] = v;
  }
  for (const key of fields.keys()) {
    if (DROPPED.has(key) || key in out) continue;
    const v = value(key);
    if (v !== undefined) out[key] = v;
  }
  return { cursor, micros, line: JSON.stringify(out) };
}
