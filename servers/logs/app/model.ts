/**
 * What the log viewer shows, from the tools' structured results: no DOM here, so Node tests check
 * it against the real server. Lines are read with the server's own parsers (the format tail_log
 * reports), so a line's level and whether it continues an entry are what the server decided.
 */
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
      return { text, level, continuation: false };
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
}

/** search_logs' matches: one line each, with where it is. */
export function searchLines(matches: readonly SearchMatch[]): ViewLine[] {
  return matches.map((m) => ({ text: m.text, level: m.level, continuation: m.entry !== undefined, source: `${m.file}:${m.line}` }));
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
