/**
 * Serialises the writers of one file, so that a read-modify-write (edit_file) never works from
 * content another writer is about to replace.
 *
 * Two levels: within the process, a first-come-first-served queue per real path (sessions of one
 * HTTP server, concurrent calls of one stdio session); across processes of the suite (two servers
 * on the same directory, or replicas on hosts that share a volume), a lock file next to the target,
 * made whole with its owner inside (pid, host and boot, process start time) and touched while held,
 * so that a lock left by a killed process is recognised and broken: at once when its owner is of this
 * host, after LOCK_STALE_MS without a touch otherwise. Programs that are not
 * part of the suite do not take these locks; for them, writeFileAtomic's `expected` check is what
 * notices a change.
 */
import { constants, type promises as fs } from 'node:fs';
import { link, lstat, unlink, utimes } from 'node:fs/promises';
import path from 'node:path';
import { CancelledError } from '../core/progress.js';
import { LOCK_HEARTBEAT_MS, lockName, lockOwnerText, lockStale, newTempEntry, trackOwnedLock, trackTempCreate } from './temp-files.js';
import { ToolError } from '../core/errors.js';

/** How long a writer waits for a file another writer holds before giving up with a conflict. */
export const DEFAULT_LOCK_WAIT_MS = 30_000;

export type OpenForLock = (file: string, flags: number, mode: number) => Promise<fs.FileHandle>;

export interface WriteLockOptions {
  signal?: AbortSignal;
  /** Default DEFAULT_LOCK_WAIT_MS. */
  waitMs?: number;
  /** The path as the user gave it, for messages. */
  userPath?: string;
  /** How to create the lock file (PathGuard.open, so the lock too is created only inside the roots). */
  open: OpenForLock;
  /** Whether a lock file may be made next to this path (default: always); when not, only the in-process queue applies. */
  lockFileAllowed?: (file: string) => boolean;
}

// The tail of each path's queue: a waiter chains itself behind it.
const queues = new Map<string, Promise<void>>();

/** Runs `fn` holding the write locks of `realPaths` (taken in sorted order, so two callers cannot deadlock). */
export async function withWriteLock<T>(realPaths: string | readonly string[], fn: () => Promise<T>, options: WriteLockOptions): Promise<T> {
  const paths = [...new Set(typeof realPaths === 'string' ? [realPaths] : realPaths)].sort();
  const deadline = Date.now() + (options.waitMs ?? DEFAULT_LOCK_WAIT_MS);
  const releases: (() => Promise<void> | void)[] = [];
  try {
    for (const file of paths) {
      releases.push(await takeQueue(file, deadline, options));
      if (options.lockFileAllowed?.(file) !== false) releases.push(await takeLockFile(file, deadline, options));
    }
    return await fn();
  } finally {
    for (const release of releases.reverse()) await release();
  }
}

async function takeQueue(file: string, deadline: number, options: WriteLockOptions): Promise<() => void> {
  const previous = queues.get(file) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((resolve) => (release = resolve));
  const tail = previous.then(() => mine);
  queues.set(file, tail);
  const done = (): void => {
    release();
    if (queues.get(file) === tail) queues.delete(file);
  };
  const outcome = await waitFor(previous, deadline, options.signal);
  if (outcome === 'ready') return done;
  // Gave up waiting: keep the queue moving by letting the next waiter through once our turn comes.
  void previous.then(done);
  throw outcome === 'cancelled' ? new CancelledError() : busy(file, options);
}

function waitFor(promise: Promise<void>, deadline: number, signal: AbortSignal | undefined): Promise<'ready' | 'timeout' | 'cancelled'> {
  if (signal?.aborted) return Promise.resolve('cancelled');
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()));
    const onAbort = (): void => finish('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    function finish(outcome: 'ready' | 'timeout' | 'cancelled'): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    }
    void promise.then(() => finish('ready'));
  });
}

async function takeLockFile(file: string, deadline: number, options: WriteLockOptions): Promise<() => Promise<void>> {
  const dir = path.dirname(file);
  const lock = path.join(dir, lockName(path.basename(file)));
  for (let delay = 1; ; delay = Math.min(delay * 2, 25)) {
    const held = await createWhole(dir, lock, options);
    if (held) return held;
    if (await breakIfStale(lock)) continue;
    if (options.signal?.aborted) throw new CancelledError();
    if (Date.now() > deadline) throw busy(file, options);
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Makes the lock whole or not at all: the owner is written to a temporary file first, then linked
 * under the lock's name (link fails when the name exists, as O_EXCL would), so a writer killed at any
 * moment never leaves an empty lock. Returns the release, or undefined when someone else holds it.
 * While held, the lock is touched every LOCK_HEARTBEAT_MS: another host cannot check our pid, but it
 * can see that the lock is still alive.
 */
async function createWhole(dir: string, lock: string, options: WriteLockOptions): Promise<(() => Promise<void>) | undefined> {
  const { path: staging, untrack: untrackStaging } = await newTempEntry(dir);
  let untrack: () => void = () => undefined;
  try {
    const handle = await trackTempCreate(() => options.open(staging, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600));
    try {
      await handle.writeFile(lockOwnerText());
    } finally {
      await handle.close();
    }
    // Tracked before it exists: an exit (SIGTERM, stdin closed) from here on removes it if it is ours.
    untrack = trackOwnedLock(lock);
    try {
      await trackTempCreate(() => link(staging, lock));
    } catch (error) {
      untrack();
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    }
  } finally {
    await unlink(staging).catch(() => undefined);
    untrackStaging();
  }
  const ino = (await lstat(lock).catch(() => undefined))?.ino;
  const ours = async (): Promise<boolean> => ino !== undefined && (await lstat(lock).catch(() => undefined))?.ino === ino;
  const heartbeat = setInterval(() => {
    void ours().then((mine) => {
      if (mine) {
        const now = new Date();
        return utimes(lock, now, now);
      }
      return undefined;
    }).catch(() => undefined);
  }, LOCK_HEARTBEAT_MS);
  heartbeat.unref();
  return async () => {
    clearInterval(heartbeat);
    // Only our own lock: one broken as stale and retaken by another writer is theirs.
    if (await ours()) await unlink(lock).catch(() => undefined);
    untrack();
  };
}

/** Removes a lock whose owner is gone (a process killed while it held it); true when it did. */
async function breakIfStale(lock: string): Promise<boolean> {
  const stat = await lstat(lock).catch(() => undefined);
  if (!stat) return true;
  if (!(await lockStale(lock, stat))) return false;
  // Remove exactly the lock judged stale, not one a faster writer has put there since.
  const again = await lstat(lock).catch(() => undefined);
  if (again?.ino === stat.ino) await unlink(lock).catch(() => undefined);
  return true;
}

function busy(file: string, options: WriteLockOptions): ToolError {
  return ToolError.conflict(
    `${options.userPath ?? path.basename(file)} is being changed by another operation that did not finish in ${Math.round((options.waitMs ?? DEFAULT_LOCK_WAIT_MS) / 1000)} s. Try again in a moment.`,
  );
}
