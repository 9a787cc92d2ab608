import { constants, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileChangedError, currentVersion, sameVersion, type FileVersion } from './file-version.js';
import { newTempEntry, trackTempCreate } from './temp-files.js';
import { ToolError } from '../core/errors.js';
import { withWriteLock } from './write-locks.js';

/** Separator-aware containment: `/a/bc` is not inside `/a/b`. */
export function isInside(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(path.sep) ? parent : parent + path.sep;
  return child.startsWith(prefix);
}

const MAX_LINK_HOPS = 40;

export interface ResolvedPath {
  /** The real path (symlinks resolved); for a path that does not exist, its would-be real path. */
  real: string;
  exists: boolean;
}

/**
 * Decides whether a path a user gave may be touched, given the effective roots.
 *
 * Order: validate the text, resolve it lexically, require the lexical path to be inside a root,
 * then resolve every symlink (through the nearest existing ancestor for a path that does not exist
 * yet, following dangling links to where they would create a file) and require the real path to
 * be inside a root too. Errors only ever repeat the path the user gave.
 */
export class PathGuard {
  private readonly realRoots: string[];

  /**
   * @param roots real paths of the allowed directories (as RootsManager produces them)
   * @param aliases other spellings of the same roots (as typed on the command line), so that
   *   `/tmp/x` still works where /tmp is a symlink
   */
  constructor(roots: readonly string[], aliases: readonly string[] = []) {
    this.realRoots = [...roots];
    this.lexicalRoots = [...new Set([...roots, ...aliases.map((a) => path.resolve(a))])];
  }

  private readonly lexicalRoots: string[];

  get directories(): readonly string[] {
    return this.realRoots;
  }

  /** True when a real path lies inside one of the roots. */
  contains(realPath: string): boolean {
    return this.realRoots.some((root) => isInside(realPath, root));
  }

  /** Checks the text of a path and makes it absolute (relative paths resolve against the first root). */
  normalize(userPath: string): string {
    if (typeof userPath !== 'string' || userPath.length === 0) throw ToolError.invalidArgument('A path is required.');
    if (userPath.includes('\0')) throw ToolError.invalidArgument('Invalid path: it contains a NUL byte.');
    if (/[\r\n]/.test(userPath)) throw ToolError.invalidArgument('Invalid path: it contains a line break.');
    if (/^\s|\s$/.test(userPath) || /^["'`]|["'`]$/.test(userPath)) {
      throw ToolError.invalidArgument(
        `Invalid path ${JSON.stringify(userPath)}: it starts or ends with whitespace or a quote. Remove them and try again.`,
      );
    }
    if (process.platform !== 'win32' && (/^[A-Za-z]:([\\/]|$)/.test(userPath) || userPath.startsWith('\\\\'))) {
      throw ToolError.invalidArgument(
        `Invalid path ${JSON.stringify(userPath)}: this is a Windows path, but the server runs on ${process.platform}. Use a path like ${this.realRoots[0] ?? '/home/me/project'}/file.txt.`,
      );
    }
    let p = userPath;
    if (p.startsWith('file://')) {
      try {
        p = fileURLToPath(p);
      } catch {
        throw ToolError.invalidArgument(`Invalid file URI: ${userPath}`);
      }
    }
    if (p === '~' || p.startsWith('~/')) p = path.join(os.homedir(), p.slice(1));
    const base = this.realRoots[0];
    if (!path.isAbsolute(p)) {
      if (!base) throw ToolError.accessDenied(noRootsMessage());
      p = path.resolve(base, p);
    }
    return path.resolve(p);
  }

  /**
   * Resolves a user path to a real path inside the roots, or throws an access-denied ToolError.
   * With `mustExist`, a path that does not exist is a not-found ToolError.
   */
  async resolve(userPath: string, options: { mustExist?: boolean } = {}): Promise<ResolvedPath> {
    if (this.realRoots.length === 0) throw ToolError.accessDenied(noRootsMessage());
    const absolute = this.normalize(userPath);
    if (!this.lexicalRoots.some((root) => isInside(absolute, root))) throw denied(userPath);
    const resolved = await realpathThroughAncestors(absolute, userPath);
    if (!this.contains(resolved.real)) throw denied(userPath);
    if (options.mustExist && !resolved.exists) throw ToolError.notFound(`Not found: ${userPath}`);
    return resolved;
  }

  /**
   * Opens a file that was resolved by `resolve`, refusing a symlink as the last component and
   * verifying, after the open, that the descriptor really points inside the roots (this closes
   * the window in which a parent directory could be swapped for a symlink).
   */
  async open(realPath: string, flags: number, mode?: number, userPath = realPath): Promise<fs.FileHandle> {
    const handle = await fs.open(realPath, flags | constants.O_NOFOLLOW, mode).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ELOOP') throw denied(userPath);
      throw error;
    });
    const actual = await descriptorPath(handle);
    if (actual !== undefined && !this.contains(actual)) {
      await handle.close();
      // We created it (O_EXCL), through a swapped parent: remove exactly that file, by its real path.
      const created = (flags & constants.O_CREAT) !== 0 && (flags & constants.O_EXCL) !== 0;
      if (created) await fs.rm(actual, { force: true }).catch(() => undefined);
      throw denied(userPath);
    }
    return handle;
  }

  /** Checks where an open descriptor really points (Linux: /proc/self/fd). */
  async verifyHandle(handle: fs.FileHandle, userPath: string): Promise<void> {
    const actual = await descriptorPath(handle);
    if (actual !== undefined && !this.contains(actual)) throw denied(userPath);
  }

  /**
   * Runs `fn` holding the write locks of these real paths (see write-locks): other writers of the
   * same files in this process wait their turn, and so do other suite processes. Read-modify-write
   * tools hold it from the read to the rename; plain writes hold it around the write.
   */
  withWriteLock<T>(realPaths: string | readonly string[], fn: () => Promise<T>, options: { signal?: AbortSignal; userPath?: string } = {}): Promise<T> {
    const userPath = options.userPath;
    return withWriteLock(realPaths, fn, {
      ...options,
      open: (file, flags, mode) => this.open(file, flags, mode, userPath ?? file),
      // A root's own lock would sit outside the roots: there the operation itself says why it cannot be done.
      lockFileAllowed: (file) => this.contains(path.dirname(file)),
    });
  }

  /**
   * Writes a file atomically: a temporary file in the same directory, fsync, then rename, so a
   * reader sees the old or the new content and never half of it. Keeps the mode of a file it
   * replaces. With `exclusive`, fails with a conflict instead of replacing an existing file. With
   * `expected` (the version that was read), the target is checked again right before the rename,
   * and a FileChangedError is thrown (and nothing written) when it is not that version any more.
   * The temporary file is named by temp-files (hidden from listings, swept after a crash) and
   * removed on any failure, and when the process exits before the rename.
   */
  async writeFileAtomic(
    realPath: string,
    data: string | Uint8Array,
    options: { exclusive?: boolean; userPath?: string; expected?: FileVersion } = {},
  ): Promise<void> {
    const userPath = options.userPath ?? realPath;
    const dir = path.dirname(realPath);
    let mode: number | undefined;
    try {
      const stat = await fs.lstat(realPath);
      if (stat.isSymbolicLink()) throw denied(userPath);
      if (stat.isDirectory()) throw ToolError.conflict(`Cannot write ${userPath}: it is a directory.`);
      if (options.exclusive) throw ToolError.conflict(`${userPath} already exists.`);
      mode = stat.mode & 0o7777;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    // No part of the target's name: a long but legal name must not become an illegal temp name.
    const { path: tmp, untrack } = await newTempEntry(dir);
    let handle: fs.FileHandle;
    try {
      handle = await trackTempCreate(() => this.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode ?? 0o666, userPath));
    } catch (error) {
      untrack();
      throw error;
    }
    try {
      try {
        await handle.writeFile(data);
        if (mode !== undefined) await handle.chmod(mode);
        await handle.sync();
      } finally {
        await handle.close();
      }
      if (options.expected) {
        const now = await currentVersion(realPath);
        if (!now || !sameVersion(now, options.expected)) throw new FileChangedError(userPath);
      }
      if (options.exclusive) {
        // link() fails with EEXIST instead of replacing: a no-clobber rename.
        await fs.link(tmp, realPath);
        await fs.rm(tmp, { force: true });
      } else {
        await fs.rename(tmp, realPath);
      }
    } catch (error) {
      await fs.rm(tmp, { force: true });
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw ToolError.conflict(`${userPath} already exists.`);
      throw error;
    } finally {
      untrack();
    }
    await syncDirectory(dir);
  }
}

/** Where a descriptor really points, or undefined where the platform cannot tell. */
async function descriptorPath(handle: fs.FileHandle): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    return await fs.readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** Makes a rename durable: the directory entry is only on disk once the directory is synced. */
async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, constants.O_RDONLY | constants.O_DIRECTORY).catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

/**
 * Why no directory is allowed, for the source the (empty) directories came from: a server started
 * with directories whose client's roots overlap none of them is told so, not told to start with
 * directories it already has.
 */
export function noRootsMessage(source?: 'command-line' | 'client' | 'command-line narrowed by client'): string {
  if (source === 'command-line narrowed by client') {
    return (
      "No directory is allowed: the client's roots leave none of the server's directories (a root narrows access to what lies " +
      "inside both, and none of the client's roots overlaps a directory the server was started with). " +
      'Add a root inside one of the allowed directories in the client, or remove the roots that exclude them.'
    );
  }
  return (
    'No directory is allowed. Start the server with one or more directories as arguments ' +
    '(for example: npx @suite/server-filesystem ~/projects), or use a client that provides roots.'
  );
}

function tooLong(userPath: string): ToolError {
  const shown = userPath.length > 120 ? `${JSON.stringify(userPath.slice(0, 120))}… (${userPath.length} characters)` : JSON.stringify(userPath);
  return ToolError.invalidArgument(`Invalid path: ${shown} is too long for the filesystem (at most 255 bytes per name and 4096 bytes in all).`);
}

function denied(userPath: string): ToolError {
  return ToolError.accessDenied(`Access denied: ${JSON.stringify(userPath)} is outside the allowed directories.`);
}

/**
 * realpath() that also works for paths that do not exist yet: walk up to the nearest existing
 * ancestor, resolve it, and re-append the rest. A dangling symlink is followed to its target
 * (it is where a write would land), with a hop limit.
 */
async function realpathThroughAncestors(absolute: string, userPath: string): Promise<ResolvedPath> {
  let current = absolute;
  const rest: string[] = [];
  for (let hops = 0; ; ) {
    try {
      const real = await fs.realpath(current);
      return { real: rest.length > 0 ? path.join(real, ...rest) : real, exists: rest.length === 0 };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw denied(userPath);
      // The user's input, not a fault of the server: the kernel measures names and paths in bytes.
      if (code === 'ENAMETOOLONG') throw tooLong(userPath);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        if (code === 'EACCES') throw ToolError.accessDenied(`Permission denied: ${userPath}`);
        throw error;
      }
      const stat = await fs.lstat(current).catch(() => undefined);
      if (stat?.isSymbolicLink()) {
        if (++hops > MAX_LINK_HOPS) throw denied(userPath);
        const target = await fs.readlink(current).catch((e: NodeJS.ErrnoException) => {
          // The link changed between lstat and readlink (a race with another process): look again.
          if (e.code === 'EINVAL' || e.code === 'ENOENT') return undefined;
          throw e;
        });
        if (target !== undefined) current = path.resolve(path.dirname(current), target);
        continue;
      }
      const parent = path.dirname(current);
      if (parent === current) return { real: path.join(current, ...rest), exists: false };
      rest.unshift(path.basename(current));
      current = parent;
    }
  }
}
