import type { JsonFields, LogFormat } from './formats/parsers.js';

/**
 * What every session of the server shares, parsed from the command line in index.ts. Imports
 * only types (the format names), so every module can use it without a circle.
 */
export interface LogsConfig {
  /** Real paths of the directories given on the command line (may be empty: client roots then decide). */
  directories: string[];
  /** Real paths of the log files given on the command line; each brings its rotated siblings, nothing else of its directory. */
  files: string[];
  /** The same paths as typed, so /tmp/x keeps working where /tmp is a symlink. */
  aliases: string[];
  /** JSON field names to look for, configurable with --json-*-field. */
  json: JsonFields;
  /** --entry-pattern: where multi-line entries start, instead of each format's own rule. */
  entryPattern?: string;
  /**
   * --refuse-hard-links: refuse regular files with more than one link. A hard link inside an
   * allowed directory may name a file outside it, which no path check can see.
   */
  refuseHardLinks?: boolean;
  /** --journal and --journal-dir: the systemd journals read through journalctl (none: no journal source). */
  journals?: JournalSource[];
  limits: LogsLimits;
  /** Formats recognised so far, by file identity: shared by sessions, bounded. */
  formatCache: Map<string, LogFormat>;
}

/** A journal the server reads: the system's (what its user may read), or the journal files in a directory. */
export type JournalSource = { kind: 'system' } | { kind: 'directory'; directory: string };

export interface LogsLimits {
  /** How much of the end of a log a resource read returns. */
  resourceTailBytes: number;
  /** The most text a tool returns (a tail, a range, new lines). */
  maxOutputBytes: number;
  /** Default and ceiling of a search's or statistics' time budget. */
  searchBudgetMs: number;
  statsBudgetMs: number;
  maxBudgetMs: number;
  /** Directory levels below a root searched for logs (1 = only the root's own files). */
  discoveryDepth: number;
  /** Logs listed at most. */
  maxLogs: number;
  /** A filtered tail stops after reading this much of the file backwards. */
  maxTailScanBytes: number;
  /** How long a tail (tool or resource read) may take; a .gz file is read from its start, and may not reach its end. */
  tailBudgetMs: number;
}

export const DEFAULT_LIMITS: LogsLimits = {
  resourceTailBytes: 64 * 1024,
  maxOutputBytes: 256 * 1024,
  searchBudgetMs: 30_000,
  statsBudgetMs: 60_000,
  maxBudgetMs: 300_000,
  discoveryDepth: 5,
  maxLogs: 5000,
  maxTailScanBytes: 256 * 1024 * 1024,
  tailBudgetMs: 10_000,
};

/** The resource URIs, built in one place so tools, resources and prompts agree. */
export const FILE_URI_PREFIX = 'logs://file/';
export const FILE_TEMPLATE = 'logs://file/{+path}';
export const FILTERED_TEMPLATE = 'logs://file/{+path}{?level,since,grep}';
export const RECENT_URI = 'logs://recent';
export const RECENT_TEMPLATE = 'logs://recent{?timeframe}';
export const JOURNAL_URI = 'logs://journal';
export const JOURNAL_TEMPLATE = 'logs://journal/{unit}';
