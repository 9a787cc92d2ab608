import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { ToolError, type ToolDefinition, countOf } from '@suite/shared';
import { logGuard } from '../access.js';
import { MAX_PATTERN_LENGTH, budgetArg, checkPattern, formatBytes, levelArg, sinceArg, timeWindow, untilArg, fieldsArg, groupByArg } from '../arguments.js';
import { GroupCounts, NO_VALUE, parseFieldFilters } from '../fields.js';
import { DEFAULT_LIMITS, type LogsConfig } from '../config.js';
import { LEVELS } from '../levels.js';
import { runScan, type ScanReport } from '../scan-runner.js';
import { searchJournal } from '../journal/read.js';
import { splitPaths } from '../journal/views.js';
import type { SearchMatch } from '../scan-protocol.js';
import { scanTargets, selectLogs } from '../targets.js';

const MAX_RESULTS = 2000;

const input = z.object({
  pattern: z.string().min(1).max(MAX_PATTERN_LENGTH).optional().describe('JavaScript regular expression matched against each line (or text, with literal: true). Omit to list every entry that passes level/since/until.'),
  literal: z.boolean().optional().default(false).describe('Match pattern as plain text (fastest).'),
  caseSensitive: z.boolean().optional().default(true).describe('Match case exactly (default true, like grep).'),
  paths: z.array(z.string().min(1).max(4096)).max(100).optional().describe('Log files or directories to search, or logs://journal[/<unit>]. Default: every log under the allowed directories, and the journal when the server reads one.'),
  includeRotated: z.boolean().optional().default(true).describe('Also search rotated copies (app.log.1, app.log.2.gz, …), newest first.'),
  level: levelArg.optional(),
  since: sinceArg.optional(),
  until: untilArg.optional(),
  fields: fieldsArg.optional(),
  group_by: groupByArg.optional(),
  contextLines: z.number().int().min(0).max(10).optional().default(0).describe('Lines of context before and after each match.'),
  maxResults: z.number().int().min(1).max(MAX_RESULTS).optional().default(100).describe('Stop after this many matches.'),
  timeBudgetSeconds: budgetArg(DEFAULT_LIMITS.searchBudgetMs, DEFAULT_LIMITS.maxBudgetMs),
});

const match = z.object({
  file: z.string(),
  line: z.number(),
  text: z.string(),
  time: z.string().optional(),
  level: z.enum(LEVELS).optional(),
  entry: z.string().optional().describe('First line of the entry, when the match is in a continuation line.'),
  before: z.array(z.string()).optional(),
  after: z.array(z.string()).optional(),
  group: z.string().optional().describe('With group_by: the value of that field in the entry.'),
  container: z.string().optional().describe('The container (Docker) or namespace/pod/container (Kubernetes) whose log this is.'),
});

const output = z.object({
  matches: z.array(match),
  filesSearched: z.number(),
  skipped: z.array(z.object({ file: z.string(), reason: z.string() })),
  groups: z
    .array(z.object({ value: z.string(), count: z.number() }))
    .optional()
    .describe('With group_by: matches returned per value, the largest first (log_stats with fields and group_by counts every entry).'),
  truncated: z.boolean().describe('maxResults was reached: there are more matches.'),
  timedOut: z.boolean().describe('The time budget ran out: files (or their ends) were not searched.'),
  bytesScanned: z.number(),
  durationMs: z.number(),
});

export function searchLogs(config: LogsConfig): ToolDefinition<typeof input, typeof output> {
  const { searchBudgetMs, maxBudgetMs } = config.limits;
  return {
    name: 'search_logs',
    // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
    longRunning: true,
    description:
      'Searches logs like grep, streaming: files of any size (and .gz ones) are read in chunks with bounded memory, rotated copies included. ' +
      'Filters by level (that level or above), by time (since/until), by fields of structured entries (JSON lines, logfmt: {"service": "api", "status": ">=500"}) ' +
      'and by a regular expression or literal text; the journal too (logs://journal, logs://journal/<unit>, with --journal or --journal-dir; its fields: {"_SYSTEMD_UNIT": "nginx.service"}); group_by counts the matches per value of a field; each match comes with its ' +
      'line number, time and level, and the first line of its entry when it is inside a stack trace. Reports progress, can be cancelled, and ' +
      `stops at its time budget (default ${searchBudgetMs / 1000} s) with what it found. Regular expressions that nest repetitions ((a+)+) are refused.`,
    input,
    output,
    annotations: { title: 'Search logs', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      if (args.pattern === undefined && args.level === undefined && args.since === undefined && args.until === undefined && (args.fields === undefined || Object.keys(args.fields).length === 0)) {
        throw ToolError.invalidArgument('Give a pattern, a level, fields, or a time range (since/until): without any, every line would match. To see the end of a log, use tail_log.');
      }
      if (args.pattern !== undefined) checkPattern(args.pattern, args.literal, args.caseSensitive);
      const window = timeWindow(args.since, args.until);
      const started = performance.now();
      const { views, files: filePaths, withFiles } = await splitPaths(ctx, config, args.paths);
      const guard = withFiles ? await logGuard(ctx, config) : undefined;
      const files = guard ? await selectLogs(ctx, config, guard, filePaths, args.includeRotated) : [];
      const { targets, skipped } = guard ? await scanTargets(guard, config, files) : { targets: [], skipped: [] };
      const budgetMs = Math.min(maxBudgetMs, (args.timeBudgetSeconds ?? searchBudgetMs / 1000) * 1000);
      const query = {
        ...(args.pattern !== undefined ? { pattern: args.pattern } : {}),
        literal: args.literal,
        caseSensitive: args.caseSensitive,
        ...(args.level !== undefined ? { minLevel: args.level } : {}),
        ...window,
        contextLines: args.contextLines,
        maxResults: args.maxResults,
        ...(args.fields ? { fields: parseFieldFilters(args.fields) } : {}),
        ...(args.group_by !== undefined ? { groupBy: args.group_by } : {}),
      };
      const deadline = Date.now() + budgetMs;
      const report: ScanReport = guard
        ? await runScan({ kind: 'search', query, deadline }, targets, guard, ctx, (r) => countOf(r.matches.length, 'match', 'matches'))
        : { matches: [], files: [], killed: false, bytesScanned: 0, filesNotReached: 0 };
      // The journal after the files, with what is left of the results and the time.
      let journalsSearched = 0;
      for (const view of views) {
        if (report.stopped) break;
        const found = await searchJournal(config, view, query, { signal: ctx.signal, deadline, limit: args.maxResults - report.matches.length, chunkDone: () => undefined });
        report.matches.push(...found.matches);
        report.bytesScanned += found.bytes;
        journalsSearched += found.journals;
        if (found.stopped) report.stopped = found.stopped;
      }
      for (const f of report.files) if (f.outcome.status === 'unreadable') skipped.push({ display: f.display, reason: f.outcome.reason });
      const containers = new Map(targets.flatMap((t) => (t.container !== undefined ? [[t.display, t.container] as const] : [])));
      for (const m of report.matches) {
        const container = containers.get(m.file);
        if (container !== undefined) m.container = container;
      }
      const filesSearched = report.files.filter((f) => f.outcome.status === 'scanned').length + journalsSearched;
      const timedOut = report.stopped === 'time-budget';
      const structured = {
        matches: report.matches,
        filesSearched,
        skipped: skipped.map((s) => ({ file: s.display, reason: s.reason })),
        ...(args.group_by !== undefined ? { groups: groupMatches(report.matches) } : {}),
        truncated: report.stopped === 'max-results',
        timedOut,
        bytesScanned: report.bytesScanned,
        durationMs: Math.round(performance.now() - started),
      };
      return { text: formatReport(report, structured, args.maxResults, budgetMs, args.contextLines > 0, args.group_by), structured };
    },
  };
}

function groupMatches(matches: readonly SearchMatch[]): { value: string; count: number }[] {
  const counts = new GroupCounts(Number.MAX_SAFE_INTEGER);
  for (const m of matches) counts.add(m.group ?? NO_VALUE);
  return counts.top(Number.MAX_SAFE_INTEGER);
}

function formatMatch(m: SearchMatch, withContext: boolean): string[] {
  const lines: string[] = [];
  if (m.container !== undefined) m = { ...m, file: `[${m.container}] ${m.file}` };
  if (m.entry !== undefined) lines.push(`${m.file}-entry: ${m.entry}`);
  if (withContext) m.before?.forEach((l, i) => lines.push(`${m.file}-${m.line - (m.before?.length ?? 0) + i}-${l}`));
  lines.push(`${m.file}:${m.line}:${m.text}`);
  if (withContext) m.after?.forEach((l, i) => lines.push(`${m.file}-${m.line + 1 + i}-${l}`));
  return lines;
}

function formatReport(
  report: ScanReport,
  s: { matches: SearchMatch[]; filesSearched: number; skipped: { file: string; reason: string }[]; groups?: { value: string; count: number }[]; bytesScanned: number; durationMs: number },
  maxResults: number,
  budgetMs: number,
  withContext: boolean,
  groupBy: string | undefined,
): string {
  const n = s.matches.length;
  const header = `${n === 0 ? 'No matches' : countOf(n, 'match', 'matches')} in ${countOf(s.filesSearched, 'file')} (${formatBytes(s.bytesScanned)} in ${(s.durationMs / 1000).toFixed(1)} s)${n > 0 ? ':' : '.'}`;
  const body: string[] = [];
  for (const m of s.matches) {
    body.push(...formatMatch(m, withContext));
    if (withContext || m.entry !== undefined) body.push('--');
  }
  if (body[body.length - 1] === '--') body.pop();
  const notes: string[] = [];
  if (report.stopped === 'max-results') notes.push(`[truncated: stopped at maxResults=${maxResults}; there are more matches. Narrow the pattern, the time range or the level, or raise maxResults]`);
  if (report.stopped === 'time-budget') {
    const cause = report.killed ? ' (the regular expression was still working on one line: simplify it or use literal: true)' : '';
    notes.push(`[time budget of ${budgetMs / 1000} s reached${cause}: ${countOf(report.filesNotReached, 'file')} not searched. Narrow the search or raise timeBudgetSeconds]`);
  }
  for (const skip of s.skipped) notes.push(`[skipped ${skip.file}: ${skip.reason}]`);
  const groups = s.groups && s.groups.length > 0 ? [`By ${groupBy} (of the ${countOf(n, 'match', 'matches')} returned):`, ...s.groups.map((g) => `${g.count}  ${g.value}`), ''] : [];
  return [header, ...groups, ...body, ...notes].join('\n');
}
