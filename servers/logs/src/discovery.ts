import type { Dirent } from 'node:fs';
import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * Finding logs: which names are logs, how rotated copies are named and ordered, and a bounded
 * breadth-first walk of the roots. Symbolic links are not followed (a tool given a link's path
 * still reads it when the path guard allows where it points).
 */

const LOG_NAME = /\.(log|jsonl|ndjson)$/i;
const SKIPPED_DIRECTORIES = new Set(['.git', 'node_modules', '.svn', '.hg']);

export type RotationKind = 'live' | 'compressed' | 'numbered' | 'dated';

export interface Rotation {
  /** The live file's name this one is a rotation of (itself for the live file). */
  base: string;
  kind: RotationKind;
  /** The number of a numbered rotation, the date (yyyymmdd) of a dated one. */
  index: number;
  /** What a dated name adds after the date (an hour, a time, epoch seconds: logrotate's dateformat), for copies of one day; 0 otherwise. */
  seq?: number;
  compressed: boolean;
}

/**
 * How a name relates to its live log: `app.log` (live), `app.log.1`, `app.log.2.gz` (numbered, as
 * logrotate names them), `app.log-20240115[.gz]` (logrotate dateext), `app.log.2024-01-15`
 * (Python's TimedRotatingFileHandler), `app.log.gz`.
 */
export function rotationOf(name: string): Rotation {
  let m = /^(.+)\.(\d{1,4})(\.gz)?$/.exec(name);
  if (m) return { base: m[1] as string, kind: 'numbered', index: Number(m[2]), compressed: m[3] !== undefined };
  m = /^(.+?)[-.](\d{4})-?(\d{2})-?(\d{2})(?:[-_T]?(\d{2,12}))?(\.gz)?$/.exec(name);
  if (m && LOG_NAME.test(m[1] as string)) {
    return { base: m[1] as string, kind: 'dated', index: Number(`${m[2]}${m[3]}${m[4]}`), seq: m[5] === undefined ? 0 : Number(m[5]), compressed: m[6] !== undefined };
  }
  m = /^(.+)\.gz$/.exec(name);
  if (m) return { base: m[1] as string, kind: 'compressed', index: 0, compressed: true };
  return { base: name, kind: 'live', index: 0, compressed: false };
}

/** True for the names the server treats as logs when it walks a directory. */
export function isLogName(name: string): boolean {
  return LOG_NAME.test(rotationOf(name).base);
}

const KIND_ORDER: Readonly<Record<RotationKind, number>> = { live: 0, compressed: 1, numbered: 2, dated: 3 };

/** Newest first: the live file, then app.log.gz, app.log.1, app.log.2.gz, …, then dated ones from the latest. */
export function compareRotations(a: Rotation, b: Rotation): number {
  if (a.kind !== b.kind) return KIND_ORDER[a.kind] - KIND_ORDER[b.kind];
  return a.kind === 'dated' ? b.index - a.index || (b.seq ?? 0) - (a.seq ?? 0) : a.index - b.index;
}

export interface LogFile {
  /** Real path. */
  path: string;
  /** Shown to people: relative to its root (prefixed with the root's name when there are several). */
  name: string;
  /** Real path of the live log this file belongs to (its own path for a live log). */
  family: string;
  rotation: Rotation;
  size: number;
  mtimeMs: number;
}

export interface LogRoots {
  directories: readonly string[];
  files: readonly string[];
}

/** A file given on the command line and its rotated siblings, newest first; nothing else of its directory. */
export async function familyOf(file: string): Promise<LogFile[]> {
  const dir = path.dirname(file);
  const base = path.basename(file);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const members: LogFile[] = [];
  for (const name of names) {
    const rotation = rotationOf(name);
    if (rotation.base !== base) continue;
    const full = path.join(dir, name);
    const stat = await lstat(full).catch(() => undefined);
    if (!stat?.isFile()) continue;
    members.push({ path: full, name, family: file, rotation, size: stat.size, mtimeMs: stat.mtimeMs });
  }
  return members.sort((a, b) => compareRotations(a.rotation, b.rotation));
}

export interface Discovery {
  logs: LogFile[];
  /** The walk stopped at the cap on logs or directories. */
  truncated: boolean;
}

/**
 * Every log under the roots: files given on the command line with their rotations, and files
 * with log names in the directories, breadth first, at most `depth` levels down. Sorted by family
 * (alphabetically), and within a family newest first.
 */
export async function discoverLogs(roots: LogRoots, options: { depth: number; maxLogs: number; signal?: AbortSignal }): Promise<Discovery> {
  const logs: LogFile[] = [];
  const seen = new Set<string>();
  let truncated = false;
  const named = roots.directories.length + roots.files.length > 1;
  const add = (file: LogFile): boolean => {
    if (seen.has(file.path)) return true;
    if (logs.length >= options.maxLogs) {
      truncated = true;
      return false;
    }
    seen.add(file.path);
    logs.push(file);
    return true;
  };

  for (const file of roots.files) {
    for (const member of await familyOf(file)) if (!add(member)) break;
  }
  let directoriesLeft = 20_000;
  for (const root of roots.directories) {
    const prefix = named ? `${path.basename(root)}/` : '';
    let level: string[] = [root];
    for (let depth = 1; depth <= options.depth && level.length > 0 && !truncated; depth++) {
      const next: string[] = [];
      for (const dir of level.sort()) {
        if (options.signal?.aborted || --directoriesLeft < 0) {
          truncated = true;
          break;
        }
        let entries: Dirent[];
        try {
          entries = await readdir(dir, { withFileTypes: true });
        } catch {
          continue;
        }
        for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
          const full = path.join(dir, entry.name);
          if (entry.isDirectory()) {
            if (!SKIPPED_DIRECTORIES.has(entry.name)) next.push(full);
            continue;
          }
          if (!entry.isFile() || !isLogName(entry.name)) continue;
          const stat = await lstat(full).catch(() => undefined);
          if (!stat?.isFile()) continue;
          const rotation = rotationOf(entry.name);
          const file: LogFile = {
            path: full,
            name: prefix + path.relative(root, full),
            family: path.join(dir, rotation.base),
            rotation,
            size: stat.size,
            mtimeMs: stat.mtimeMs,
          };
          if (!add(file)) break;
        }
      }
      level = next;
    }
  }
  const byFamily = (a: LogFile, b: LogFile): number => (a.family < b.family ? -1 : a.family > b.family ? 1 : compareRotations(a.rotation, b.rotation));
  return { logs: logs.sort(byFamily), truncated };
}

/** The live logs only (what is being written now): one per family, the live file when it exists. */
export function liveLogs(logs: readonly LogFile[]): LogFile[] {
  return logs.filter((l) => l.rotation.kind === 'live');
}

/**
 * Container runtimes' logs are named after what wrote them: Docker's json-file logs
 * (`…/containers/<id>/<id>-json.log[.N]`) by the container's name, read from the `Name` of the
 * `config.v2.json` beside them (a regular file, never followed through a link, at most
 * MAX_CONFIG_BYTES; nothing else of it is kept: it holds the container's environment), else by
 * the id's first 12 characters, as `docker ps` shows it; Kubernetes' CRI logs
 * (`…/pods/<namespace>_<pod>_<uid>/<container>/N.log[.<time>][.gz]`) as `<namespace>/<pod>/<container>`.
 */
const DOCKER_LOG = /(?:^|\/)containers\/([0-9a-f]{64})\/\1-json\.log(?:\.\d{1,4})?(?:\.gz)?$/;
const POD_LOG = /(?:^|\/)pods\/([^/_]+)_([^/_]+)_([^/]+)\/([^/]+)\/\d+\.log(?:\.\d{8}-\d{6})?(?:\.gz)?$/;
const MAX_CONFIG_BYTES = 1024 * 1024;
/** Docker names: letters, digits and `_.-`, starting with a letter or digit. */
const CONTAINER_NAME = /^\/?([A-Za-z0-9][A-Za-z0-9_.-]{0,127})$/;

export function isContainerLog(file: string): boolean {
  return DOCKER_LOG.test(file) || POD_LOG.test(file);
}

export async function containerOf(file: string): Promise<string | undefined> {
  const pod = POD_LOG.exec(file);
  if (pod) return `${pod[1]}/${pod[2]}/${pod[4]}`;
  const docker = DOCKER_LOG.exec(file);
  if (!docker) return undefined;
  const id = docker[1] as string;
  const config = path.join(path.dirname(file), 'config.v2.json');
  try {
    const handle = await open(config, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const info = await handle.stat();
      if (info.isFile() && info.size <= MAX_CONFIG_BYTES) {
        const name = (JSON.parse(await handle.readFile('utf8')) as { Name?: unknown }).Name;
        const m = typeof name === 'string' ? CONTAINER_NAME.exec(name) : null;
        if (m) return m[1] as string;
      }
    } finally {
      await handle.close();
    }
  } catch {
    // Unreadable or not JSON: the short id names it.
  }
  return id.slice(0, 12);
}
