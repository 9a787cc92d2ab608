import type { ContentQuery, FileSearchOutcome, LineMatch } from './file-search.js';

/**
 * What the main thread and the search workers say to each other. Plain data only (it crosses a
 * thread boundary by structured clone); a leaf module. A worker may serve several calls at once:
 * every message names its job.
 */

export type ToSearchWorker =
  /** A new search: what to look for, the roots every file must lie in, and the flag that stops it (non-zero: stop). */
  | { type: 'job'; job: number; query: ContentQuery; roots: string[]; stop: SharedArrayBuffer }
  /**
   * Files to search, in order, directory by directory: `names[i]` are files of `directories[i]` (an
   * absolute real path), so a path is sent once per directory rather than once per file; `maxMatches`
   * caps each file's matches.
   */
  | { type: 'files'; job: number; batch: number; directories: string[]; names: string[][]; maxMatches: number }
  /** The search is over: forget it. */
  | { type: 'end'; job: number };

/**
 * The outcomes of a batch of files, compact (a search of thousands of files sends thousands of
 * them): one byte per file for its kind, and the matches of the files that have some.
 */
export interface Outcomes {
  kinds: Uint8Array;
  /** [index of the file, its matches], for files searched with at least one match. */
  matches: [number, LineMatch[]][];
}

const KINDS = ['searched', 'binary', 'too-large', 'unreadable', 'stopped'] as const;

export function encodeOutcomes(outcomes: readonly FileSearchOutcome[]): Outcomes {
  const kinds = new Uint8Array(outcomes.length);
  const matches: [number, LineMatch[]][] = [];
  outcomes.forEach((o, i) => {
    kinds[i] = KINDS.indexOf(o.kind);
    if (o.kind === 'searched' && o.matches.length > 0) matches.push([i, o.matches]);
  });
  return { kinds, matches };
}

/** One shared object per kind (outcomes are only read): a batch of files allocates nothing per file without matches. */
const SHARED: readonly FileSearchOutcome[] = KINDS.map((kind) => Object.freeze(kind === 'searched' ? { kind, matches: Object.freeze([]) as unknown as LineMatch[] } : { kind }) as FileSearchOutcome);

export function decodeOutcomes(encoded: Outcomes): FileSearchOutcome[] {
  const out: FileSearchOutcome[] = Array.from(encoded.kinds, (k) => SHARED[k] as FileSearchOutcome);
  for (const [i, matches] of encoded.matches) out[i] = { kind: 'searched', matches };
  return out;
}

export type FromSearchWorker = { type: 'results'; job: number; batch: number; outcomes: Outcomes } | { type: 'failed'; job: number; message: string };
