/**
 * The names the suite gives the files it creates next to a user's files (temporary files of an
 * atomic write or a copy, directories being deleted, write locks), so that they can be recognised:
 * hidden from listings and searches, removed when the process exits, and swept after a crash.
 *
 *   .suite-<pid>-<host>-<random>.tmp       a file (or staging directory) being written
 *   .suite-<pid>-<host>-<random>.deleting  a directory renamed out of the way while it is removed
 *   .suite-<hash>.lock                     the write lock of one file (see write-locks), owner inside
 *
 * `<pid>` and `<host>` (8 hex digits of a hash of the host name) name the owner, so a sweep can tell
 * the leftovers of a dead process from the work of a live one; `<random>` is 8 hex digits.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, type Dirent, type Stats } from 'node:fs';
import { lstat, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '../core/logging.js';

const TEMP_NAME = /^\.suite-(\d{1,10})-([0-9a-f]{8})-[0-9a-f]{8}\.(?:tmp|deleting)$/;
const LOCK_NAME = /^\.suite-[0-9a-f]{16}\.lock$/;

/**
 * 8 hex digits naming this machine and boot, so another host's (or container's) files are not judged
 * by our pids, nor files from before a reboot (pids start again).
 */
export const HOST_TAG = createHash('sha256').update(`${os.hostname()}\0${bootId()}`).digest('hex').slice(0, 8);

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return '';
  }
}

/** A leftover is removed once its owner is gone; one whose owner cannot be checked (another host), after this long. */
export const FOREIGN_STALE_MS = 60 * 60_000;

/** A new name for a temporary entry in a directory; `kind` says what it is for. */
export function tempName(kind: 'tmp' | 'deleting' = 'tmp'): string {
  return `.suite-${process.pid}-${HOST_TAG}-${randomBytes(4).toString('hex')}.${kind}`;
}

/** The name of the write lock of a file called `fileName` (in the same directory). */
export function lockName(fileName: string): string {
  return `.suite-${createHash('sha256').update(fileName).digest('hex').slice(0, 16)}.lock`;
}

/** True for every name in the patterns above, and only for those. */
export function isSuiteTempName(name: string): boolean {
  return TEMP_NAME.test(name) || LOCK_NAME.test(name);
}

/**
 * When this process started, in clock ticks since boot (field 22 of /proc/self/stat), so that a pid
 * the system has given to another process since is not mistaken for the owner; 0 where there is no
 * /proc (the pid alone then decides).
 */
export const PROCESS_START = processStart(process.pid);

function processStart(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[19]) || 0;
  } catch {
    return 0;
  }
}

/** What a lock file holds: the owner, as `<pid> <host tag> <start>`. */
export function lockOwnerText(): string {
  return `${process.pid} ${HOST_TAG} ${PROCESS_START}\n`;
}

/** A lock's holder touches it this often, so that a lock whose owner cannot be checked (another host) is known stale once it stops. */
export const LOCK_HEARTBEAT_MS = 2_000;

/** A lock of another host (or of an owner that cannot be checked) not touched for this long is stale. */
export const LOCK_STALE_MS = 15_000;

/** Whether a process of this machine with that pid is alive (EPERM: alive, but not ours to signal). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether an owner (pid and host tag, and for locks its start time) is certainly gone: a pid of this
 * host that no longer runs, or that runs but started at another time (the pid was reused).
 */
export function ownerGone(pid: number, host: string, start?: number): boolean {
  if (host !== HOST_TAG) return false;
  if (start !== undefined && start !== 0 && PROCESS_START !== 0) {
    if (pid === process.pid) return start !== PROCESS_START;
    return !processAlive(pid) || processStart(pid) !== start;
  }
  return pid !== process.pid && !processAlive(pid);
}

// Entries this process is writing right now: removed if the process exits before it finishes them.
const live = new Set<string>();
// Locks this process may hold: removed at exit only if they name this process as their owner.
const locks = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const leftover of live) {
      try {
        rmSync(leftover, { recursive: true, force: true });
      } catch {
        // Best effort: the start-up sweep of the next run removes what is left.
      }
    }
    const owner = lockOwnerText();
    for (const lock of locks) {
      try {
        if (readFileSync(lock, 'utf8') === owner) rmSync(lock, { force: true });
      } catch {
        // Gone already, or not ours to read: nothing to do.
      }
    }
  });
}

/** Registers a temporary entry so that an exit (SIGTERM, stdin closed) removes it; returns the unregister function. */
export function trackTempEntry(entry: string): () => void {
  installExitHook();
  live.add(entry);
  return () => void live.delete(entry);
}

/**
 * Registers a lock this process is about to take, before it exists (an exit can come between the
 * system call that makes it and the code after it): at exit it is removed if, and only if, it names
 * this process as its owner, so a lock another writer took meanwhile is left alone.
 */
export function trackOwnedLock(lock: string): () => void {
  installExitHook();
  locks.add(lock);
  return () => void locks.delete(lock);
}

export interface SweepOptions {
  log?: Logger;
  /** Stop after looking at this many entries (default 1,000,000): a sweep must not run for ever on a huge tree. */
  maxEntries?: number;
  /** Stop after this long (default 60 s). */
  maxMs?: number;
  /** Now, for the age rule (tests). */
  now?: number;
}

export interface SweepResult {
  removed: string[];
  scanned: number;
  complete: boolean;
}

/**
 * Removes stale leftovers under the given directories: only entries whose name matches the
 * patterns above exactly; a temporary entry when its owner (named in it) is a dead process of
 * this host or it is older than FOREIGN_STALE_MS; a lock when the owner written in it is gone or
 * it is older than that. Symbolic links are never followed (a link is not a directory here), so the
 * sweep stays inside the directories it was given; a leftover that is itself a link is removed as
 * a link. Runs one directory at a time and yields between them, so it can run in the background.
 */
export async function sweepTempFiles(directories: readonly string[], options: SweepOptions = {}): Promise<SweepResult> {
  const maxEntries = options.maxEntries ?? 1_000_000;
  const deadline = Date.now() + (options.maxMs ?? 60_000);
  const now = options.now ?? Date.now();
  const removed: string[] = [];
  let scanned = 0;
  const pending = [...directories];
  while (pending.length > 0) {
    if (scanned >= maxEntries || Date.now() > deadline) {
      options.log?.info('temporary-file sweep stopped early', { scanned, removed: removed.length });
      return { removed, scanned, complete: false };
    }
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      scanned++;
      const full = path.join(dir, entry.name);
      if (isSuiteTempName(entry.name)) {
        if (await isStale(full, entry.name, now)) {
          await rm(full, { recursive: true, force: true }).then(
            () => removed.push(full),
            () => undefined,
          );
        }
        continue;
      }
      if (entry.isDirectory()) pending.push(full);
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (removed.length > 0) options.log?.info(`removed ${removed.length} stale temporary file(s) left by an earlier run`);
  return { removed, scanned, complete: true };
}

async function isStale(full: string, name: string, now: number): Promise<boolean> {
  const stat = await lstat(full).catch(() => undefined);
  if (!stat) return false;
  const temp = TEMP_NAME.exec(name);
  if (temp) return now - stat.mtimeMs > FOREIGN_STALE_MS || ownerGone(Number(temp[1]), temp[2]!);
  return lockStale(full, stat, now);
}

/**
 * Whether a write lock is stale: its owner (written inside) is a process of this host that is gone
 * (its pid no longer runs, or now names a process that started at another time), or nobody has
 * touched it for LOCK_STALE_MS (a live holder touches it every LOCK_HEARTBEAT_MS, whatever host it is
 * on). Locks are made whole (written, then linked into place), so an empty one is not ours; it and a
 * link or directory with a lock's name are judged by age only.
 */
export async function lockStale(file: string, stat: Stats, now = Date.now()): Promise<boolean> {
  const age = now - stat.mtimeMs;
  if (age > LOCK_STALE_MS) return true;
  if (!stat.isFile() || stat.size > 256) return false;
  const owner = await readFile(file, 'utf8').catch(() => undefined);
  if (owner === undefined) return false;
  const match = /^(\d{1,10}) ([0-9a-f]{8})(?: (\d{1,20}))?\n$/.exec(owner);
  return match !== null && ownerGone(Number(match[1]), match[2]!, match[3] === undefined ? undefined : Number(match[3]));
}
