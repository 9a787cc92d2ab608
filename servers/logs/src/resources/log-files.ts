import path from 'node:path';
import { z } from 'zod';
import {
  escapeTerminalControls,
  escapeTerminalControlsInLine,
  decodeCursor,
  encodeCursor,
  type ChangeSource,
  type RequestContext,
  type ResourceContents,
  type ResourceListing,
  type ResourceTemplateDefinition,
  type TemplateVariables,
  countOf,
} from '@suite/shared';
import { logGuard, logRoots, withLog } from '../access.js';
import { formatBytes, pointInTime } from '../arguments.js';
import { FILE_TEMPLATE, FILTERED_TEMPLATE, type LogsConfig } from '../config.js';
import { isLogName, rotationOf } from '../discovery.js';
import { FORMAT_DESCRIPTIONS } from '../formats/parsers.js';
import { completeLogPath } from '../known-logs.js';
import { textLog } from '../inspect.js';
import { hasFilter, tailLog } from '../tail.js';
import { allLogs, formatOf } from '../targets.js';
import { fileUri, fileView } from '../uris.js';

/**
 * Every log as a `logs://file/...` resource: listed with its size, modification time and format;
 * read as a bounded tail (the last N KiB, whole lines), optionally filtered by level, time and
 * text through the query (`?level=error&since=1h&grep=timeout`).
 */

const PAGE_SIZE = 200;
/** Listing watches stop at this depth below a root (as discovery does). */
const SKIPPED = new Set(['.git', 'node_modules', '.svn', '.hg']);

const listCursor = z.object({ offset: z.number().int().min(0) });

export async function readLogView(uri: string, variables: TemplateVariables, ctx: RequestContext, config: LogsConfig): Promise<ResourceContents> {
  const view = fileView(uri, variables);
  const since = pointInTime('since', view.since);
  const filter = { ...(view.level ? { minLevel: view.level } : {}), ...(since !== undefined ? { since } : {}), ...(view.grep ? { grep: view.grep } : {}) };
  const guard = await logGuard(ctx, config);
  return withLog(guard, view.path, async (log) => {
    const spec = await textLog(log, config);
    const maxBytes = config.limits.resourceTailBytes;
    const result = await tailLog(log, {
      count: 1_000_000,
      maxBytes,
      filter,
      spec,
      signal: ctx.signal,
      deadline: Date.now() + config.limits.tailBudgetMs,
      maxScanBytes: config.limits.maxTailScanBytes,
    });
    const notes: string[] = [];
    if (!result.reachedEnd) {
      notes.push(
        `[the end of this log was not reached: it is compressed, so it can only be read from its start, and ${config.limits.tailBudgetMs / 1000} s decompressed ${countOf(result.linesRead ?? 0, 'line')} of it ` +
          `(${formatBytes(result.scannedBytes)} of ${formatBytes(log.size)} compressed) without reaching the end. No lines are shown, since they would not be the last ones; the search_logs tool reads all of it]`,
      );
      return { uri, mimeType: 'text/plain', text: escapeTerminalControls(notes.join('\n')) };
    }
    if (!result.reachedStart || result.cutByBytes) {
      notes.push(`[${hasFilter(filter) ? 'the last matching entries' : 'the last lines'}, at most ${formatBytes(maxBytes)}, of ${formatBytes(log.size)}; use the read_log_range and search_logs tools for the rest]`);
    }
    if (result.lines.length === 0) notes.push(hasFilter(filter) ? '[no entries match]' : '[empty log]');
    return { uri, mimeType: 'text/plain', text: escapeTerminalControls([...notes, ...result.lines].join('\n')) };
  });
}

/**
 * What a subscription to a log follows: its path, through the shared change hub, which keeps
 * following the path (not the inode) through rename-and-create rotation, copytruncate, and the
 * moment between a rotation's rename and the new file's creation.
 */
export async function followLog(uri: string, variables: TemplateVariables, ctx: RequestContext, config: LogsConfig): Promise<ChangeSource> {
  const view = fileView(uri, variables);
  const guard = await logGuard(ctx, config);
  const { real } = await withLog(guard, view.path, async (log) => log);
  return { paths: [real] };
}

/** Where the listing is watched for logs appearing and vanishing: the directories, and the directories of named files. */
function listingWatch(directories: readonly string[], files: readonly string[]): { dirs: string[]; ignored: (p: string, stats?: { isFile(): boolean }) => boolean } {
  const fileDirs = [...new Set(files.map((f) => path.dirname(f)))].filter((d) => !directories.includes(d));
  const familyNames = new Set(files.map((f) => path.basename(f)));
  const dirs = [...directories, ...fileDirs];
  return {
    dirs,
    // chokidar passes the stats when it has them: only then is a name known to be a file's.
    ignored: (p, stats) => {
      if (dirs.includes(p)) return false;
      const root = directories.find((d) => p.startsWith(`${d}/`));
      if (root) {
        if (path.relative(root, p).split('/').some((part) => SKIPPED.has(part))) return true;
        return stats?.isFile() === true && !isLogName(path.basename(p));
      }
      // Beside a named file: only its rotations count.
      return !familyNames.has(rotationOf(path.basename(p)).base);
    },
  };
}

async function listLogs(cursor: string | undefined, ctx: RequestContext, config: LogsConfig): Promise<{ resources: ResourceListing[]; nextCursor?: string }> {
  const roots = await ctx.roots();
  if (roots.directories.length === 0) return { resources: [] };
  const split = await logRoots(ctx, config);
  const watch = listingWatch(split.directories, split.files);
  // Held per session under one key per set of roots; released when the session ends.
  await ctx.changes.watchListing(`logs-listing:${watch.dirs.join('\u0000')}`, watch.dirs, {
    depth: config.limits.discoveryDepth,
    ignored: watch.ignored,
  });
  const offset = cursor === undefined ? 0 : decodeCursor('log-resources', cursor, listCursor).offset;
  const { logs } = await allLogs(ctx, config);
  const guard = await logGuard(ctx, config);
  const page = logs.slice(offset, offset + PAGE_SIZE);
  const resources: ResourceListing[] = [];
  for (const log of page) {
    const format = await formatOf(guard, config, log.path);
    const kind = format === undefined ? 'unreadable' : format === 'binary' ? 'binary' : FORMAT_DESCRIPTIONS[format];
    const modified = new Date(log.mtimeMs).toISOString();
    resources.push({
      uri: fileUri(log.path),
      name: escapeTerminalControlsInLine(log.name),
      title: escapeTerminalControlsInLine(path.basename(log.path)),
      // The time is in the description too: clients older than annotations show only the text.
      description: escapeTerminalControlsInLine(`${kind}, ${formatBytes(log.size)}, modified ${modified}${log.rotation.kind !== 'live' ? `, rotated from ${path.basename(log.family)}` : ''}`),
      mimeType: 'text/plain',
      size: log.size,
      annotations: { lastModified: modified },
    });
  }
  const next = offset + page.length;
  return next < logs.length ? { resources, nextCursor: encodeCursor('log-resources', { offset: next }) } : { resources };
}

export function logFileTemplates(config: LogsConfig): ResourceTemplateDefinition[] {
  const complete = { path: (value: string, _context: unknown, ctx: RequestContext) => completeLogPath(value, ctx, config, (p) => p.slice(1)) };
  const read = (uri: string, variables: TemplateVariables, ctx: RequestContext): Promise<ResourceContents> => readLogView(uri, variables, ctx, config);
  const subscribe = (uri: string, variables: TemplateVariables, ctx: RequestContext): Promise<ChangeSource> => followLog(uri, variables, ctx, config);
  return [
    {
      // Listed first: shared's matcher gives it every logs://file URI, with any subset of its parameters or none.
      uriTemplate: FILTERED_TEMPLATE,
      name: 'log-view',
      title: 'Filtered view of a log',
      description:
        'The last entries of a log that pass the filters: level (that level or above), since (15m, 2h, 7d or an ISO time), grep (case-insensitive text). ' +
        `Any subset of the parameters, in any order. At most ${formatBytes(config.limits.resourceTailBytes)}.`,
      mimeType: 'text/plain',
      read,
      complete,
      subscribe,
    },
    {
      uriTemplate: FILE_TEMPLATE,
      name: 'log',
      title: 'Log file',
      description: `A log file by its absolute path without the leading slash (logs://file/var/log/app.log): the last ${formatBytes(config.limits.resourceTailBytes)} of it, whole lines. Subscribe to hear when it grows; rotation is followed.`,
      mimeType: 'text/plain',
      list: (cursor, ctx) => listLogs(cursor, ctx, config),
      read,
      complete,
      subscribe,
    },
  ];
}
