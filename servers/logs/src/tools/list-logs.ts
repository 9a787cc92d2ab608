import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { logGuard } from '../access.js';
import { formatBytes } from '../arguments.js';
import type { LogsConfig } from '../config.js';
import { LOG_FORMATS } from '../formats/parsers.js';
import { containerOf } from '../discovery.js';
import { formatOf, selectLogs } from '../targets.js';
import { journalRows } from '../journal/replies.js';
import { isJournalPath } from '../journal/views.js';

const input = z.object({
  path: z.string().min(1).max(4096).optional().describe('Only logs under this directory (or this file and its rotations), or logs://journal for the journal\'s units. Default: every allowed directory, and the journal when the server reads one.'),
});

const output = z.object({
  logs: z.array(
    z.object({
      path: z.string(),
      size: z.number().describe('Bytes (compressed size for .gz; for logs://journal, its journal files together; 0 for a unit).'),
      modified: z.string().describe('Last modification, ISO 8601.'),
      format: z.enum([...LOG_FORMATS, 'journal', 'binary', 'unreadable']),
      source: z.string().optional().describe('For the journal (format journal): which journals it reads; its path is logs://journal or logs://journal/<unit>.'),
      rotatedFrom: z.string().optional().describe('The live log this is a rotated copy of.'),
      compressed: z.boolean(),
      container: z.string().optional().describe('Docker: the container\'s name (or short id); Kubernetes: namespace/pod/container.'),
    }),
  ),
  truncated: z.boolean().describe(`More logs exist than are listed.`),
});

export function listLogs(config: LogsConfig): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'list_logs',
    description:
      'Lists the log files the server can read: *.log, *.jsonl and files named on its command line, with their rotated copies ' +
      '(app.log.1, app.log.2.gz, app.log-20240115) listed after the live file, newest first. Gives each file\'s size, last modification ' +
      'and recognised format (JSON lines, syslog, Apache/nginx access, logfmt, ISO 8601 text, Docker and Kubernetes container logs, plain), ' +
      'and for a container log the container (or namespace/pod/container) it belongs to. With --journal or --journal-dir, the systemd journal ' +
      'comes first: logs://journal and logs://journal/<unit> for each unit, paths every tool takes. Start here, then use tail_log, search_logs or log_stats.',
    input,
    output,
    annotations: { title: 'List logs', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ path }, ctx) => {
      const logs: z.output<typeof output>['logs'] = [];
      const journals = (config.journals ?? []).length > 0 && (path === undefined || isJournalPath(path));
      let journalTruncated = false;
      if (journals) {
        const found = await journalRows(config, ctx.signal);
        journalTruncated = found.truncated;
        for (const row of found.rows) logs.push({ path: row.path, size: row.size, modified: new Date(row.mtimeMs).toISOString(), format: 'journal', source: row.source, compressed: false });
      }
      const withFiles = path === undefined ? !journals || (await ctx.roots()).directories.length > 0 : !isJournalPath(path);
      if (!withFiles) {
        const lines = logs.map((l) => `${l.path}  journal (${l.source ?? ''})`);
        if (journalTruncated) lines.push('[truncated: only the first 200 units are listed; search_logs and log_stats read every unit through logs://journal]');
        return { text: lines.join('\n'), structured: { logs, truncated: journalTruncated } };
      }
      const guard = await logGuard(ctx, config);
      const files = await selectLogs(ctx, config, guard, path === undefined ? undefined : [path], true);
      for (const file of files.slice(0, config.limits.maxLogs)) {
        const format = (await formatOf(guard, config, file.path)) ?? 'unreadable';
        const container = await containerOf(file.path);
        logs.push({
          path: file.path,
          size: file.size,
          modified: new Date(file.mtimeMs).toISOString(),
          format,
          ...(file.rotation.kind !== 'live' ? { rotatedFrom: file.family } : {}),
          compressed: file.rotation.compressed,
          ...(container !== undefined ? { container } : {}),
        });
      }
      const truncated = files.length >= config.limits.maxLogs || journalTruncated;
      if (logs.length === 0) {
        const where = path ?? 'the allowed directories';
        return { text: `No log files under ${where} (looked for *.log, *.log.N, *.log.gz and *.jsonl, ${config.limits.discoveryDepth} levels deep).`, structured: { logs, truncated } };
      }
      const lines = logs.map((l) => (l.format === 'journal' ? `${l.path}  journal (${l.source ?? ''})` : `${l.rotatedFrom ? '  ' : ''}${l.path}  ${formatBytes(l.size)}  ${l.modified.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}  ${l.format}${l.container !== undefined ? `  container ${l.container}` : ''}`));
      if (truncated) lines.push(`[truncated: only the first ${config.limits.maxLogs} logs are listed; give a path to list one directory]`);
      return { text: lines.join('\n'), structured: { logs, truncated } };
    },
  };
}
