import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { countOf, type ToolDefinition } from '@suite/shared';
import { logGuard } from '../access.js';
import { budgetArg, fieldsArg, formatBytes, groupByArg, sinceArg, timeWindow, untilArg } from '../arguments.js';
import { parseFieldFilters } from '../fields.js';
import { DEFAULT_LIMITS, type LogsConfig } from '../config.js';
import { LEVELS } from '../levels.js';
import { runScan, type ScanReport } from '../scan-runner.js';
import { StatsAccumulator } from '../stats.js';
import { statsJournal } from '../journal/read.js';
import { mergeStats } from '../journal/merge-stats.js';
import { splitPaths } from '../journal/views.js';
import type { StatsResult } from '../scan-protocol.js';
import { scanTargets, selectLogs } from '../targets.js';
import { formatDuration } from '../timestamps.js';

const BUCKETS = { '1m': 60_000, '5m': 300_000, '15m': 900_000, '30m': 1_800_000, '1h': 3_600_000, '3h': 10_800_000, '6h': 21_600_000, '12h': 43_200_000, '1d': 86_400_000, '7d': 604_800_000 } as const;

const input = z.object({
  paths: z.array(z.string().min(1).max(4096)).max(100).optional().describe('Log files or directories, or logs://journal[/<unit>]. Default: every log under the allowed directories, and the journal when the server reads one.'),
  includeRotated: z.boolean().optional().default(true).describe('Count rotated copies (app.log.1, app.log.2.gz, …) too.'),
  since: sinceArg.optional(),
  until: untilArg.optional(),
  bucket: z.enum(Object.keys(BUCKETS) as [keyof typeof BUCKETS, ...(keyof typeof BUCKETS)[]]).optional().describe('Width of the timeline buckets (UTC-aligned). Default: one that gives at most 60 buckets.'),
  topErrors: z.number().int().min(1).max(100).optional().default(10).describe('How many of the most frequent error messages to return.'),
  errorLevel: z.enum(['warning', 'error', 'critical']).optional().default('error').describe('Entries at this level or above count for the top messages.'),
  fields: fieldsArg.optional(),
  group_by: groupByArg.optional(),
  timeBudgetSeconds: budgetArg(DEFAULT_LIMITS.statsBudgetMs, DEFAULT_LIMITS.maxBudgetMs),
});

const levelCounts = z.partialRecord(z.enum([...LEVELS, 'unknown']), z.number());

const output = z.object({
  entries: z.number(),
  continuationLines: z.number().describe('Lines that belong to a multi-line entry (stack frames).'),
  levels: levelCounts,
  withoutTime: z.number().describe('Entries with no timestamp (not in the timeline).'),
  implausibleTimes: z.number().optional().describe('Of those, entries whose timestamp cannot be right (more than 7 days ahead of now, or before 1990: garbage, often from a damaged file).'),
  first: z.string().optional(),
  last: z.string().optional(),
  bucket: z.string(),
  timeline: z.array(z.object({ start: z.string(), counts: levelCounts })),
  topErrors: z.array(
    z.object({
      pattern: z.string().describe('The message with numbers, ids, addresses and UUIDs replaced by <n>, <id>, <ip>, <hex>, <uuid>.'),
      count: z.number(),
      example: z.string(),
      level: z.enum(LEVELS),
      first: z.string().optional(),
      last: z.string().optional(),
    }),
  ),
  distinctErrors: z.number(),
  groups: z
    .array(z.object({ value: z.string(), count: z.number(), errors: z.number().describe('Of them, entries at errorLevel or above.') }))
    .optional()
    .describe('With group_by: entries per value, the 50 largest first.'),
  distinctGroups: z.number().optional().describe('With group_by: distinct values seen (tracked up to 2,000).'),
  groupsOther: z.number().optional().describe('With group_by: entries whose value came after 2,000 distinct values were tracked.'),
  files: z.array(z.object({ file: z.string(), container: z.string().optional().describe('The container or namespace/pod/container whose log it is.'), lines: z.number().optional(), note: z.string().optional().describe('Read only in part, and why.'), skipped: z.string().optional() })),
  complete: z.boolean().describe('False when the time budget ran out before every file was read.'),
  bytesScanned: z.number(),
  durationMs: z.number(),
});

const iso = (t: number | undefined): string | undefined => (t === undefined ? undefined : new Date(t).toISOString());

export function logStats(config: LogsConfig): ToolDefinition<typeof input, typeof output> {
  const { statsBudgetMs, maxBudgetMs } = config.limits;
  return {
    name: 'log_stats',
    // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
    longRunning: true,
    description:
      'Statistics over whole logs (rotated and .gz copies included): entries per level, a timeline of levels per time bucket, and the ' +
      'most frequent error messages with their counts, numbers, ids and addresses normalised so similar messages group together ' +
      '("timeout after <n> ms for user <n>"). Multi-line entries count once. Good for "what went wrong and since when". ' +
      'The journal too (logs://journal, logs://journal/<unit>). fields filters structured entries (JSON lines, logfmt, journal fields: {"service": "api", "status": ">=500"}); group_by counts entries per value of a field. ' +
      `Reports progress, can be cancelled, and stops at its time budget (default ${statsBudgetMs / 1000} s).`,
    input,
    output,
    annotations: { title: 'Log statistics', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const window = timeWindow(args.since, args.until);
      const started = performance.now();
      const { views, files: filePaths, withFiles } = await splitPaths(ctx, config, args.paths);
      const guard = withFiles ? await logGuard(ctx, config) : undefined;
      const files = guard ? await selectLogs(ctx, config, guard, filePaths, args.includeRotated) : [];
      const { targets, skipped } = guard ? await scanTargets(guard, config, files) : { targets: [], skipped: [] };
      const budgetMs = Math.min(maxBudgetMs, (args.timeBudgetSeconds ?? statsBudgetMs / 1000) * 1000);
      const query = {
        ...window,
        ...(args.bucket ? { bucketMs: BUCKETS[args.bucket] } : {}),
        topErrors: args.topErrors,
        errorLevel: args.errorLevel,
        ...(args.fields ? { fields: parseFieldFilters(args.fields) } : {}),
        ...(args.group_by !== undefined ? { groupBy: args.group_by } : {}),
      };
      const deadline = Date.now() + budgetMs;
      const report: ScanReport = guard ? await runScan({ kind: 'stats', query, deadline }, targets, guard, ctx, () => 'counting') : { matches: [], files: [], killed: false, bytesScanned: 0, filesNotReached: 0 };
      let stats: StatsResult = report.stats ?? { entries: 0, continuationLines: 0, levels: {}, withoutTime: 0, implausibleTimes: 0, bucketMs: 60_000, timeline: [], topErrors: [], distinctErrors: 0 };
      // The journal after the files, counted with the same accumulator and merged in.
      const journalRows: { file: string; lines: number; note?: string }[] = [];
      if (views.length > 0) {
        const counted = new StatsAccumulator(query);
        for (const view of views) {
          const read = await statsJournal(config, view, counted, query, { signal: ctx.signal, deadline, chunkDone: () => undefined });
          report.bytesScanned += read.bytes;
          journalRows.push({ file: view.display, lines: read.entries, ...(read.timedOut ? { note: `the time budget ran out (${countOf(read.entries, 'entry', 'entries')} counted)` } : {}) });
          if (read.timedOut) {
            report.stopped = 'time-budget';
            break;
          }
        }
        stats = report.stats ? mergeStats(stats, counted.result(), args.topErrors) : counted.result();
      }
      const containers = new Map(targets.flatMap((t) => (t.container !== undefined ? [[t.display, t.container] as const] : [])));
      const fileRows = [
        ...report.files.map((f) =>
          f.outcome.status === 'scanned'
            ? { file: f.display, ...(containers.has(f.display) ? { container: containers.get(f.display) as string } : {}), lines: f.outcome.lines, ...(f.outcome.note !== undefined ? { note: `${f.outcome.note} (${countOf(f.outcome.lines, 'line')})` } : {}) }
            : { file: f.display, skipped: f.outcome.reason },
        ),
        ...journalRows,
        ...skipped.map((s) => ({ file: s.display, skipped: s.reason })),
      ];
      const complete = report.stopped === undefined && report.filesNotReached === 0;
      const structured = {
        entries: stats.entries,
        continuationLines: stats.continuationLines,
        levels: stats.levels,
        withoutTime: stats.withoutTime,
        ...(stats.implausibleTimes > 0 ? { implausibleTimes: stats.implausibleTimes } : {}),
        ...(stats.first !== undefined ? { first: iso(stats.first) } : {}),
        ...(stats.last !== undefined ? { last: iso(stats.last) } : {}),
        bucket: formatDuration(stats.bucketMs),
        timeline: stats.timeline.map((b) => ({ start: new Date(b.start).toISOString(), counts: b.counts })),
        topErrors: stats.topErrors.map((t) => ({
          pattern: t.pattern,
          count: t.count,
          example: t.example,
          level: t.level,
          ...(t.first !== undefined ? { first: iso(t.first) } : {}),
          ...(t.last !== undefined ? { last: iso(t.last) } : {}),
        })),
        distinctErrors: stats.distinctErrors,
        ...(stats.groups ? { groups: stats.groups, distinctGroups: stats.distinctGroups ?? stats.groups.length, groupsOther: stats.groupsOther ?? 0 } : args.group_by !== undefined ? { groups: [], distinctGroups: 0, groupsOther: 0 } : {}),
        files: fileRows,
        complete,
        bytesScanned: report.bytesScanned,
        durationMs: Math.round(performance.now() - started),
      };
      return { text: formatStats(structured, budgetMs, args.group_by), structured };
    },
  };
}

function formatStats(s: z.output<typeof output>, budgetMs: number, groupBy: string | undefined): string {
  const lines: string[] = [];
  const scanned = s.files.filter((f) => f.lines !== undefined).length;
  lines.push(`${countOf(s.entries, 'entry', 'entries')} in ${countOf(scanned, 'file')} (${formatBytes(s.bytesScanned)} in ${(s.durationMs / 1000).toFixed(1)} s)${s.first ? `, ${s.first} to ${s.last}` : ''}.`);
  const levels = Object.entries(s.levels).map(([level, n]) => `${level} ${n}`);
  if (levels.length > 0) lines.push(`By level: ${levels.join(', ')}.`);
  if (s.withoutTime > 0) lines.push(`${s.withoutTime === 1 ? '1 entry has' : `${s.withoutTime} entries have`} no timestamp (left out of the timeline).`);
  if (s.implausibleTimes) lines.push(`${s.implausibleTimes} of them have a timestamp that cannot be right (more than 7 days ahead of now, or before 1990), counted as without one.`);
  if (s.timeline.length > 0) {
    lines.push('', `Timeline (${s.bucket} buckets):`);
    for (const b of s.timeline) lines.push(`${b.start}  ${Object.entries(b.counts).map(([level, n]) => `${level} ${n}`).join(', ')}`);
  }
  if (s.topErrors.length > 0) {
    lines.push('', `Top error messages (${s.distinctErrors} distinct):`);
    for (const t of s.topErrors) lines.push(`${t.count}x [${t.level}] ${t.pattern}${t.first ? `  (first ${t.first}, last ${t.last})` : ''}\n    e.g. ${t.example.split('\n')[0]}`);
  }
  if (s.groups) {
    lines.push('', s.groups.length === 0 ? 'No entries to group.' : `By ${groupBy} (${countOf(s.distinctGroups ?? 0, 'value')}${s.groupsOther ? `, and ${countOf(s.groupsOther, 'entry', 'entries')} of values past the first 2,000` : ''}):`);
    for (const g of s.groups) lines.push(`${g.count}  ${g.value}${g.errors > 0 ? `  (${countOf(g.errors, 'error')})` : ''}`);
  }
  for (const f of s.files) if (f.note) lines.push(`[${f.file}: ${f.note}]`);
  for (const f of s.files) if (f.skipped) lines.push(`[skipped ${f.file}: ${f.skipped}]`);
  if (!s.complete) lines.push(`[incomplete: the time budget of ${budgetMs / 1000} s ran out; narrow the files or the time range, or raise timeBudgetSeconds]`);
  return lines.join('\n');
}
