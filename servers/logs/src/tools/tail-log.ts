import { z } from 'zod';
import { countOf, type ToolDefinition } from '@suite/shared';
import { logGuard, withLog } from '../access.js';
import { fieldsArg, formatBytes, groupByArg, levelArg, pathArg, pointInTime, sinceArg } from '../arguments.js';
import { GroupCounts, groupOf, parseFieldFilters } from '../fields.js';
import type { LogsConfig } from '../config.js';
import { LOG_FORMATS, parserFor } from '../formats/parsers.js';
import { containerOf } from '../discovery.js';
import { textLog } from '../inspect.js';
import { hasFilter, tailLog } from '../tail.js';
import { journalTailReply } from '../journal/replies.js';
import { isJournalPath } from '../journal/views.js';

const MAX_LINES = 5000;

const input = z.object({
  path: pathArg,
  lines: z.number().int().min(1).max(MAX_LINES).optional().default(100).describe('How many lines (with a filter: entries) to return, the last ones of the file.'),
  level: levelArg.optional(),
  grep: z.string().min(1).max(1000).optional().describe('Only entries with a line containing this text (case-insensitive, not a regular expression).'),
  since: sinceArg.optional(),
  fields: fieldsArg.optional(),
  group_by: groupByArg.optional(),
});

const output = z.object({
  path: z.string(),
  container: z.string().optional().describe('The container (Docker) or namespace/pod/container (Kubernetes) whose log this is.'),
  format: z.enum(LOG_FORMATS),
  lines: z.array(z.string()),
  entries: z.number().describe('Entries returned (a multi-line entry counts once); equals the line count without a filter.'),
  reachedStart: z.boolean().describe('The whole file was looked at.'),
  cutByBytes: z.boolean().describe('Older lines were left out to keep the answer small.'),
  reachedEnd: z.boolean().describe('The end of the file was read. False only for a .gz file too large to decompress within the time budget: lines is then empty, since the lines read were not the last ones.'),
  stoppedEarly: z.enum(['time-budget', 'scan-limit']).optional().describe('A filtered tail gave up before finding as many entries as asked, or a .gz tail before reaching the end.'),
  groups: z.array(z.object({ value: z.string(), count: z.number() })).optional().describe('With group_by: the entries returned per value, the largest first.'),
});

export function tailLogTool(config: LogsConfig): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'tail_log',
    description:
      'The last lines of a log, like tail -n: fast whatever the size of the file (it reads backwards from the end). With level, grep or since, ' +
      'the last matching entries, each with its continuation lines (a stack trace stays with the line that starts it). fields filters structured entries ' +
      '(JSON lines, logfmt, the journal: {"service": "api", "status": ">=500"}); group_by counts the entries returned per value of a field. Works on rotated and .gz files, and on the journal (logs://journal, logs://journal/<unit>). ' +
      `At most ${MAX_LINES} lines and ${formatBytes(config.limits.maxOutputBytes)} per answer.`,
    input,
    output,
    annotations: { title: 'Tail a log', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const since = pointInTime('since', args.since);
      const filter = {
        ...(args.level ? { minLevel: args.level } : {}),
        ...(args.grep ? { grep: args.grep } : {}),
        ...(since !== undefined ? { since } : {}),
        ...(args.fields ? { fields: parseFieldFilters(args.fields) } : {}),
      };
      if (isJournalPath(args.path)) return journalTailReply(config, args.path, args, filter, ctx);
      const guard = await logGuard(ctx, config);
      return withLog(guard, args.path, async (log) => {
        const spec = await textLog(log, config);
        const result = await tailLog(log, {
          count: args.lines,
          maxBytes: config.limits.maxOutputBytes,
          filter,
          spec,
          signal: ctx.signal,
          deadline: Date.now() + config.limits.tailBudgetMs,
          maxScanBytes: config.limits.maxTailScanBytes,
        });
        const notes: string[] = [];
        const filtered = hasFilter(filter);
        const budget = `${config.limits.tailBudgetMs / 1000} s`;
        if (!result.reachedEnd) {
          notes.push(
            `[the end of ${args.path} was not reached: it is compressed, so it can only be read from its start, and ${budget} decompressed ${countOf(result.linesRead ?? 0, 'line')} of it without reaching the end. ` +
              'No lines are shown, since they would not be the last ones. search_logs (with a pattern and a longer timeBudgetSeconds) reads all of it; read_log_range reads lines by number]',
          );
        } else if (result.lines.length === 0) notes.push(filtered ? `No entries match in ${args.path}${result.reachedStart ? '' : ' (in the part read)'}.` : `${args.path} is empty.`);
        if (result.cutByBytes) notes.push(`[older lines left out: the answer is capped at ${formatBytes(config.limits.maxOutputBytes)}; ask for fewer lines]`);
        if (result.stoppedEarly === 'time-budget' && result.reachedEnd) notes.push(`[stopped after ${budget} with ${result.entries} of ${args.lines} entries; search_logs looks through the whole file]`);
        if (result.stoppedEarly === 'scan-limit') notes.push(`[stopped after reading the last ${formatBytes(result.scannedBytes)} with ${result.entries} of ${args.lines} entries; search_logs looks through the whole file]`);
        let groups: { value: string; count: number }[] | undefined;
        if (args.group_by !== undefined) {
          // Each returned entry (its first line, or each line without a filter) counted once.
          const parser = parserFor(spec);
          const counts = new GroupCounts(Number.MAX_SAFE_INTEGER);
          for (const group of result.groups) counts.add(groupOf(parser.head(group[0] ?? '')?.record, args.group_by));
          groups = counts.top(Number.MAX_SAFE_INTEGER);
          if (groups.length > 0) notes.unshift(`[by ${args.group_by}: ${groups.slice(0, 20).map((g) => `${g.value} ${g.count}`).join(', ')}${groups.length > 20 ? ', …' : ''}]`);
        }
        const container = await containerOf(log.real);
        if (container !== undefined) notes.push(`[container ${container}]`);
        const text = [...result.lines, ...notes].join('\n');
        return {
          text,
          structured: {
            path: args.path,
            ...(container !== undefined ? { container } : {}),
            format: spec.format,
            lines: result.lines,
            entries: result.entries,
            reachedStart: result.reachedStart,
            reachedEnd: result.reachedEnd,
            cutByBytes: result.cutByBytes,
            ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}),
            ...(groups ? { groups } : {}),
          },
        };
      });
    },
  };
}
