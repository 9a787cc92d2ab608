import { decodeChunk, splitLines, type RawSource } from './chunks.js';
import { fieldsMatch, groupOf } from './fields.js';
import { CriJoiner, joinsFragments } from './formats/cri.js';
import { parserFor, type FormatSpec } from './formats/parsers.js';
import { LEVELS, LEVEL_RANK, type Level } from './levels.js';
import { normalizeMessage } from './normalize.js';
import type { LevelKey, StatsQuery, StatsResult, TopMessage } from './scan-protocol.js';

/**
 * Statistics over whole files, as the scan worker computes them: entries per level, a timeline of
 * levels per time bucket, and the most frequent error messages after normalisation. One pass,
 * memory bounded: the timeline starts at one-minute buckets and coarsens when it holds too many;
 * error patterns are tracked up to a cap, past which the ones seen once are dropped (counts of the
 * frequent ones stay exact unless a pattern first appears after that).
 */

const MINUTE = 60_000;
const MAX_TIMELINE_KEYS = 20_000;
const MAX_PATTERNS = 5000;
/** Distinct group_by values tracked; entries of later values count under `groupsOther`. */
const MAX_GROUPS = 2000;
/** Groups in a result, the largest first. */
const SHOWN_GROUPS = 50;
const TARGET_BUCKETS = 60;
const BUCKETS = [MINUTE, 5 * MINUTE, 15 * MINUTE, 30 * MINUTE, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000, 86_400_000, 7 * 86_400_000];
const KEYS: readonly LevelKey[] = [...LEVELS, 'unknown'];
const UNKNOWN = LEVELS.length;
/**
 * Times this far past the moment the statistics are computed cannot be a log's (a clock a little
 * ahead, a zone written wrong, are within it); neither can times before 1990. Such entries (garbage
 * that looks like a timestamp, often from a damaged file) count as without a time.
 */
const FUTURE_SLACK_MS = 7 * 86_400_000;
const EARLIEST = Date.UTC(1990, 0, 1);

interface PatternCount {
  count: number;
  example: string;
  level: Level;
  first?: number;
  last?: number;
}

export class StatsAccumulator {
  private entries = 0;
  private continuationLines = 0;
  private readonly levels = new Array<number>(KEYS.length).fill(0);
  private withoutTime = 0;
  private first: number | undefined;
  private last: number | undefined;
  /** Width of the buckets the timeline is kept in (grows when it would hold too many). */
  private base = MINUTE;
  private timeline = new Map<number, number[]>();
  private readonly patterns = new Map<string, PatternCount>();
  private prunedPatterns = 0;
  private implausibleTimes = 0;
  private readonly latest = Date.now() + FUTURE_SLACK_MS;
  private readonly groups = new Map<string, { count: number; errors: number }>();
  private groupsOther = 0;

  constructor(private readonly query: StatsQuery) {}

  /** An empty accumulator for the same query: a file whose reading may fail is counted there, then merged. */
  fork(): StatsAccumulator {
    return new StatsAccumulator(this.query);
  }

  /** Adds what another accumulator of the same query counted. */
  merge(other: StatsAccumulator): void {
    this.entries += other.entries;
    this.continuationLines += other.continuationLines;
    other.levels.forEach((n, i) => (this.levels[i] = (this.levels[i] as number) + n));
    this.withoutTime += other.withoutTime;
    this.implausibleTimes += other.implausibleTimes;
    if (other.first !== undefined && (this.first === undefined || other.first < this.first)) this.first = other.first;
    if (other.last !== undefined && (this.last === undefined || other.last > this.last)) this.last = other.last;
    while (this.base < other.base) this.coarsen();
    for (const [key, counts] of rebucket(other.timeline, other.base, this.base)) {
      counts.forEach((n, levelIndex) => {
        if (n > 0) this.count(key * this.base, levelIndex, n);
      });
    }
    for (const [value, g] of other.groups) this.group(value, g.count, g.errors);
    this.groupsOther += other.groupsOther;
    this.prunedPatterns += other.prunedPatterns;
    for (const [key, p] of other.patterns) {
      let entry = this.patterns.get(key);
      if (!entry) {
        if (this.patterns.size >= MAX_PATTERNS) this.prune();
        entry = { count: 0, example: p.example, level: p.level };
        this.patterns.set(key, entry);
      }
      entry.count += p.count;
      if (LEVEL_RANK[p.level] > LEVEL_RANK[entry.level]) entry.level = p.level;
      if (p.first !== undefined && (entry.first === undefined || p.first < entry.first)) entry.first = p.first;
      if (p.last !== undefined && (entry.last === undefined || p.last > entry.last)) entry.last = p.last;
    }
  }

  /** Reads one source to its end or to the deadline; returns lines and bytes read and whether it stopped early. */
  async add(source: RawSource, spec: FormatSpec, deadline: number, chunkDone: () => void, counted = { lines: 0, bytes: 0 }): Promise<{ lines: number; bytes: number; timedOut: boolean }> {
    const parser = parserFor(spec);
    const { since, until, groupBy } = this.query;
    const fields = this.query.fields && this.query.fields.length > 0 ? this.query.fields : undefined;
    const errorRank = LEVEL_RANK[this.query.errorLevel];
    let lines = 0;
    let bytes = 0;
    // CRI fragments are joined per stream: an entry of n fragments is one entry and n - 1 continuation lines.
    const joiner = joinsFragments(spec) ? new CriJoiner() : undefined;
    const entry = (line: string): void => {
      const head = parser.head(line, false);
      if (head === undefined) {
        this.continuationLines++;
        return;
      }
      let t = head.time;
      if (t !== undefined && (t > this.latest || t < EARLIEST)) {
        this.implausibleTimes++;
        t = undefined;
      }
      if ((since !== undefined || until !== undefined) && (t === undefined || (since !== undefined && t < since) || (until !== undefined && t > until))) return;
      if (fields && !fieldsMatch(head.record, fields)) return;
      this.entries++;
      if (groupBy !== undefined) this.group(groupOf(head.record, groupBy), 1, head.level !== undefined && LEVEL_RANK[head.level] >= errorRank ? 1 : 0);
      const levelIndex = head.level === undefined ? UNKNOWN : LEVEL_RANK[head.level];
      this.levels[levelIndex] = (this.levels[levelIndex] as number) + 1;
      if (t === undefined) this.withoutTime++;
      else {
        if (this.first === undefined || t < this.first) this.first = t;
        if (this.last === undefined || t > this.last) this.last = t;
        this.count(t, levelIndex);
      }
      if (head.level !== undefined && LEVEL_RANK[head.level] >= errorRank) this.pattern(parser.head(line)?.message ?? line, head.level, t);
    };
    for await (const chunk of source.lineChunks()) {
      bytes += chunk.bytes.length;
      const all = splitLines(decodeChunk(chunk.bytes));
      lines += all.length;
      counted.lines = lines;
      counted.bytes = bytes;
      if (joiner) {
        for (const line of all) {
          const joined = joiner.push(line);
          if (joined) {
            this.continuationLines += joined.lines - 1;
            entry(joined.line);
          }
        }
      } else for (const line of all) entry(line);
      chunkDone();
      if (Date.now() > deadline) break;
    }
    // Fragments whose F line is not in this file (still being written, or in the next rotated copy) count here, once.
    for (const joined of joiner?.flush() ?? []) {
      this.continuationLines += joined.lines - 1;
      entry(joined.line);
    }
    return { lines, bytes, timedOut: Date.now() > deadline };
  }

  private group(value: string, count: number, errors: number): void {
    const g = this.groups.get(value);
    if (g) {
      g.count += count;
      g.errors += errors;
    } else if (this.groups.size < MAX_GROUPS) this.groups.set(value, { count, errors });
    else this.groupsOther += count;
  }

  private count(t: number, levelIndex: number, n = 1): void {
    const key = Math.floor(t / this.base);
    let counts = this.timeline.get(key);
    if (!counts) {
      if (this.timeline.size >= MAX_TIMELINE_KEYS) {
        this.coarsen();
        this.count(t, levelIndex, n);
        return;
      }
      counts = new Array<number>(KEYS.length).fill(0);
      this.timeline.set(key, counts);
    }
    counts[levelIndex] = (counts[levelIndex] as number) + n;
  }

  /** Re-keys the timeline with buckets 60 times wider (a minute becomes an hour). */
  private coarsen(): void {
    const wider = this.base * 60;
    this.timeline = rebucket(this.timeline, this.base, wider);
    this.base = wider;
  }

  private pattern(message: string, level: Level, t: number | undefined): void {
    const key = normalizeMessage(message);
    let entry = this.patterns.get(key);
    if (!entry) {
      if (this.patterns.size >= MAX_PATTERNS) this.prune();
      entry = { count: 0, example: message.slice(0, 500), level };
      this.patterns.set(key, entry);
    }
    entry.count++;
    if (LEVEL_RANK[level] > LEVEL_RANK[entry.level]) entry.level = level;
    if (t !== undefined) {
      if (entry.first === undefined || t < entry.first) entry.first = t;
      if (entry.last === undefined || t > entry.last) entry.last = t;
    }
  }

  private prune(): void {
    for (const [key, value] of this.patterns) {
      if (value.count <= 1) {
        this.patterns.delete(key);
        this.prunedPatterns++;
      }
    }
    // Every pattern seen more than once: drop the rarer half.
    if (this.patterns.size >= MAX_PATTERNS) {
      const sorted = [...this.patterns.entries()].sort((a, b) => a[1].count - b[1].count);
      for (const [key] of sorted.slice(0, sorted.length >> 1)) this.patterns.delete(key);
      this.prunedPatterns += sorted.length >> 1;
    }
  }

  result(): StatsResult {
    const bucketMs = this.chooseBucket();
    const timeline = [...rebucket(this.timeline, this.base, bucketMs).entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([key, counts]) => ({ start: key * bucketMs, counts: sparse(counts) }));
    const topErrors: TopMessage[] = [...this.patterns.entries()]
      .sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1))
      .slice(0, this.query.topErrors)
      .map(([pattern, p]) => ({
        pattern,
        count: p.count,
        example: p.example,
        level: p.level,
        ...(p.first !== undefined ? { first: p.first } : {}),
        ...(p.last !== undefined ? { last: p.last } : {}),
      }));
    return {
      entries: this.entries,
      continuationLines: this.continuationLines,
      levels: sparse(this.levels),
      withoutTime: this.withoutTime,
      implausibleTimes: this.implausibleTimes,
      ...(this.first !== undefined ? { first: this.first } : {}),
      ...(this.last !== undefined ? { last: this.last } : {}),
      bucketMs,
      timeline,
      topErrors,
      distinctErrors: this.patterns.size + this.prunedPatterns,
      ...(this.query.groupBy !== undefined
        ? {
            groups: [...this.groups.entries()]
              .sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
              .slice(0, SHOWN_GROUPS)
              .map(([value, g]) => ({ value, count: g.count, errors: g.errors })),
            distinctGroups: this.groups.size,
            groupsOther: this.groupsOther,
          }
        : {}),
    };
  }

  private chooseBucket(): number {
    const asked = this.query.bucketMs;
    if (asked !== undefined) return Math.max(asked, this.base);
    const span = this.first !== undefined && this.last !== undefined ? this.last - this.first : 0;
    return BUCKETS.find((b) => b >= this.base && span / b < TARGET_BUCKETS) ?? BUCKETS[BUCKETS.length - 1]!;
  }
}

function rebucket(timeline: Map<number, number[]>, from: number, to: number): Map<number, number[]> {
  if (from === to) return timeline;
  const out = new Map<number, number[]>();
  for (const [key, counts] of timeline) {
    const wider = Math.floor((key * from) / to);
    const target = out.get(wider);
    if (!target) out.set(wider, [...counts]);
    else for (let i = 0; i < counts.length; i++) target[i] = (target[i] as number) + (counts[i] as number);
  }
  return out;
}

function sparse(counts: readonly number[]): Partial<Record<LevelKey, number>> {
  const out: Partial<Record<LevelKey, number>> = {};
  counts.forEach((n, i) => {
    if (n > 0) out[KEYS[i] as LevelKey] = n;
  });
  return out;
}
