/**
 * What the log viewer shows, from the tools' structured results: no DOM here, so Node tests check
 * it against the real server. Lines are read with the server's own parsers (the format tail_log
 * reports), so a line's level and whether it continues an entry are what the server decided.
 */
import { fieldText } from '../src/fields.js';
import { DEFAULT_JSON_FIELDS, parserFor, type LogFormat } from '../src/formats/parsers.js';
import { LEVELS, type Level } from '../src/levels.js';

export { LEVELS, type Level };
export type BucketLevel = Level | 'unknown';

export interface ViewLine {
  text: string;
  /** The level of the entry the line belongs to. */
  level: Level | undefined;
  /** A continuation line (a stack frame): it belongs to the entry above. */
  continuation: boolean;
  /** Where it came from, for search matches (`file:line`). */
  source?: string;
  /** A structured entry's fields (JSON lines, logfmt, container logs), as text: the viewer's columns. */
  fields?: Record<string, string>;
}

/** Columns at most, and characters of a cell. */
const MAX_COLUMNS = 8;
const MAX_CELL = 80;
/** Fields the line already shows (its level colour, its text): not repeated as columns. */
const SHOWN = new Set([...DEFAULT_JSON_FIELDS.level, ...DEFAULT_JSON_FIELDS.time, ...DEFAULT_JSON_FIELDS.message, 'v', 'pid', 'hostname']);

/** The top-level fields of an entry, as cell text. */
function cells(record: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!record) return undefined;
  const out: Record<string, string> = {};
  let n = 0;
  for (const [key, value] of Object.entries(record)) {
    if (SHOWN.has(key) || n >= 32) continue;
    const text = fieldText(value) ?? '';
    out[key] = text.length > MAX_CELL ? `${text.slice(0, MAX_CELL)}…` : text;
    n++;
  }
  return n > 0 ? out : undefined;
}

/** The columns of a view: the fields its lines have, in the order they first appear, at most 8. */
export function columnsOf(lines: readonly ViewLine[]): string[] {
  const out: string[] = [];
  for (const line of lines) {
    if (line.fields === undefined) continue;
    for (const key of Object.keys(line.fields)) if (!out.includes(key) && out.length < MAX_COLUMNS) out.push(key);
    if (out.length >= MAX_COLUMNS) break;
  }
  return out;
}

export interface Bucket {
  start: string;
  counts: Partial<Record<BucketLevel, number>>;
  total: number;
}

export interface Histogram {
  bucket: string;
  buckets: Bucket[];
  max: number;
}

/** tail_log's lines (or read_new_lines'), each with its entry's level. */
export function classifyLines(lines: readonly string[], format: LogFormat, previous?: ViewLine): ViewLine[] {
  const parser = parserFor({ format, json: DEFAULT_JSON_FIELDS, reference: Date.now() });
  let level = previous?.level;
  let inEntry = previous !== undefined;
  return lines.map((text) => {
    const head = parser.head(text, false);
    if (head) {
      level = head.level;
      inEntry = true;
      const fields = head.record ? cells(head.record) : undefined;
      return fields ? { text, level, continuation: false, fields } : { text, level, continuation: false };
    }
    return { text, level: inEntry ? level : undefined, continuation: inEntry };
  });
}

interface SearchMatch {
  file: string;
  line: number;
  text: string;
  level?: Level;
  entry?: string;
  container?: string;
}

/** search_logs' matches: one line each, with where it is. */
export function searchLines(matches: readonly SearchMatch[]): ViewLine[] {
  return matches.map((m) => ({ text: m.text, level: m.level, continuation: m.entry !== undefined, source: `${m.container !== undefined ? `${m.container} ` : ''}${m.file}:${m.line}` }));
}

interface StatsLike {
  bucket: string;
  timeline: { start: string; counts: Partial<Record<BucketLevel, number>> }[];
}

/** log_stats' timeline as bars: the counts exactly as the tool gave them. */
export function histogramOf(stats: StatsLike): Histogram {
  const buckets = stats.timeline.map((b) => ({ start: b.start, counts: b.counts, total: Object.values(b.counts).reduce((sum, n) => sum + (n ?? 0), 0) }));
  return { bucket: stats.bucket, buckets, max: buckets.reduce((m, b) => Math.max(m, b.total), 0) };
}

/** Levels from the most severe down, as the bars stack them (most severe on top). */
export const STACK_ORDER: readonly BucketLevel[] = [...[...LEVELS].reverse(), 'unknown'];
