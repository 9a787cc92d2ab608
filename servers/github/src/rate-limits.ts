import { CancelledError } from '@suite/shared';

/**
 * GitHub's limits and this process's pacing, per token. Known rate limits and requests in flight
 * are kept in shared's SharedLimits (every session of the process, and with --redis-url every
 * replica, that uses a token sees them, because GitHub counts per token, not per session); the
 * spacing lanes below are module state of this process.
 */

/** Which of GitHub's counters a request draws on: its x-ratelimit-resource names. Secondary limits and 429s stop every request of the token ('all'). */
export type LimitBucket = 'core' | 'search' | 'code_search' | 'graphql' | 'all';

/** The counter of a request: `graphql` for GraphQL (`graphql: true`, whatever its path: /api/graphql on Enterprise Server), else by path. */
export function bucketOf(path: string | undefined, graphql = false): Exclude<LimitBucket, 'all'> {
  if (graphql) return 'graphql';
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

/**
 * The longest wait a rate-limit answer is believed for: GitHub's primary limits reset within the
 * hour, and its secondary limits ask for seconds to minutes. A reset in the year 3000 or a
 * retry-after of 1e308 (a broken proxy, a hostile answer) would otherwise stop every request of
 * the token until the process restarts.
 */
export const MAX_BELIEVED_LIMIT_SECONDS = 3600;
/** The wait assumed when GitHub says it is limiting but not for how long (its own advice for secondary limits). */
const DEFAULT_LIMIT_SECONDS = 60;

/** A header value as it arrived, short and printable, for a message. */
function quoted(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return JSON.stringify(printable.length > 40 ? `${printable.slice(0, 40)}...` : printable);
}

/**
 * How long to hold off, from a header GitHub sent: `seconds` when it is believable, else the
 * bound or the default, with a note that says what was received and what was done with it.
 */
function believedWait(seconds: number | undefined, header: string, received: string): { seconds: number; note: string } {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    return { seconds: DEFAULT_LIMIT_SECONDS, note: `; ${header} ${quoted(received)} is not a wait this server understands, so it holds off ${DEFAULT_LIMIT_SECONDS} s` };
  }
  if (seconds > MAX_BELIEVED_LIMIT_SECONDS) {
    return { seconds: MAX_BELIEVED_LIMIT_SECONDS, note: `; ${header} ${quoted(received)} asks for more than an hour, so it holds off an hour at most` };
  }
  return { seconds, note: '' };
}

/** retry-after as seconds (a number of seconds, or an HTTP date); undefined when it is neither. */
function retryAfterSeconds(value: string, now: number): number | undefined {
  const text = value.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text);
  if (/^[A-Za-z]{3}, \d\d [A-Za-z]{3} \d{4} \d\d:\d\d:\d\d GMT$/.test(text)) {
    const at = Date.parse(text);
    return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
  }
  return undefined;
}

export interface RateLimitAnswer {
  bucket: LimitBucket;
  /** Epoch milliseconds: at most MAX_BELIEVED_LIMIT_SECONDS from when the answer came. */
  until: number;
  /** What the limit is, and what was received when it was not believed as sent. */
  detail: string;
}

/**
 * A rate-limit answer (403 or 429) read from its status, headers and body: which counter, until
 * when, and how to say it; undefined when it is no rate limit. Every wait is bounded
 * (believedWait). The request layer records it; the error mapping words it from the same reading.
 */
export function rateLimitOfAnswer(status: number, headers: Record<string, string | undefined>, data: unknown, now: number): RateLimitAnswer | undefined {
  if (status !== 403 && status !== 429) return undefined;
  const message = data && typeof data === 'object' && typeof (data as { message?: unknown }).message === 'string' ? (data as { message: string }).message : typeof data === 'string' ? data : '';
  const retryAfter = headers['retry-after'];
  // A 403 is a limit when GitHub says so, or when it names a wait (any number: an absurd one is bounded below).
  const namesWait = retryAfter !== undefined && Number.isFinite(Number(retryAfter.trim() || 'x'));
  if (/secondary rate limit|abuse/i.test(message) || status === 429 || namesWait) {
    const wait = retryAfter === undefined ? { seconds: DEFAULT_LIMIT_SECONDS, note: '' } : believedWait(retryAfterSeconds(retryAfter, now), 'retry-after', retryAfter);
    return { bucket: 'all', until: now + Math.max(1, wait.seconds) * 1000, detail: `secondary rate limit: too many requests in a short time${wait.note}` };
  }
  if (headers['x-ratelimit-remaining'] === '0') {
    const resetHeader = headers['x-ratelimit-reset'];
    const reset = resetHeader !== undefined && /^\s*\d{1,15}\s*$/.test(resetHeader) ? Number(resetHeader) : undefined;
    // A reset already past (clocks differ) means the limit is about to lift: a second, as before.
    const wait = resetHeader === undefined ? { seconds: DEFAULT_LIMIT_SECONDS, note: '' } : believedWait(reset === undefined ? undefined : Math.max(1, reset - now / 1000), 'x-ratelimit-reset', resetHeader);
    const resource = headers['x-ratelimit-resource'];
    const bucket = resource === 'search' || resource === 'code_search' || resource === 'graphql' ? resource : 'core';
    const limitHeader = headers['x-ratelimit-limit'];
    const limit = limitHeader !== undefined && /^\d{1,9}$/.test(limitHeader.trim()) ? Number(limitHeader) : undefined;
    const named = bucket !== 'core' ? ` for ${bucket}` : '';
    return { bucket, until: now + wait.seconds * 1000, detail: `${limit ? `${limit} requests per hour` : 'the hourly limit'}${named} used up${wait.note}` };
  }
  return undefined;
}
