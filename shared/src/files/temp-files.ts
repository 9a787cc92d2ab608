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
 *
 * Every directory a process makes such an entry in is written to that process's journal first (in the
 * suite's state directory, see `tempJournalDirectory`), so that the start-up sweep reads only the
 * directories dead writers journaled, never the user's whole tree.
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, readdirSync, readFileSync, rmSync, type Dirent, type Stats } from 'node:fs';
import { access, lstat, mkdir, open, readFile, readdir, realpath, rm, unlink, utimes } from 'node:fs/promises';
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
  // Asked of every entry of every listing and walk: most names are ruled out by their first character.
  return name.charCodeAt(0) === 0x2e && name.startsWith('.suite-') && (TEMP_NAME.test(name) || LOCK_NAME.test(name));
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
/**
 * Creates of temporary entries handed to the thread pool and not finished yet. The exit hook runs on the
 * main thread while such a create may still be under way on another: one that lands after the hook's
 * removals leaves a file behind (seen in CI: a SIGTERM mid-write left a .tmp file). The shutdown waits
 * for them (`tempCreatesSettled`), and none starts once it has.
 */
const creating = new Set<Promise<void>>();
let creatingClosed = false;

/** Runs the create of a temporary entry (its open with O_CREAT) so that the shutdown can wait for it. */
export function trackTempCreate<T>(create: () => Promise<T>): Promise<T> {
  if (creatingClosed) return Promise.reject(new Error('The server is shutting down; nothing was written.'));
  const running = create();
  const settled = running.then(
    () => undefined,
    () => undefined,
  );
  creating.add(settled);
  void settled.then(() => creating.delete(settled));
  return running;
}

/**
 * Stops new creates of temporary entries and waits (at most `timeoutMs`) for those under way, so
 * that the exit hook finds every one of them: call last before process.exit.
 */
export async function tempCreatesSettled(timeoutMs: number): Promise<void> {
  creatingClosed = true;
  if (creating.size === 0) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all([...creating]), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    let clean = true;
    for (const leftover of live) {
      try {
        rmSync(leftover, { recursive: true, force: true });
      } catch {
        // Best effort: the journal stays, and the start-up sweep of the next run removes what is left.
        clean = false;
      }
    }
    const owner = lockOwnerText();
    for (const lock of locks) {
      try {
        if (readFileSync(lock, 'utf8') === owner) rmSync(lock, { force: true });
      } catch (error) {
        // Gone already (nothing to do), or not ours to read: keep the journal so a sweep looks again.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') clean = false;
      }
    }
    // A create already handed to the thread pool when the exit began can land after the removals above:
    // what this process named in the directories it journaled is abandoned now, so it goes too.
    const ours = `.suite-${process.pid}-${HOST_TAG}-`;
    for (const dir of journal.dirs.keys()) {
      try {
        for (const name of readdirSync(dir)) {
          if (name.startsWith(ours) && TEMP_NAME.test(name)) rmSync(path.join(dir, name), { recursive: true, force: true });
        }
      } catch {
        // Gone, or not readable now: the journal stays, and the next start's sweep looks again.
        clean = false;
      }
    }
    // Nothing of ours is left in the journaled directories: the next start has nothing to look at.
    if (clean && journal.file !== undefined) {
      try {
        rmSync(journal.file, { force: true });
      } catch {
        // A journal left behind costs the next start one read of its directories.
      }
    }
  });
}

/**
 * Where the suite keeps its state on this machine: `SUITE_STATE_DIR`, else `$XDG_STATE_HOME/mcp-suite`,
 * else `~/.local/state/mcp-suite`. Read at each call, so a test (or an operator) can point it elsewhere.
 */
export function suiteStateDirectory(): string {
  if (process.env.SUITE_STATE_DIR) return path.resolve(process.env.SUITE_STATE_DIR);
  const base = process.env.XDG_STATE_HOME ? path.resolve(process.env.XDG_STATE_HOME) : path.join(os.homedir(), '.local', 'state');
  return path.join(base, 'mcp-suite');
}

/**
 * The folders of the temporary-file journals (one file per writing process), in the order a writer
 * tries them: under the state directory, else (a home that cannot be written, as in some containers)
 * a folder of this user's in the system's temporary directory. The sweep reads both.
 */
export function tempJournalDirectories(): [string, string] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 'user';
  return [path.join(suiteStateDirectory(), 'temp-journal'), path.join(os.tmpdir(), `mcp-suite-${uid}`, 'temp-journal')];
}

/** A live writer touches its journal this often, so another host's sweep can tell a live journal from a dead one. */
export const JOURNAL_TOUCH_MS = 10 * 60_000;
/** A journal of another host untouched for this long is a dead writer's (its leftovers are then over FOREIGN_STALE_MS old too). */
export const FOREIGN_JOURNAL_STALE_MS = 2 * 60 * 60_000;

const JOURNAL_NAME = /^([0-9a-f]{8})-(\d{1,10})-(\d{1,20})\.dirs$/;

// This process's journal: the directories written to it (each once), and the appends in flight.
const journal: { file?: string; unusable?: boolean; dirs: Map<string, Promise<void>>; touch?: NodeJS.Timeout } = { dirs: new Map() };

/**
 * Writes `dir` to this process's journal, durably, before the caller makes a temporary entry or a lock
 * in it: a process killed at any later moment has its leftovers found by the next start-up's sweep. Each
 * directory is written once per process; concurrent callers for one directory share the write. When no
 * journal folder can be written, writes go on unjournaled (`tempJournalUsable` says so, for a warning):
 * their leftovers are still hidden from every listing and removed at a clean exit.
 */
export function journalTempDirectory(dir: string): Promise<void> {
  const known = journal.dirs.get(dir);
  if (known) return known;
  const written = appendJournal(dir);
  journal.dirs.set(dir, written);
  // A failed append is tried again by the next writer in that directory.
  written.catch(() => journal.dirs.delete(dir));
  return written;
}

async function appendJournal(dir: string): Promise<void> {
  if (journal.unusable) return;
  if (journal.file === undefined) {
    const folder = await firstWritable(tempJournalDirectories());
    if (folder === undefined) {
      journal.unusable = true;
      return;
    }
    journal.file = path.join(folder, `${HOST_TAG}-${process.pid}-${PROCESS_START}.dirs`);
    installExitHook();
    journal.touch = setInterval(() => {
      const now = new Date();
      if (journal.file) void utimes(journal.file, now, now).catch(() => undefined);
    }, JOURNAL_TOUCH_MS);
    journal.touch.unref();
  }
  // One line per directory, made durable before the entry it announces exists (a power loss included).
  const handle = await open(journal.file, 'a', 0o600);
  try {
    await handle.appendFile(`${JSON.stringify(dir)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function firstWritable(folders: readonly string[]): Promise<string | undefined> {
  for (const folder of folders) {
    try {
      await mkdir(folder, { recursive: true, mode: 0o700 });
      await access(folder, constants.W_OK);
      return folder;
    } catch {
      // The next candidate.
    }
  }
  return undefined;
}

/** Whether this process can keep a journal (false when neither journal folder can be written). */
export async function tempJournalUsable(): Promise<boolean> {
  if (journal.file !== undefined) return true;
  return (await firstWritable(tempJournalDirectories())) !== undefined;
}

/**
 * A new temporary entry's path in `dir`, journaled and tracked (removed at exit): call before creating
 * it, and `untrack` once it is renamed into place or removed.
 */
export async function newTempEntry(dir: string, kind: 'tmp' | 'deleting' = 'tmp'): Promise<{ path: string; untrack: () => void }> {
  await journalTempDirectory(dir);
  const entry = path.join(dir, tempName(kind));
  return { path: entry, untrack: trackTempEntry(entry) };
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

export interface JournalSweepOptions {
  log?: Logger;
  /** Now, for the age rules (tests). */
  now?: number;
}

export interface JournalSweepResult {
  /** The leftovers removed. */
  removed: string[];
  /** The journals of dead writers read (and removed once nothing of theirs was left). */
  journals: number;
  /** The directories those journals named, each read once. */
  directories: number;
}

/**
 * Removes the leftovers of dead writers (killed with SIGKILL, or a power loss) in the directories their
 * journals name, and nothing else: no tree is walked, so the cost follows what dead writers wrote, not
 * the size of the user's directories. A journal is a dead writer's when its owner is a process of this
 * host that is gone, or, from another host (or boot), when nobody has touched it for
 * FOREIGN_JOURNAL_STALE_MS. In each directory only entries with the suite's exact names are judged, by
 * the same rules as `sweepTempFiles` (owner gone, or another host's and older than an hour), so a live
 * process's files are never touched. A directory whose real path is no longer the journaled one (a part
 * of it replaced by a symbolic link since) is not read. A journal is removed once its writer's leftovers
 * are; one of another host whose entries are not an hour old yet stays for a later start.
 */
export async function sweepJournaledTempFiles(options: JournalSweepOptions = {}): Promise<JournalSweepResult> {
  const now = options.now ?? Date.now();
  const result: JournalSweepResult = { removed: [], journals: 0, directories: 0 };
  for (const folder of new Set(tempJournalDirectories())) {
    const names = await readdir(folder).catch(() => [] as string[]);
    for (const name of names) await sweepJournal(folder, name, now, result);
  }
  if (result.removed.length > 0) options.log?.info(`removed ${result.removed.length} stale temporary file(s) left by an earlier run`);
  return result;
}

async function sweepJournal(folder: string, name: string, now: number, result: JournalSweepResult): Promise<void> {
  const owner = JOURNAL_NAME.exec(name);
  if (!owner) return;
  const file = path.join(folder, name);
  if (file === journal.file) return;
  const stat = await lstat(file).catch(() => undefined);
  if (!stat?.isFile()) return;
  const foreign = owner[1] !== HOST_TAG;
  const dead = foreign ? now - stat.mtimeMs > FOREIGN_JOURNAL_STALE_MS : ownerGone(Number(owner[2]), HOST_TAG, Number(owner[3]));
  if (!dead) return;
  result.journals++;
  const dirs = new Set(parseJournal(await readFile(file, 'utf8').catch(() => '')));
  let remaining = false;
  for (const dir of dirs) {
    result.directories++;
    if ((await realpath(dir).catch(() => undefined)) !== dir) continue;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [] as Dirent[]);
    for (const entry of entries) {
      if (!isSuiteTempName(entry.name)) continue;
      const full = path.join(dir, entry.name);
      if (!(await isStale(full, entry.name, now))) {
        // A dead writer of this host has every entry judged stale, so one that is not belongs to a live
        // process. Another host's may be its own, not an hour old yet: look again at a later start.
        if (foreign) remaining = true;
        continue;
      }
      await rm(full, { recursive: true, force: true }).then(
        () => result.removed.push(full),
        () => (remaining = true),
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!remaining) await unlink(file).catch(() => undefined);
}

function parseJournal(text: string): string[] {
  const dirs: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const dir: unknown = JSON.parse(line);
      if (typeof dir === 'string' && path.isAbsolute(dir)) dirs.push(dir);
    } catch {
      // A line cut by a crash mid-append names nothing whole; the entry it announced was never made.
    }
  }
  return dirs;
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
 * The whole-tree sweep (for leftovers no journal names, such as those of releases before the journal):
 * removes stale leftovers under the given directories: only entries whose name matches the
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
