import path from 'node:path';
import { ToolError, escapeTerminalControls, type ChangeSource, type RequestContext, type ResourceContents, type ResourceDefinition, type ResourceTemplateDefinition, countOf } from '@suite/shared';
import { logGuard, logRoots, withLog } from '../access.js';
import { formatBytes } from '../arguments.js';
import { RECENT_TEMPLATE, RECENT_URI, type LogsConfig } from '../config.js';
import { containerOf, type LogFile } from '../discovery.js';
import { inspectLog } from '../inspect.js';
import { tailLog } from '../tail.js';
import { allLogs } from '../targets.js';
import { formatDuration, parseDuration } from '../timestamps.js';

/**
 * `logs://recent?timeframe=1h`: the entries of the last hour (or the given timeframe) across every
 * log that was written to in that time, merged in time order, each line prefixed with its file's
 * name. Bounded: the newest entries that fit in the resource size, from at most MAX_FILES logs.
 */

const DEFAULT_TIMEFRAME = '1h';
const MAX_TIMEFRAME_MS = 30 * 86_400_000;
const MAX_FILES = 50;
const MAX_ENTRIES_PER_FILE = 2000;
const READ_BUDGET_MS = 10_000;

export const TIMEFRAMES = ['5m', '15m', '1h', '6h', '24h', '7d'];

export function recentUri(timeframe: string): string {
  return `${RECENT_URI}?timeframe=${encodeURIComponent(timeframe)}`;
}

export function parseTimeframe(timeframe: string): number {
  const ms = parseDuration(timeframe);
  if (ms === undefined || ms > MAX_TIMEFRAME_MS) {
    throw ToolError.invalidArgument(`Invalid timeframe ${JSON.stringify(timeframe)}: use a duration up to 30d, such as 15m, 1h, 6h or 7d.`);
  }
  return ms;
}

/** Logs written to within the timeframe, newest first; compressed copies are older by nature. */
export function recentlyWritten(logs: readonly LogFile[], since: number): LogFile[] {
  return logs
    .filter((l) => !l.rotation.compressed && l.mtimeMs >= since)
    .sort((a, b) => b.mtimeMs - a.mtimeMs)
    .slice(0, MAX_FILES);
}

async function readRecent(uri: string, timeframe: string, ctx: RequestContext, config: LogsConfig): Promise<ResourceContents> {
  const windowMs = parseTimeframe(timeframe);
  const since = Date.now() - windowMs;
  const guard = await logGuard(ctx, config);
  const files = recentlyWritten((await allLogs(ctx, config)).logs, since);
  const deadline = Date.now() + READ_BUDGET_MS;
  const entries: { time: number; order: number; lines: string[] }[] = [];
  let withoutTimes = 0;
  for (const file of files) {
    try {
      await withLog(guard, file.path, async (log) => {
        const { spec, binary } = await inspectLog(log, config);
        if (binary) return;
        const result = await tailLog(log, { count: MAX_ENTRIES_PER_FILE, maxBytes: config.limits.resourceTailBytes, filter: { since }, spec, signal: ctx.signal, deadline, maxScanBytes: config.limits.maxTailScanBytes });
        if (result.groups.length === 0 && spec.format === 'plain') withoutTimes++;
        // Every pod's log is 0.log: a container log is prefixed with the container (or namespace/pod/container) instead.
        const name = (await containerOf(log.real)) ?? path.basename(file.path);
        result.groups.forEach((lines, i) => entries.push({ time: result.times[i] ?? since, order: entries.length, lines: lines.map((l) => `[${name}] ${l}`) }));
      });
    } catch {
      // A log that vanished (rotated away) since the listing has nothing recent to add.
    }
  }
  entries.sort((a, b) => a.time - b.time || a.order - b.order);
  // The newest entries that fit.
  const picked: string[][] = [];
  let bytes = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const lines = (entries[i] as { lines: string[] }).lines;
    const size = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    if (bytes + size > config.limits.resourceTailBytes) break;
    bytes += size;
    picked.push(lines);
  }
  picked.reverse();
  const header = [`[entries of the last ${formatDuration(windowMs)} from ${countOf(files.length, 'log')}${picked.length < entries.length ? `; the newest ${picked.length} of ${entries.length}, at most ${formatBytes(config.limits.resourceTailBytes)}` : ''}]`];
  if (withoutTimes > 0) header.push(`[${withoutTimes} recently written log${withoutTimes === 1 ? ' has' : 's have'} no timestamps and cannot be placed in time; read them as logs://file/ resources]`);
  if (picked.length === 0) header.push('[no entries in that timeframe]');
  return { uri, mimeType: 'text/plain', text: escapeTerminalControls([...header, ...picked.flat()].join('\n')) };
}

/**
 * What a subscription to the recent entries follows: every directory that holds a log (a directory
 * path reports writes to its files and files appearing), and the files named on the command line.
 * A directory created later, deeper than the roots, is not followed until the next subscription.
 */
async function followRecent(ctx: RequestContext, config: LogsConfig): Promise<ChangeSource> {
  const roots = await logRoots(ctx, config);
  const { logs } = await allLogs(ctx, config);
  const dirs = new Set<string>([...roots.directories, ...logs.filter((l) => !roots.files.includes(l.family)).map((l) => path.dirname(l.path))]);
  return { paths: [...dirs, ...roots.files] };
}

export function recentResources(config: LogsConfig): { resource: ResourceDefinition; template: ResourceTemplateDefinition } {
  const description = 'The entries of every log written to in the timeframe, merged in time order, each line prefixed with its file name.';
  return {
    resource: {
      uri: RECENT_URI,
      name: 'recent',
      title: `Recent entries across all logs (last ${DEFAULT_TIMEFRAME})`,
      description: `${description} The last ${DEFAULT_TIMEFRAME}; logs://recent?timeframe=15m for another timeframe.`,
      mimeType: 'text/plain',
      read: (ctx) => readRecent(RECENT_URI, DEFAULT_TIMEFRAME, ctx, config),
      subscribe: (ctx) => followRecent(ctx, config),
    },
    template: {
      uriTemplate: RECENT_TEMPLATE,
      name: 'recent-timeframe',
      title: 'Recent entries across all logs',
      description: `${description} timeframe: 15m, 1h, 6h, 7d (at most 30d).`,
      mimeType: 'text/plain',
      read: (uri, variables, ctx) => readRecent(uri, variables.timeframe ?? DEFAULT_TIMEFRAME, ctx, config),
      complete: { timeframe: (value) => TIMEFRAMES.filter((t) => t.startsWith(value)) },
      subscribe: async (uri, variables, ctx) => {
        parseTimeframe(variables.timeframe ?? DEFAULT_TIMEFRAME);
        return followRecent(ctx, config);
      },
    },
  };
}
