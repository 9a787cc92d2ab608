import { constants } from 'node:fs';
import { lstat, type FileHandle } from 'node:fs/promises';
import { PathGuard, ToolError, type RequestContext, type RootsSnapshot } from '@suite/shared';
import { gzipFailure, type GzipFailure } from './chunks.js';
import type { LogsConfig } from './config.js';
import { familyOf, rotationOf, type LogRoots } from './discovery.js';

/**
 * Which files a request may read. The effective roots come from shared (command-line paths,
 * narrowed by the client's roots); a log file named on the command line is a root of its own and
 * brings its rotated siblings (app.log.1, app.log.2.gz, …, found when the request runs, so a
 * rotation that happened since start-up is covered), never the rest of its directory. Every file
 * is then opened through a PathGuard over exactly that set.
 */

export async function logRoots(ctx: RequestContext, config: LogsConfig): Promise<LogRoots> {
  const { directories } = await ctx.roots();
  const files = directories.filter((p) => config.files.includes(p));
  return { directories: directories.filter((p) => !files.includes(p)), files };
}

export function noLogsMessage(source?: RootsSnapshot['source']): string {
  // Started with logs, but the client's roots overlap none of them: starting with logs would not help.
  if (source === 'command-line narrowed by client') {
    return (
      "No log directory or file is allowed: the client's roots leave none of the server's directories and log files " +
      "(a root narrows access to what lies inside both). Add a root that holds one of the server's logs in the client, or remove the roots that exclude them."
    );
  }
  return (
    'No log directory or file is allowed. Start the server with directories or log files as arguments ' +
    '(for example: npx @suite/server-logs /var/log/myapp), or use a client that provides roots.'
  );
}

/** Guards of a server started with --refuse-hard-links: files opened through them must have one link only. */
const refusingHardLinks = new WeakSet<PathGuard>();

/** A path guard over the directories and the named files with their current rotations. */
export async function logGuard(ctx: RequestContext, config: LogsConfig): Promise<PathGuard> {
  const snapshot = await ctx.roots();
  if (snapshot.directories.length === 0) throw ToolError.accessDenied(noLogsMessage(snapshot.source));
  const base = await ctx.paths();
  const roots = await logRoots(ctx, config);
  let guard = base;
  if (roots.files.length > 0) {
    const rotated: string[] = [];
    for (const file of roots.files) for (const member of await familyOf(file)) if (member.path !== file) rotated.push(member.path);
    // Directories first: relative paths resolve against the first root.
    guard = new PathGuard([...roots.directories, ...roots.files, ...rotated], config.aliases);
  }
  if (config.refuseHardLinks) refusingHardLinks.add(guard);
  return guard;
}

/** Why a file opened through this guard is refused for its links (--refuse-hard-links), or undefined. */
export function hardLinkRefusal(guard: PathGuard, nlink: number): string | undefined {
  if (nlink <= 1 || !refusingHardLinks.has(guard)) return undefined;
  return `it has ${nlink} hard links, and the server was started with --refuse-hard-links (another name of the file may be outside the allowed directories)`;
}

export interface OpenedLog {
  handle: FileHandle;
  /** Real path. */
  real: string;
  /** As the user gave it: the only spelling messages use. */
  userPath: string;
  size: number;
  mtimeMs: number;
  ino: number;
  dev: number;
  /** 0 where the filesystem does not record it. */
  birthtimeMs: number;
  /** Last change of the inode (a rename, a write, a truncation). */
  ctimeMs: number;
  /** Hard links to the file (1 for a file with one name). */
  nlink: number;
  compressed: boolean;
}

/**
 * Resolves and opens a log for reading through the guard (O_NOFOLLOW on the last component, the
 * descriptor checked after opening); refuses directories, FIFOs and devices.
 */
export async function openLog(guard: PathGuard, userPath: string): Promise<OpenedLog> {
  let real: string;
  try {
    ({ real } = await guard.resolve(userPath, { mustExist: true }));
  } catch (error) {
    if (error instanceof ToolError && error.kind === 'not_found') throw ToolError.notFound(`No such log file: ${userPath}. Call list_logs to see the logs you can read.`);
    throw error;
  }
  // O_NONBLOCK: opening a FIFO must not hang the request; it is refused below as not a regular file.
  let handle: FileHandle;
  try {
    handle = await guard.open(real, constants.O_RDONLY | constants.O_NONBLOCK, undefined, userPath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const gone = code === 'ENOENT' || (error instanceof ToolError && (await lstat(real).then(() => false, (e: NodeJS.ErrnoException) => e.code === 'ENOENT')));
    // (A file removed between its opening and the check of where its descriptor points looks outside the roots.)
    if (gone) throw ToolError.notFound(`No such log file: ${userPath} (it may have just been rotated away). Try again, or call list_logs.`);
    if (code === 'EACCES' || code === 'EPERM') throw ToolError.accessDenied(`Permission denied: the server cannot read ${userPath}.`);
    throw error;
  }
  const stat = await handle.stat();
  if (stat.isDirectory()) {
    await handle.close();
    throw ToolError.invalidArgument(`${userPath} is a directory. Give a log file inside it (list_logs shows them).`);
  }
  if (!stat.isFile()) {
    await handle.close();
    throw ToolError.invalidArgument(`${userPath} is not a regular file.`);
  }
  const links = hardLinkRefusal(guard, stat.nlink);
  if (links) {
    await handle.close();
    throw ToolError.accessDenied(`Access denied: ${userPath}: ${links}.`);
  }
  const compressed = rotationOf(real.slice(real.lastIndexOf('/') + 1)).compressed;
  return { handle, real, userPath, size: stat.size, mtimeMs: stat.mtimeMs, ino: stat.ino, dev: stat.dev, birthtimeMs: stat.birthtimeMs, ctimeMs: stat.ctimeMs, nlink: stat.nlink, compressed };
}

/** The error for a .gz log whose data is not valid gzip (truncated or corrupt), naming only what the user gave. */
export function invalidGzip(userPath: string, failure: GzipFailure): ToolError {
  if (failure !== 'truncated' && failure !== 'corrupt') {
    return ToolError.invalidArgument(
      `${userPath} is not gzip data: it holds ${failure} data under a .gz name, which this server does not decompress. Decompress it with ${failure} tools and give the server the result.`,
    );
  }
  const why = failure === 'truncated' ? 'it is truncated (its compressed stream ends early: a copy still being written, or cut short)' : 'it is corrupt';
  return ToolError.invalidArgument(`${userPath} is not valid gzip data: ${why}. search_logs reads the part before the damage.`);
}

/** Runs fn with the log open, and closes it whatever happens. A .gz log that turns out not to be valid gzip data is a clear error. */
export async function withLog<T>(guard: PathGuard, userPath: string, fn: (log: OpenedLog) => Promise<T>): Promise<T> {
  const log = await openLog(guard, userPath);
  try {
    return await fn(log);
  } catch (error) {
    const failure = log.compressed && !(error instanceof ToolError) ? gzipFailure(error) : undefined;
    throw failure ? invalidGzip(userPath, failure) : error;
  } finally {
    await log.handle.close().catch(() => undefined);
  }
}
