import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { logGuard } from '../access.js';
import { formatBytes } from '../arguments.js';
import type { LogsConfig } from '../config.js';
import { LOG_FORMATS } from '../formats/parsers.js';
import { containerOf } from '../discovery.js';
import { formatOf, selectLogs } from '../targets.js';

const input = z.object({
  path: z.string().min(1).max(4096).optional().describe('Only logs under this directory (or this file and its rotations). Default: every allowed directory.'),
});

const output = z.object({
  logs: z.array(
    z.object({
      path: z.string(),
      size: z.number().describe('Bytes (compressed size for .gz).'),
      modified: z.string().describe('Last modification, ISO 8601.'),
      format: z.enum([...LOG_FORMATS, 'binary', 'unreadable']),
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
      'and for a container log the container (or namespace/pod/container) it belongs to. Start here, then use tail_log, search_logs or log_stats.',
    input,
    output,
    annotations: { title: 'List logs', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ path }, ctx) => {
      const guard = await logGuard(ctx, config);
      const files = await selectLogs(ctx, config, guard, path === undefined ? undefined : [path], true);
      const logs: z.output<typeof output>['logs'] = [];
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
      const truncated = files.length >= config.limits.maxLogs;
      if (logs.length === 0) {
        const where = path ?? 'the allowed directories';
        return { text: `No log files under ${where} (looked for *.log, *.log.N, *.log.gz and *.jsonl, ${config.limits.discoveryDepth} levels deep).`, structured: { logs, truncated } };
      }
      const lines = logs.map((l) => `${l.rotatedFrom ? '  ' : ''}${l.path}  ${formatBytes(l.size)}  ${l.modified.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}  ${l.format}${l.container !== undefined ? `  container ${l.container}` : ''}`);
      if (truncated) lines.push(`[truncated: only the first ${config.limits.maxLogs} logs are listed; give a path to list one directory]`);
      return { text: lines.join('\n'), structured: { logs, truncated } };
    },
  };
}
