import { createHash } from 'node:crypto';
import { watch, type FSWatcher as NativeWatcher, type Dirent, type Stats } from 'node:fs';
import { lstat, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../core/logging.js';

/**
 * The watchers behind the change hub: a path followed through rotation, replacement, removal and
 * re-creation; a directory tree followed at any depth; and a poller for what cannot be watched.
 *
 * Both watchers use native directory watches (one inotify watch per directory; a directory watch
 * also reports writes to the files in it) and always open a watch before they look at what it
 * guards, so nothing that happens between a look and a watch is missed.
 */

/** Error codes with which the kernel refuses a new watch once a limit is reached (inotify watches, descriptors). */
const WATCH_LIMIT_CODES = new Set(['ENOSPC', 'EMFILE', 'ENFILE']);

export type WatchFault = 'ENOSPC' | 'EMFILE';

export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isWatchLimitError(error: unknown): boolean {
  return WATCH_LIMIT_CODES.has(errorCode(error) ?? '');
}

/** `SUITE_WATCH_FAULT=ENOSPC|EMFILE`: the fault seam, read when a hub is built. */
export function watchFaultFromEnvironment(): WatchFault | undefined {
  const value = process.env.SUITE_WATCH_FAULT;
  return value === 'ENOSPC' || value === 'EMFILE' ? value : undefined;
}

const FAULT_MESSAGES: Record<WatchFault, string> = {
  ENOSPC: 'System limit for number of file watchers reached',
  EMFILE: 'too many open files',
};

/** The error Node gives when inotify refuses a watch, shaped the same so that the same code handles it. */
function simulatedWatchError(fault: WatchFault, target: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${fault}: ${FAULT_MESSAGES[fault]} (simulated by SUITE_WATCH_FAULT), watch '${target}'`), {
    code: fault,
    syscall: 'watch',
    path: target,
  });
}

/** What every watcher needs from its owner. */
export interface WatchEnvironment {
  /** When set, every new native watch fails with this code (the fault seam). */
  fault: WatchFault | undefined;
  log: Logger;
}

export interface WatchEvents {
  /** Something about the watched path or tree changed (called often; the hub debounces). */
  changed(): void;
  /** The watcher cannot follow any more (a watch limit, a permission): the owner should poll instead. */
  failed(error: unknown): void;
}

/** What a follower is: a path (a file, or a directory and its direct children) or a tree (any depth). */
export interface Follower {
  readonly target: string;
  /** True once the native watches really cover the target (not only the bookkeeping). */
  readonly following: boolean;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function statOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await stat(p);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

async function lstatOrUndefined(p: string): Promise<Stats | undefined> {
  try {
    return await lstat(p);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

type DirectoryListener = (event: string, changed: string | null) => void;

/**
 * A native watch on a directory, or undefined when the directory vanished in the meantime (the
 * caller's next look finds out). The fault seam acts here, where the kernel would refuse.
 */
function openDirectoryWatch(dir: string, env: WatchEnvironment, listener: DirectoryListener, broken: (watcher: NativeWatcher) => void): NativeWatcher | undefined {
  try {
    if (env.fault) throw simulatedWatchError(env.fault, dir);
    const watcher = watch(dir, { persistent: false }, (event, changed) => listener(event, changed ?? null));
    watcher.on('error', () => {
      watcher.close();
      broken(watcher);
    });
    return watcher;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function identityOf(s: Stats): string {
  return `${s.dev}:${s.ino}`;
}

/**
 * Runs an async job one at a time. A request while it runs makes it run once more afterwards, so
 * the last request always sees a run that started after it.
 */
class SerialJob {
  private running: Promise<void> | undefined;
  private again = false;

  constructor(private readonly job: () => Promise<void>) {}

  run(): Promise<void> {
    this.again = true;
    this.running ??= (async () => {
      try {
        while (this.again) {
          this.again = false;
          await this.job();
        }
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }
}

/**
 * Follows one path through everything that happens to it on disk (Node shares the kernel watch
 * between followers of the same directory):
 *
 * - the directory holding the path (its "anchor") reports the path's entry being written,
 *   truncated, renamed away, created again or replaced by a rename, so a log file keeps being
 *   followed through logrotate's create and copytruncate modes without any re-watching;
 * - when the path is a directory (and `children` is set), a watch on it reports its direct children;
 * - when the path or its parent does not exist, the nearest existing ancestor is the anchor and the
 *   watches move down as the missing directories appear.
 *
 * Watches are opened before the state they guard is looked at again, so nothing that happens
 * between a look and a watch is missed.
 */
export class PathWatcher implements Follower {
  private anchor: { dir: string; identity: string; watcher: NativeWatcher; name: string } | undefined;
  private inner: { identity: string; watcher: NativeWatcher } | undefined;
  /** Identity of the target (dev:ino), undefined while it does not exist. */
  private identity: string | undefined;
  private readonly planner = new SerialJob(() => this.plan());
  private started = false;
  private closed = false;

  constructor(
    readonly target: string,
    private readonly options: { children: boolean },
    private readonly events: WatchEvents,
    private readonly env: WatchEnvironment,
  ) {}

  get following(): boolean {
    return this.started && !this.closed && this.anchor !== undefined;
  }

  /** Resolves once the watches are in place; throws what a watch failed with (other than the path vanishing). */
  async start(): Promise<void> {
    await this.planner.run();
    this.started = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closeAnchor();
    this.closeInner();
  }

  private replan(): void {
    if (this.closed) return;
    this.planner.run().catch((error: unknown) => {
      if (!this.closed) this.events.failed(error);
    });
  }

  /** Looks at the path and its ancestors and moves the watches until a look changes nothing. */
  private async plan(): Promise<void> {
    const before = this.identity;
    for (let pass = 0; pass < 20 && !this.closed; pass++) {
      if (!(await this.adjust())) break;
    }
    if (this.started && !this.closed && before !== this.identity) this.events.changed();
  }

  /** One look; true when a watch moved (so the next look happens with the new watches in place). */
  private async adjust(): Promise<boolean> {
    const targetStat = await statOrUndefined(this.target);
    let name = path.basename(this.target);
    let dir = path.dirname(this.target);
    let dirStat = await statOrUndefined(dir);
    while (!dirStat?.isDirectory()) {
      const up = path.dirname(dir);
      if (up === dir) throw new Error('The file system root is not a directory.');
      name = path.basename(dir);
      dir = up;
      dirStat = await statOrUndefined(dir);
    }
    if (this.closed) return false;
    let moved = false;
    const dirIdentity = identityOf(dirStat);
    if (!this.anchor || this.anchor.dir !== dir || this.anchor.identity !== dirIdentity) {
      this.closeAnchor();
      const watcher = this.open(dir, (event, changed) => this.onAnchorEvent(event, changed));
      if (!watcher) return true;
      this.anchor = { dir, identity: dirIdentity, watcher, name };
      moved = true;
    }
    this.anchor.name = name;

    const identity = targetStat ? identityOf(targetStat) : undefined;
    if (this.options.children && targetStat?.isDirectory()) {
      if (this.inner?.identity !== identity) {
        this.closeInner();
        const watcher = this.open(this.target, () => this.events.changed());
        if (!watcher) return true;
        this.inner = { identity: identityOf(targetStat), watcher };
        moved = true;
      }
    } else {
      this.closeInner();
    }
    this.identity = identity;
    return moved;
  }

  private onAnchorEvent(event: string, changed: string | null): void {
    const anchor = this.anchor;
    if (!anchor) return;
    const ours = changed === null || changed === anchor.name;
    if (ours && anchor.dir === path.dirname(this.target)) this.events.changed();
    // Entries appearing, vanishing or being renamed (ours, or the anchor itself) can move the watches.
    if (changed === null || (event === 'rename' && (ours || changed === path.basename(anchor.dir)))) this.replan();
  }

  private open(dir: string, listener: DirectoryListener): NativeWatcher | undefined {
    return openDirectoryWatch(dir, this.env, listener, (watcher) => {
      // A watch that broke (its directory went away, on some platforms) is dropped and looked at again.
      if (this.anchor?.watcher === watcher) this.anchor = undefined;
      if (this.inner?.watcher === watcher) this.inner = undefined;
      this.replan();
    });
  }

  private closeAnchor(): void {
    this.anchor?.watcher.close();
    this.anchor = undefined;
  }

  private closeInner(): void {
    this.inner?.watcher.close();
    this.inner = undefined;
  }
}

interface TreeDirectory {
  identity: string;
  watcher: NativeWatcher;
  /** Watched subdirectories, so that dropping a directory drops everything below it. */
  subdirs: Set<string>;
}

/**
 * Follows a directory tree at any depth: a native watch on every directory of it (symlinks are
 * entries, never followed), opened before the directory is read, so a directory created and filled
 * in a burst (`git branch feature/deep/x`) is watched with everything in it. A PathWatcher follows
 * the root itself, so a tree that does not exist yet, or is removed and created again, is picked up
 * when it is there.
 *
 * (chokidar reads a new directory before it watches it; an entry created in between is never
 * watched, which a loaded machine turned into lost updates under .git/refs.)
 */
export class TreeWatcher implements Follower {
  private readonly root: PathWatcher;
  private readonly directories = new Map<string, TreeDirectory>();
  /** Paths to look at again (an entry renamed, created or removed), processed shallowest first. */
  private readonly pending = new Set<string>();
  private readonly reconciler = new SerialJob(() => this.reconcilePending());
  private started = false;
  private closed = false;

  constructor(
    readonly target: string,
    private readonly events: WatchEvents,
    private readonly env: WatchEnvironment,
  ) {
    this.root = new PathWatcher(
      target,
      { children: false },
      {
        changed: () => {
          events.changed();
          this.recheck(target);
        },
        failed: (error) => events.failed(error),
      },
      env,
    );
  }

  get following(): boolean {
    return this.started && !this.closed && this.root.following;
  }

  /** Directories of the tree watched now (for diagnostics). */
  get watchedDirectories(): number {
    return this.directories.size;
  }

  async start(): Promise<void> {
    await this.root.start();
    this.pending.add(this.target);
    await this.reconciler.run();
    this.started = true;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.root.close();
    for (const directory of this.directories.values()) directory.watcher.close();
    this.directories.clear();
  }

  private recheck(p: string): void {
    if (this.closed) return;
    this.pending.add(p);
    this.reconciler.run().catch((error: unknown) => {
      if (!this.closed) this.events.failed(error);
    });
  }

  private async reconcilePending(): Promise<void> {
    const paths = [...this.pending].sort((a, b) => a.length - b.length);
    this.pending.clear();
    for (const p of paths) {
      if (this.closed) return;
      await this.reconcile(p);
    }
  }

  /** Makes the watches at and below `p` match what is on disk now. */
  private async reconcile(p: string): Promise<void> {
    if (p !== this.target && !p.startsWith(`${this.target}${path.sep}`)) return;
    // The root may be a symlink the server chose; below it, a symlink is an entry, not a way in.
    const s = p === this.target ? await statOrUndefined(p) : await lstatOrUndefined(p);
    if (this.closed) return;
    if (s?.isDirectory()) await this.scan(p, s);
    else this.drop(p);
  }

  private async scan(dir: string, s: Stats): Promise<void> {
    // Scans resume after awaits: a closed watcher must not open another watch.
    if (this.closed) return;
    const identity = identityOf(s);
    let directory = this.directories.get(dir);
    let fresh = false;
    if (directory?.identity !== identity) {
      // Another directory now sits at this path: nothing known below it holds any more.
      this.drop(dir);
      let watcher: NativeWatcher | undefined;
      try {
        watcher = openDirectoryWatch(
          dir,
          this.env,
          (event, changed) => this.onEvent(dir, event, changed),
          () => {
            this.drop(dir);
            this.recheck(dir);
          },
        );
      } catch (error) {
        // A subdirectory that refuses a watch (permissions) stays unwatched; a limit fails the tree.
        if (dir === this.target || isWatchLimitError(error)) throw error;
        this.env.log.private('debug', `not watching ${dir}: ${String(error)}`);
        return;
      }
      if (!watcher) return;
      directory = { identity, watcher, subdirs: new Set() };
      this.directories.set(dir, directory);
      this.directories.get(path.dirname(dir))?.subdirs.add(dir);
      fresh = true;
    }
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') this.drop(dir);
      else this.env.log.private('debug', `cannot list ${dir}: ${String(error)}`);
      return;
    }
    const present = new Set<string>();
    for (const entry of entries) {
      if (this.closed) return;
      if (!entry.isDirectory()) continue;
      const sub = path.join(dir, entry.name);
      const subStat = await lstatOrUndefined(sub);
      if (!subStat?.isDirectory()) continue;
      present.add(sub);
      await this.scan(sub, subStat);
    }
    for (const sub of [...directory.subdirs]) if (!present.has(sub)) this.drop(sub);
    // What was written into a new directory before its watch existed is news too.
    if (fresh && this.started && !this.closed && entries.length > 0) this.events.changed();
  }

  private onEvent(dir: string, event: string, changed: string | null): void {
    this.events.changed();
    if (changed === null) {
      this.recheck(dir);
      return;
    }
    if (event !== 'rename') return;
    this.recheck(path.join(dir, changed));
    // Linux reports a watched directory moving or vanishing under its own name.
    if (changed === path.basename(dir)) this.recheck(dir);
  }

  private drop(p: string): void {
    const directory = this.directories.get(p);
    if (!directory) return;
    this.directories.delete(p);
    directory.watcher.close();
    for (const sub of directory.subdirs) this.drop(sub);
    this.directories.get(path.dirname(p))?.subdirs.delete(p);
  }
}

/**
 * Calls `signature()` every `intervalMs` (one call at a time, timer unref'd so that it never keeps
 * the process alive) and reports a value different from the previous one.
 */
export class SignaturePoller {
  private timer: NodeJS.Timeout | undefined;
  private last: string | undefined;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly intervalMs: number,
    private readonly signature: () => Promise<string | undefined>,
    private readonly onChange: () => void,
    private readonly log: Logger,
  ) {}

  get running(): boolean {
    return !this.stopped;
  }

  /** Takes the first signature (its failure is the caller's), then polls. */
  async start(): Promise<void> {
    this.last = await this.signature();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    try {
      const next = await this.signature();
      if (this.stopped) return;
      this.failing = false;
      if (next !== this.last) {
        this.last = next;
        this.onChange();
      }
    } catch (error) {
      // The previous value stays: a failing check is not a change. Said once per failing streak.
      if (!this.failing) this.log.warning('a change check failed; retrying at the same interval', { error: String(error) });
      this.failing = true;
    } finally {
      this.schedule();
    }
  }
}

/**
 * Size, modification time (ns) and inode of one file, as a poll signature: undefined when it does
 * not exist. Another error (a permission) is thrown, so that a poller keeps the previous value.
 */
export async function fileSignature(p: string): Promise<string | undefined> {
  try {
    const s = await stat(p, { bigint: true });
    return `${s.size}:${s.mtimeNs}:${s.dev}:${s.ino}`;
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/** A directory listing is hashed this far at most, so polling a huge tree stays bounded. */
const MAX_SIGNATURE_ENTRIES = 20_000;

/**
 * The poll signature of what a watcher would follow: a file's own signature, or for a directory
 * its entries (direct children, or the whole tree when `recursive`) with each one's size, time and
 * inode. Never throws: an unreadable entry is part of the signature.
 */
export async function pathSignature(p: string, recursive: boolean): Promise<string | undefined> {
  let own: Stats | undefined;
  try {
    own = await statOrUndefined(p);
  } catch (error) {
    return `unreadable:${errorCode(error) ?? 'error'}`;
  }
  if (!own) return undefined;
  if (!own.isDirectory()) return fileSignature(p).catch((error: unknown) => `unreadable:${errorCode(error) ?? 'error'}`);
  const hash = createHash('sha1').update(`${identityOf(own)}\n`);
  let budget = MAX_SIGNATURE_ENTRIES;
  const visit = async (dir: string, relative: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      hash.update(`${relative}\0unreadable:${errorCode(error) ?? 'error'}\n`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (budget-- <= 0) return;
      const full = path.join(dir, entry.name);
      const entryPath = `${relative}/${entry.name}`;
      const signature = await lstat(full, { bigint: true }).then(
        (s) => `${s.size}:${s.mtimeNs}:${s.ino}`,
        (error: unknown) => `gone:${errorCode(error) ?? 'error'}`,
      );
      hash.update(`${entryPath}\0${signature}\n`);
      if (recursive && entry.isDirectory()) await visit(full, entryPath);
    }
  };
  await visit(p, '');
  return hash.digest('hex');
}

/**
 * The poll signature of a listing: the names and kinds (file or directory) of the entries under
 * `dirs`, `depth` levels of subdirectories deep, without what `ignored` leaves out. Writes to a
 * file do not change it; a file appearing, vanishing or renamed does. Never throws.
 */
export async function listingSignature(
  dirs: readonly string[],
  depth: number,
  ignored?: (p: string, stats?: { isFile(): boolean }) => boolean,
): Promise<string> {
  const hash = createHash('sha1');
  let budget = MAX_SIGNATURE_ENTRIES;
  const visit = async (dir: string, level: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      hash.update(`${dir}\0unreadable:${errorCode(error) ?? 'error'}\n`);
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (budget-- <= 0) return;
      const full = path.join(dir, entry.name);
      if (ignored?.(full, entry)) continue;
      hash.update(`${full}\0${entry.isDirectory() ? 'd' : 'f'}\n`);
      if (entry.isDirectory() && level < depth) await visit(full, level + 1);
    }
  };
  for (const dir of dirs) {
    hash.update(`${dir}\n`);
    await visit(dir, 0);
  }
  return hash.digest('hex');
}
