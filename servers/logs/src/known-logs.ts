import path from 'node:path';
import { escapeTerminalControlsInLine, type RequestContext } from '@suite/shared';
import type { LogsConfig } from './config.js';
import type { LogFile } from './discovery.js';
import { allLogs } from './targets.js';

/** Completion of log paths for templates and prompts: bounded, never failing (no roots: nothing to offer). */

const COMPLETION_LIMIT = 100;

export async function knownLogs(ctx: RequestContext, config: LogsConfig): Promise<LogFile[]> {
  const roots = await ctx.roots();
  if (roots.directories.length === 0) return [];
  return (await allLogs(ctx, config)).logs;
}

/** Paths that start with what was typed, or whose file name does ("app" offers /var/log/app.log). */
export async function completeLogPath(value: string, ctx: RequestContext, config: LogsConfig, transform: (p: string) => string = (p) => p): Promise<string[]> {
  const typed = value.toLowerCase();
  const logs = await knownLogs(ctx, config);
  const byPath = logs.filter((l) => transform(l.path).toLowerCase().startsWith(typed));
  const byName = logs.filter((l) => !byPath.includes(l) && path.basename(l.path).toLowerCase().startsWith(typed));
  // A name with terminal controls is offered with them visible (escaped), never raw.
  return [...byPath, ...byName].slice(0, COMPLETION_LIMIT).map((l) => escapeTerminalControlsInLine(transform(l.path)));
}
