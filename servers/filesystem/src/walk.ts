import { promises as fs, readdirSync, type Dirent } from 'node:fs';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { CancelledError, isInside, isSuiteTempName } from '@suite/shared';

/**
 * A shared, bounded directory walker.
 *
 * It never follows a symbolic link: a link is reported as an entry of type `symlink` and is not
 * descended into, so a walk that starts inside the roots stays inside them whatever the links
 * point at (the official server does the same for directories; we make it a guarantee).
 *
 * The suite's own temporary files and write locks (temp-files in @suite/shared) are never reported.
 *
 * Order is deterministic: breadth-first, and within a directory by name (code-unit order).
 * Several directories are read ahead in parallel, but batches are yielded in queue order.
 */

export type WalkEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WalkEntry {
  /** Absolute path (the start directory joined with `relative`). */
  path: string;
  /** Path relative to the start directory, with `/` separators. */
  relative: string;
  name: string;
  /** 1 for the start directory's own children. */
  depth: number;
  type: WalkEntryType;
}

/** All entries of one directory that survived the filters. */
export interface WalkBatch {
  /** Absolute path of the directory that was read. */
  directory: string;
  /** Its path relative to the start directory ('' for the start directory itself). */
  relative: string;
  /** Depth of the entries in this batch. */
  depth: number;
  entries: WalkEntry[];
}

export interface WalkOptions {
  /** Entries deeper than this are not reported (1 = only the start directory's children). */
  maxDepth?: number;
  /**
   * Returns true to leave an entry out; an excluded directory is not descended into.
   * `relative` uses `/` separators and is relative to the start directory.
   */
  exclude?: (relative: string, isDirectory: boolean, name: string) => boolean;
  /** Honour `.gitignore` files (and skip `.git`). */
  respectGitignore?: boolean;
  /**
   * With `respectGitignore`, also load the `.gitignore` files of the directories between this one
   * (usually the allowed root containing the start) and the start directory, as git would.
   */
  gitignoreRoot?: string;
  signal?: AbortSignal;
  /** How many directories are read ahead in parallel (default 8). */
  concurrency?: number;
  /**
   * Read directories synchronously on this thread (yielding every few milliseconds) instead of
   * through the thread pool: less CPU in all (no hand-over per directory), for a caller whose
   * other threads are busy anyway (search_content's workers).
   */
  sync?: boolean;
  /** Called when a directory below the start cannot be read (permission, vanished); the walk goes on. */
  onUnreadable?: (relative: string, error: NodeJS.ErrnoException) => void;
}

/** The allowed root that contains a real path (the deepest, when roots nest): the usual `gitignoreRoot`. */
export function rootContaining(roots: readonly string[], real: string): string | undefined {
  let best: string | undefined;
  for (const dir of roots) if (isInside(real, dir) && (!best || dir.length > best.length)) best = dir;
  return best;
}

interface GitignoreMatcher {
  /** Directory of the .gitignore, relative to the start directory ('' = start, '../x' never: see ancestorPrefix). */
  base: string;
  /** For matchers of ancestor directories: the start directory's path relative to the .gitignore's directory. */
  ancestorPrefix?: string;
  ig: Ignore;
}

interface PendingDirectory {
  absolute: string;
  relative: string;
  depth: number;
  matchers: GitignoreMatcher[];
}

/** Longest stretch of synchronous directory reads before a turn of the event loop. */
const SYNC_TURN_MS = 4;

interface ReadResult {
  dirents: Dirent[];
  error?: NodeJS.ErrnoException;
}

const GITIGNORE_MAX_BYTES = 1024 * 1024;

function typeOf(dirent: Dirent): WalkEntryType {
  if (dirent.isFile()) return 'file';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isSymbolicLink()) return 'symlink';
  return 'other';
}

function toPosix(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}

async function readGitignore(file: string): Promise<Ignore | undefined> {
  try {
    // lstat first: a .gitignore that is a symlink is not read (it could point out of the roots).
    const stat = await fs.lstat(file);
    if (!stat.isFile() || stat.size > GITIGNORE_MAX_BYTES) return undefined;
    return ignore().add(await fs.readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function isIgnoredByGit(matchers: readonly GitignoreMatcher[], relative: string, isDirectory: boolean): boolean {
  let ignored = false;
  for (const m of matchers) {
    let local: string;
    if (m.ancestorPrefix !== undefined) local = m.ancestorPrefix ? `${m.ancestorPrefix}/${relative}` : relative;
    else if (m.base === '') local = relative;
    else local = relative.slice(m.base.length + 1);
    const result = m.ig.test(isDirectory ? `${local}/` : local);
    // Deeper .gitignore files come later and override (a `!pattern` can re-include).
    if (result.ignored) ignored = true;
    else if (result.unignored) ignored = false;
  }
  return ignored;
}

async function ancestorMatchers(start: string, gitignoreRoot: string): Promise<GitignoreMatcher[]> {
  if (!isInside(start, gitignoreRoot) || start === gitignoreRoot) return [];
  const chain: string[] = [];
  for (let dir = path.dirname(start); ; dir = path.dirname(dir)) {
    chain.unshift(dir);
    if (dir === gitignoreRoot || path.dirname(dir) === dir) break;
  }
  const out: GitignoreMatcher[] = [];
  for (const dir of chain) {
    const ig = await readGitignore(path.join(dir, '.gitignore'));
    if (ig) out.push({ base: '', ancestorPrefix: toPosix(path.relative(dir, start)), ig });
  }
  return out;
}

function compareNames(a: Dirent, b: Dirent): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Walks `start` (an absolute real path of a directory) and yields one batch per directory.
 * Throws if `start` itself cannot be read; unreadable subdirectories are skipped.
 * Stopping the iteration early (break/return) is cheap: no further directories are read.
 */
export async function* walkBatches(start: string, options: WalkOptions = {}): AsyncGenerator<WalkBatch, void, undefined> {
  const maxDepth = options.maxDepth ?? Infinity;
  const concurrency = Math.max(1, options.concurrency ?? 8);
  const signal = options.signal;
  const gitignore = options.respectGitignore === true;

  const rootMatchers = gitignore && options.gitignoreRoot ? await ancestorMatchers(start, options.gitignoreRoot) : [];
  const queue: PendingDirectory[] = [{ absolute: start, relative: '', depth: 0, matchers: rootMatchers }];
  const reads = new Map<number, Promise<ReadResult>>();
  let head = 0;

  const startRead = (index: number): void => {
    const item = queue[index];
    if (!item || reads.has(index)) return;
    const promise = fs.readdir(item.absolute, { withFileTypes: true }).then(
      (dirents) => ({ dirents }),
      (error: NodeJS.ErrnoException) => ({ dirents: [], error }),
    );
    reads.set(index, promise);
  };
  // Synchronous reads: a directory at a time on this thread, with a turn of the event loop every few milliseconds.
  let lastTurn = performance.now();
  const readNow = async (index: number): Promise<ReadResult> => {
    if (performance.now() - lastTurn > SYNC_TURN_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      lastTurn = performance.now();
    }
    try {
      return { dirents: readdirSync((queue[index] as PendingDirectory).absolute, { withFileTypes: true }) };
    } catch (error) {
      return { dirents: [], error: error as NodeJS.ErrnoException };
    }
  };

  while (head < queue.length) {
    if (signal?.aborted) throw new CancelledError();
    if (!options.sync) for (let i = head; i < Math.min(queue.length, head + concurrency); i++) startRead(i);
    const current = queue[head] as PendingDirectory;
    const read = options.sync ? await readNow(head) : ((await reads.get(head)) as ReadResult);
    reads.delete(head);
    // Let go of finished queue items so a huge walk does not keep every directory alive.
    queue[head] = undefined as unknown as PendingDirectory;
    head++;
    if (signal?.aborted) throw new CancelledError();

    if (read.error) {
      if (current.depth === 0) throw read.error;
      options.onUnreadable?.(current.relative, read.error);
      continue;
    }

    const depth = current.depth + 1;
    let matchers = current.matchers;
    if (gitignore && read.dirents.some((d) => d.name === '.gitignore' && d.isFile())) {
      const ig = await readGitignore(path.join(current.absolute, '.gitignore'));
      if (ig) matchers = [...matchers, { base: current.relative, ig }];
    }

    const dirents = read.dirents.sort(compareNames);
    const entries: WalkEntry[] = [];
    for (const dirent of dirents) {
      const name = dirent.name;
      const type = typeOf(dirent);
      const isDirectory = type === 'directory';
      const relative = current.relative ? `${current.relative}/${name}` : name;
      // Our own temporary files and locks (a write in progress, a crash's leftovers) are never listed or searched.
      if (isSuiteTempName(name)) continue;
      if (gitignore && isDirectory && name === '.git') continue;
      if (options.exclude?.(relative, isDirectory, name)) continue;
      if (matchers.length > 0 && isIgnoredByGit(matchers, relative, isDirectory)) continue;
      // Plain concatenation: the directory is already absolute and normalized, and path.join per entry shows up in profiles.
      const absolute = current.absolute.endsWith(path.sep) ? current.absolute + name : current.absolute + path.sep + name;
      entries.push({ path: absolute, relative, name, depth, type });
      if (isDirectory && depth < maxDepth) queue.push({ absolute, relative, depth, matchers });
    }
    yield { directory: current.absolute, relative: current.relative, depth, entries };
  }
}

/** Entry-by-entry view of `walkBatches`. */
export async function* walk(start: string, options: WalkOptions = {}): AsyncGenerator<WalkEntry, void, undefined> {
  for await (const batch of walkBatches(start, options)) {
    for (const entry of batch.entries) yield entry;
  }
}
