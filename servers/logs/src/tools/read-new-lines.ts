import { z } from 'zod';
import { countOf, type ToolDefinition } from '@suite/shared';
import { logGuard } from '../access.js';
import { pathArg } from '../arguments.js';
import { DEFAULT_LIMITS, type LogsConfig } from '../config.js';
import { containerOf } from '../discovery.js';
import { readNewLines as read } from '../new-lines.js';
import { journalNewLinesReply } from '../journal/replies.js';
import { isJournalPath } from '../journal/views.js';

const input = z.object({
  path: pathArg,
  cursor: z.string().min(1).max(8192).optional().describe('The cursor the previous call returned. Omit it on the first call: the log is then followed from its current end.'),
  maxBytes: z.number().int().min(1024).max(DEFAULT_LIMITS.maxOutputBytes).optional().default(64 * 1024).describe('Most bytes of lines to return; the cursor then points at the rest.'),
});

const output = z.object({
  status: z.enum(['started', 'appended', 'unchanged', 'rotated', 'truncated', 'missing']),
  lines: z.array(z.string()),
  cursor: z.string().describe('Pass it to the next call.'),
  more: z.boolean(),
  notes: z.array(z.string()),
  container: z.string().optional().describe('The container (Docker) or namespace/pod/container (Kubernetes) whose log this is.'),
});

export function readNewLines(config: LogsConfig): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'read_new_lines',
    description:
      'Follows a log like tail -f, for clients that do not subscribe to resources: returns the complete lines appended since the cursor, ' +
      'and the next cursor. Detects rotation (the file was renamed and a new one created) and truncation (copytruncate, a rewrite), ' +
      'and says so in status and notes; the lines written before a rotation that the last call had not seen come first, from the rotated copy ' +
      '(app.log.1, compressed or not), then every copy rotated since (app.log.2, then app.log.1, …) in order, then the live file; what could not be read is named in a note. A Kubernetes line the runtime split (CRI partial fragments) waits for its last fragment and comes joined. ' +
      'The journal (logs://journal, logs://journal/<unit>) is followed by journal cursor: each entry once. The first call, without a cursor, returns a cursor at the current end.',
    input,
    output,
    annotations: { title: 'Read new lines', readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, ctx) => {
      if (isJournalPath(args.path)) return journalNewLinesReply(config, args.path, args.cursor, Math.min(args.maxBytes, config.limits.maxOutputBytes), ctx);
      const guard = await logGuard(ctx, config);
      const result = await read(guard, args.path, args.cursor, Math.min(args.maxBytes, config.limits.maxOutputBytes));
      const { real, exists } = await guard.resolve(args.path);
      const container = exists ? await containerOf(real) : undefined;
      const summary =
        result.status === 'started'
          ? []
          : [`${countOf(result.lines.length, 'new line')} (${result.status}).`];
      const text = [...result.notes.map((n) => `[${n}]`), ...(container !== undefined ? [`[container ${container}]`] : []), ...summary, ...result.lines, `cursor: ${result.cursor}`].join('\n');
      return { text, structured: { ...result, ...(container !== undefined ? { container } : {}) } };
    },
  };
}

