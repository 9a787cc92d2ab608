import type { ContentQuery, FileSearchOutcome } from './file-search.js';

/**
 * What the main thread and the search workers say to each other. Plain data only (it crosses a
 * thread boundary by structured clone); a leaf module. A worker may serve several calls at once:
 * every message names its job.
 */

export type ToSearchWorker =
  /** A new search: what to look for, the roots every file must lie in, and the flag that stops it (non-zero: stop). */
  | { type: 'job'; job: number; query: ContentQuery; roots: string[]; stop: SharedArrayBuffer }
  /** Files to search, in order; `maxMatches` caps each file's matches. */
  | { type: 'files'; job: number; batch: number; files: string[]; maxMatches: number }
  /** The search is over: forget it. */
  | { type: 'end'; job: number };

export type FromSearchWorker = { type: 'results'; job: number; batch: number; outcomes: FileSearchOutcome[] } | { type: 'failed'; job: number; message: string };
