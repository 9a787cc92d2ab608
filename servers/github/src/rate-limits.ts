import { CancelledError } from '@suite/shared';

/**
 * What this process knows about GitHub's limits and its own pacing, per token. Module state on
 * purpose: every session of the process that uses a token (over HTTP, one per client) shares it,
 * because GitHub counts per token, not per session.
 */

/** Which of GitHub's counters a request draws on: its x-ratelimit-resource names. Secondary limits and 429s stop every request of the token ('all'). */
export type LimitBucket = 'core' | 'search' | 'code_search' | 'all';

export function bucketOf(path: string | undefined): Exclude<LimitBucket, 'all'> {
  if (path === '/search/code') return 'code_search';
  return path?.startsWith('/search/') ? 'search' : 'core';
}

interface KnownLimit {
  /** Date.now() at which the limit lifts. */
  until: number;
  /** What it is, for the message ("5000 requests per hour used up"). */
  detail: string;
}

const known = new Map<string, Map<string, KnownLimit>>();

/** The limit in force for a token's request, if any (the later of its bucket's and the token-wide one). */
export function limitInForce(tokenKey: string, bucket: Exclude<LimitBucket, 'all'>, now = Date.now()): KnownLimit | undefined {
  const limits = known.get(tokenKey);
  if (!limits) return undefined;
  let found: KnownLimit | undefined;
  for (const key of [bucket, 'all']) {
    const limit = limits.get(key);
    if (limit && limit.until <= now) limits.delete(key);
    else if (limit && (!found || limit.until > found.until)) found = limit;
  }
  // A process serving many tokens keeps only the limits still in force.
  if (limits.size === 0) known.delete(tokenKey);
  return found;
}

export function recordLimit(tokenKey: string, bucket: LimitBucket, limit: KnownLimit): void {
  let limits = known.get(tokenKey);
  if (!limits) {
    limits = new Map();
    known.set(tokenKey, limits);
  }
  const current = limits.get(bucket);
  if (!current || current.until < limit.until) limits.set(bucket, limit);
}

/** Resolves after `ms`, or rejects with CancelledError when `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new CancelledError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

interface Lane {
  /** Settles when the request before the newest one has finished. */
  tail: Promise<void>;
  /** Date.now() when the last request of the lane started. */
  lastStart: number;
  /** Tasks queued or running; an idle lane is forgotten once its spacing has passed. */
  pending: number;
}

const lanes = new Map<string, Lane>();

/**
 * Runs `task` after every earlier task of `key` has finished and at least `spacingMs` after the
 * last one started: one at a time, spaced, in arrival order (GitHub's advice against secondary
 * limits for writes and searches). A task whose call is cancelled while it waits never starts.
 */
export async function spaced<T>(key: string, spacingMs: number, signal: AbortSignal | undefined, task: () => Promise<T>): Promise<T> {
  let found = lanes.get(key);
  if (!found) {
    found = { tail: Promise.resolve(), lastStart: 0, pending: 0 };
    lanes.set(key, found);
  }
  const lane = found;
  lane.pending += 1;
  const before = lane.tail;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    resolveDone();
    lane.pending -= 1;
    if (lane.pending === 0) {
      setTimeout(() => {
        if (lane.pending === 0 && lanes.get(key) === lane) lanes.delete(key);
      }, spacingMs).unref();
    }
  };
  lane.tail = before.then(() => done);
  try {
    await waitFor(before, signal);
    await sleep(lane.lastStart + spacingMs - Date.now(), signal);
    lane.lastStart = Date.now();
  } catch (error) {
    // Give the turn on as soon as it comes.
    void before.then(release);
    throw error;
  }
  try {
    return await task();
  } finally {
    release();
  }
}

function waitFor(promise: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new CancelledError());
  return new Promise((resolve, reject) => {
    const onAbort = (): void => reject(new CancelledError());
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
