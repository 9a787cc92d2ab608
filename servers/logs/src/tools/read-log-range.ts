import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import { logGuard, withLog } from '../access.js';
import { formatBytes, pathArg, sinceArg, timeWindow, untilArg } from '../arguments.js';
import type { LogsConfig } from '../config.js';
import { containerOf } from '../discovery.js';
import { LOG_FORMATS } from '../formats/parsers.js';
import { textLog } from '../inspect.js';
import { readLineRange, readTimeRange } from '../ranges.js';
import { journalRangeReply } from '../journal/replies.js';
import { isJournalPath } from '../journal/views.js';

const MAX_LINES = 5000;
const RANGE_BUDGET_MS = 30_000;

const input = z.object({
  path: pathArg,
  startLine: z.number().int().min(1).optional().describe('First line to return (1-based). Give startLine/endLine, or since/until.'),
  endLine: z.number().int().min(1).optional().describe('Last line to return (inclusive). Default: startLine + maxLines - 1.'),
  since: sinceArg.optional(),
  until: untilArg.optional(),
  maxLines: z.number().int().min(1).max(MAX_LINES).optional().default(500).describe('Most lines to return.'),
});

const output = z.object({
  path: z.string(),
  container: z.string().optional().describe('The container (Docker) or namespace/pod/container (Kubernetes) whose log this is.'),
  format: z.enum(LOG_FORMATS),
  firstLine: z.number().optional().describe('Line number of the first line returned.'),
  lines: z.array(z.string()),
  more: z.boolean().describe('The range goes on: ask again from firstLine + lines.length.'),
  timedOut: z.boolean(),
});

export function readLogRange(config: LogsConfig): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'read_log_range',
    description:
      'A part of a log: lines startLine..endLine, or the entries between since and until (each with its continuation lines). ' +
      'A time range in a plain file is found by bisection (logs are in time order), so it is quick even at the end of a huge file. ' +
      `Lines are numbered from 1 (in the decompressed text for .gz); the journal (logs://journal) is read by time only. At most ${MAX_LINES} lines and ${formatBytes(config.limits.maxOutputBytes)} per answer.`,
    input,
    output,
    annotations: { title: 'Read part of a log', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const byLines = args.startLine !== undefined || args.endLine !== undefined;
      const byTime = args.since !== undefined || args.until !== undefined;
      if (byLines === byTime) {
        throw ToolError.invalidArgument('Give either startLine (and optionally endLine) or since/until, not both and not neither. To see the end of a log, use tail_log.');
      }
      if (args.startLine !== undefined && args.endLine !== undefined && args.endLine < args.startLine) {
        throw ToolError.invalidArgument(`endLine (${args.endLine}) is before startLine (${args.startLine}).`);
      }
      const window = byTime ? timeWindow(args.since, args.until) : {};
      if (isJournalPath(args.path)) {
        if (byLines) throw ToolError.invalidArgument('The journal has no line numbers: give since/until to read a part of it (or use tail_log, search_logs).');
        return journalRangeReply(config, args.path, window, args.maxLines, RANGE_BUDGET_MS, ctx);
      }
      const guard = await logGuard(ctx, config);
      return withLog(guard, args.path, async (log) => {
        const spec = await textLog(log, config);
        const options = { spec, maxLines: args.maxLines, maxBytes: config.limits.maxOutputBytes, signal: ctx.signal, deadline: Date.now() + RANGE_BUDGET_MS };
        const result = byLines
          ? await readLineRange(log, args.startLine ?? 1, args.endLine ?? (args.startLine ?? 1) + args.maxLines - 1, options)
          : await readTimeRange(log, window.since, window.until, options);
        const notes: string[] = [];
        if (result.lines.length === 0) notes.push(byLines ? `${args.path} has fewer than ${args.startLine ?? 1} lines.` : `No entries of ${args.path} fall in that time range.`);
        else if (result.more) notes.push(`[more: continue with startLine ${(result.firstLine ?? 1) + result.lines.length}]`);
        if (result.timedOut) notes.push(`[stopped after ${RANGE_BUDGET_MS / 1000} s; narrow the range]`);
        const container = await containerOf(log.real);
        const of = container !== undefined ? `${args.path} (container ${container})` : args.path;
        const header = result.firstLine !== undefined ? `Lines ${result.firstLine}-${result.firstLine + result.lines.length - 1} of ${of}:` : undefined;
        return {
          text: [...(header ? [header] : []), ...result.lines, ...notes].join('\n'),
          structured: {
            path: args.path,
            ...(container !== undefined ? { container } : {}),
            format: spec.format,
            ...(result.firstLine !== undefined ? { firstLine: result.firstLine } : {}),
            lines: result.lines,
            more: result.more,
            timedOut: result.timedOut,
          },
        };
      });
    },
  };
}
