import { stat } from 'node:fs/promises';
import path from 'node:path';
import { ToolError, type PathGuard, type RequestContext } from '@suite/shared';
import { logRoots, withLog } from './access.js';
import type { LogsConfig } from './config.js';
import { containerOf, discoverLogs, familyOf, rotationOf, type Discovery, type LogFile } from './discovery.js';
import type { LogFormat } from './formats/parsers.js';
import { inspectLog } from './inspect.js';
import type { ScanTarget } from './scan-runner.js';
import { GONE } from './scan-protocol.js';

/** Turning what a user names (nothing, directories, files) into the logs a scan reads. */

/** Every log under the effective roots. */
export async function allLogs(ctx: RequestContext, config: LogsConfig): Promise<Discovery> {
  const roots = await logRoots(ctx, config);
  return discoverLogs(roots, { depth: config.limits.discoveryDepth, maxLogs: config.limits.maxLogs, signal: ctx.signal });
}

/**
 * The logs a list of paths names: a directory stands for every log under it, a file for itself
 * and, with `rotated`, its rotated siblings (newest first). No paths: every log under the roots.
 */
export async function selectLogs(ctx: RequestContext, config: LogsConfig, guard: PathGuard, paths: readonly string[] | undefined, rotated: boolean): Promise<LogFile[]> {
  const keep = (files: LogFile[]): LogFile[] => (rotated ? files : files.filter((f) => f.rotation.kind === 'live'));
  if (!paths || paths.length === 0) return keep((await allLogs(ctx, config)).logs).map((f) => ({ ...f, name: f.path }));
  const out: LogFile[] = [];
  const seen = new Set<string>();
  const add = (file: LogFile): void => {
    if (!seen.has(file.path)) {
      seen.add(file.path);
      out.push(file);
    }
  };
  for (const userPath of paths) {
    const { real, exists } = await guard.resolve(userPath);
    if (!exists) throw ToolError.notFound(`No such log file or directory: ${userPath}. Call list_logs to see the logs you can read.`);
    const info = await stat(real).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (!info) {
      // Gone since it was resolved (rotated or removed): the scan reports it as skipped, the others are still read.
      add({ path: real, name: userPath, family: real, rotation: rotationOf(path.basename(real)), size: 0, mtimeMs: 0 });
      continue;
    }
    if (info.isDirectory()) {
      const found = await discoverLogs({ directories: [real], files: [] }, { depth: config.limits.discoveryDepth, maxLogs: config.limits.maxLogs, signal: ctx.signal });
      for (const file of keep(found.logs)) add({ ...file, name: file.path });
      continue;
    }
    const named: LogFile = { path: real, name: userPath, family: real, rotation: rotationOf(path.basename(real)), size: info.size, mtimeMs: info.mtimeMs };
    add(named);
    if (!rotated || named.rotation.kind !== 'live') continue;
    // Rotated siblings the guard allows (for a file named on the command line: exactly its family).
    for (const member of await familyOf(real)) {
      if (member.path === real || !guard.contains(member.path)) continue;
      add({ ...member, name: path.join(path.dirname(userPath), member.name) });
    }
  }
  return out;
}

/** Opens each log through the guard to recognise its format; binary files are left out and reported. */
export async function scanTargets(guard: PathGuard, config: LogsConfig, files: readonly LogFile[]): Promise<{ targets: ScanTarget[]; skipped: { display: string; reason: string }[] }> {
  const targets: ScanTarget[] = [];
  const skipped: { display: string; reason: string }[] = [];
  for (const file of files) {
    try {
      await withLog(guard, file.path, async (log) => {
        const { spec, binary } = await inspectLog(log, config);
        if (binary) skipped.push({ display: file.name, reason: 'binary (NUL bytes near its start)' });
        else {
          const container = await containerOf(log.real);
          targets.push({ real: log.real, display: file.name, compressed: log.compressed, spec, size: log.size, ...(container !== undefined ? { container } : {}) });
        }
      });
    } catch (error) {
      const reason = error instanceof ToolError ? (error.kind === 'not_found' ? GONE : error.message) : (error as NodeJS.ErrnoException).code === 'ENOENT' ? GONE : 'not readable';
      skipped.push({ display: file.name, reason });
    }
  }
  return { targets, skipped };
}

/** The format of each log (for listings), opening each through the guard; undefined when it cannot be read. */
export async function formatOf(guard: PathGuard, config: LogsConfig, file: string): Promise<LogFormat | 'binary' | undefined> {
  try {
    return await withLog(guard, file, async (log) => {
      const { spec, binary } = await inspectLog(log, config);
      return binary ? 'binary' : spec.format;
    });
  } catch {
    return undefined;
  }
}
