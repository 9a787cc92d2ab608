import { CancelledError } from '@suite/shared';

/**
 * GitHub's limits and this process's pacing, per token. Known rate limits and requests in flight
 * are kept in shared's SharedLimits (every session of the process, and with --redis-url every
 * replica, that uses a token sees them, because GitHub counts per token, not per session); the
 * spacing lanes below are module state of this process.
 */

/** Which of GitHub's counters a request draws on: its x-ratelimit-resource names. Secondary limits and 429s stop every request of the token ('all'). */
export type LimitBucket = 'core' | 'search' | 'code_search' | 'all';

export function bucketOf(path: string | undefined): Exclude<LimitBucket, 'all'> {
  if (path === '/search/code') return 'code_search';
  return path?.startsWith('/search/') ? 'search' : 'core';
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
