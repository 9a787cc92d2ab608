import type { FieldFilter } from './fields.js';
import type { FormatSpec } from './formats/parsers.js';
import type { Level } from './levels.js';

/**
 * What the main thread and the scan worker say to each other. Plain data only (it crosses a
 * thread boundary by structured clone); a leaf module.
 */

/** Why a log that was listed is not read: it disappeared in between. */
export const GONE = 'gone (rotated or removed while the request ran)';

export interface SearchQuery {
  /** A JavaScript regular expression, or text with `literal`. Absent: every entry that passes the filters. */
  pattern?: string;
  literal: boolean;
  caseSensitive: boolean;
  minLevel?: Level;
  since?: number;
  until?: number;
  contextLines: number;
  maxResults: number;
  /** Filters on the entry's fields (JSON lines, logfmt). */
  fields?: FieldFilter[];
  /** A field whose value each match carries, for counting matches per value. */
  groupBy?: string;
}

export interface SearchMatch {
  file: string;
  /** 1-based line number in the file (in the decompressed text for .gz). */
  line: number;
  text: string;
  time?: string;
  level?: Level;
  /** The first line of the entry, when the match is in one of its continuation lines (a stack frame). */
  entry?: string;
  before?: string[];
  after?: string[];
  /** The value of the group_by field in the match's entry. */
  group?: string;
  /** The container or pod whose log it is (set by the main thread, which knows the files). */
  container?: string;
}

export type LevelKey = Level | 'unknown';

export interface StatsQuery {
  since?: number;
  until?: number;
  /** Bucket width asked for; undefined picks one that gives at most 60 buckets. */
  bucketMs?: number;
  topErrors: number;
  /** Entries at this level or above count as errors for the top messages. */
  errorLevel: Level;
  /** Only entries whose fields pass these filters are counted. */
  fields?: FieldFilter[];
  /** Count entries per value of this field too. */
  groupBy?: string;
}

export interface TopMessage {
  /** With numbers, ids, addresses and UUIDs replaced, so similar entries group together. */
  pattern: string;
  count: number;
  /** One real message of the group. */
  example: string;
  level: Level;
  first?: number;
  last?: number;
}

export interface StatsResult {
  entries: number;
  /** Lines that continue an entry (stack frames, wrapped text). */
  continuationLines: number;
  levels: Partial<Record<LevelKey, number>>;
  withoutTime: number;
  /** Of those, entries whose timestamp cannot be right (years ahead of now, or before 1990). */
  implausibleTimes: number;
  first?: number;
  last?: number;
  bucketMs: number;
  timeline: { start: number; counts: Partial<Record<LevelKey, number>> }[];
  topErrors: TopMessage[];
  /** Distinct error patterns seen (approximate past the tracking cap). */
  distinctErrors: number;
  /** Entries per value of the group_by field (the largest first), with errors among them. */
  groups?: { value: string; count: number; errors: number }[];
  /** Distinct values tracked; `groupsOther`: entries whose value came after the tracking cap was reached. */
  distinctGroups?: number;
  groupsOther?: number;
}

export type ScanJob =
  | { kind: 'search'; query: SearchQuery; deadline: number }
  | { kind: 'stats'; query: StatsQuery; deadline: number };

/** One file to scan; the main thread opened it through the path guard, the worker only reads the descriptor. */
export interface ScanFileMessage {
  type: 'file';
  index: number;
  fd: number;
  display: string;
  compressed: boolean;
  spec: FormatSpec;
  /** Matches still wanted (a search): the main thread's count, which matches found by other workers lower. */
  remaining?: number;
  /** Only a part of a large plain file, searched beside the other parts by other workers. */
  part?: FilePart;
}

/**
 * A part of a file, from a chunk cut of a scan from its start (so its chunks are that scan's) to
 * the next part. Line numbers count from the part's start; the main thread adds the lines before.
 */
export interface FilePart {
  start: number;
  end: number;
  /** More of the file follows the part. */
  more: boolean;
  /** What a scan from the start knows where the part starts. */
  prevHead?: string;
  prevTail: string[];
}

export type ToWorker = { type: 'start'; job: ScanJob } | ScanFileMessage | { type: 'end' };

/** `note`: read only in part (a truncated .gz file counted up to where it ends); the reader adds the count of lines. */
export type FileOutcome = { status: 'scanned'; lines: number; bytes: number; note?: string } | { status: 'unreadable'; reason: string };

export type FromWorker =
  | { type: 'progress'; bytes: number }
  | { type: 'matches'; matches: SearchMatch[] }
  | { type: 'file-done'; index: number; outcome: FileOutcome; stopped?: 'max-results' | 'time-budget' }
  /** The answer to 'end': the job is over (with the statistics, for a stats job); the worker waits for the next. */
  | { type: 'done'; stats?: StatsResult }
  | { type: 'failed'; message: string };
