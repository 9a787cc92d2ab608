import path from 'node:path';
import { z } from 'zod';
import { escapeTerminalControls, escapeTerminalControlsInLine, type PromptDefinition, type RequestContext, countOf } from '@suite/shared';
import { logGuard, withLog } from '../access.js';
import type { LogsConfig } from '../config.js';
import { completeLogPath, knownLogs } from '../known-logs.js';
import { recentUri } from '../resources/recent.js';
import { runScan } from '../scan-runner.js';
import { tailLog } from '../tail.js';
import { scanTargets, selectLogs } from '../targets.js';
import { inspectLog } from '../inspect.js';
import { fileUri } from '../uris.js';
import { parserFor } from '../formats/parsers.js';
import { normalizeMessage } from '../normalize.js';
import { journalExcerpt } from '../journal/prompts.js';
import { isJournalPath } from '../journal/views.js';

const MAX_FILES_EMBEDDED = 3;
const FIND_BUDGET_MS = 10_000;
const ERROR_COMPLETION_FILES = 20;

const args = z.object({
  error: z.string().min(1).max(500).describe('The error message (or a distinctive part of it)'),
  file: z.string().min(1).max(4096).optional().describe('The log to look in (absolute path, or logs://journal[/<unit>]); default: every log'),
});

/** Distinct recent error messages of the live logs (timestamps and levels left out), for completing `error`. */
async function recentErrors(value: string, ctx: RequestContext, config: LogsConfig): Promise<string[]> {
  const logs = (await knownLogs(ctx, config)).filter((l) => l.rotation.kind === 'live').sort((a, b) => b.mtimeMs - a.mtimeMs).slice(0, ERROR_COMPLETION_FILES);
  const guard = await logGuard(ctx, config);
  const typed = value.toLowerCase();
  const messages = new Map<string, string>();
  for (const file of logs) {
    await withLog(guard, file.path, async (log) => {
      const { spec, binary } = await inspectLog(log, config);
      if (binary) return;
      const parser = parserFor(spec);
      const result = await tailLog(log, { count: 200, maxBytes: 64 * 1024, filter: { minLevel: 'error' }, spec, signal: ctx.signal, deadline: Date.now() + 1000, maxScanBytes: 8 * 1024 * 1024 });
      for (const group of [...result.groups].reverse()) {
        const message = (parser.head(group[0] ?? '')?.message ?? '').trim().slice(0, 200);
        const key = normalizeMessage(message);
        if (message && message.toLowerCase().includes(typed) && !messages.has(key)) messages.set(key, message);
      }
    }).catch(() => undefined);
    if (messages.size >= 100) break;
  }
  return [...messages.values()].map((m) => escapeTerminalControlsInLine(m));
}

/**
 * Debug an error: finds the logs whose entries contain the error text (a bounded search), and
 * embeds each one's filtered view (logs://file/...?grep=...) as resource content.
 */
const ADVICE =
  'Explain what the error means, when it started and how often it happens, what probably causes it (look at what precedes it and at the stack traces), ' +
  'and how to fix it. Use search_logs or read_log_range for more context around a line.';

export function debugError(config: LogsConfig): PromptDefinition<typeof args> {
  return {
    name: 'debug-error',
    title: 'Debug an error from the logs',
    description: 'Finds the log entries that contain an error message (with their stack traces) and asks the model for the cause and a fix.',
    args,
    complete: {
      error: (value, _context, ctx) => recentErrors(value, ctx, config),
      file: (value, _context, ctx) => completeLogPath(value, ctx, config),
    },
    get: async ({ error, file }, ctx) => {
      if (file !== undefined && isJournalPath(file)) {
        const excerpt = await journalExcerpt(config, file, { grep: error }, ctx);
        const text = `Help me debug this error: ${JSON.stringify(error)}. The entries of ${file} that contain it are embedded below, newest last. ${ADVICE}`;
        return {
          description: escapeTerminalControlsInLine(`Debugging ${JSON.stringify(error.slice(0, 80))}`),
          messages: [{ role: 'user', content: { type: 'text', text: escapeTerminalControls(text) } }, { role: 'user', content: excerpt }],
        };
      }
      const guard = await logGuard(ctx, config);
      const files = await selectLogs(ctx, config, guard, file === undefined ? undefined : [file], true);
      const { targets } = await scanTargets(guard, config, files);
      const report = await runScan(
        { kind: 'search', query: { pattern: error, literal: true, caseSensitive: false, contextLines: 0, maxResults: 500 }, deadline: Date.now() + FIND_BUDGET_MS },
        targets,
        guard,
        ctx,
        (r) => `${r.matches.length} occurrences`,
      );
      const counts = new Map<string, number>();
      for (const m of report.matches) counts.set(m.file, (counts.get(m.file) ?? 0) + 1);
      const withMatches = [...counts.entries()].sort((a, b) => b[1] - a[1]).slice(0, MAX_FILES_EMBEDDED);
      const pathOf = new Map(targets.map((t) => [t.display, t.real]));
      const uris = withMatches.map(([display]) => fileUri(pathOf.get(display) ?? display, { grep: error }));
      const found =
        withMatches.length > 0
          ? `It occurs in ${withMatches.map(([display, n]) => `${path.basename(display)} (${n >= 500 ? `${n}+ lines` : countOf(n, 'line')})`).join(', ')}; the entries that contain it are embedded below, newest last.`
          : 'It does not occur in the logs (rotated copies included); the last hour of all logs is embedded below instead.';
      const instruction =
`Help me debug this error: ${JSON.stringify(error)}. ${found} ${ADVICE}`;
      const embedded = uris.length > 0 ? uris : [recentUri('1h')];
      const contents = [];
      for (const uri of embedded) contents.push(...(await ctx.embedResource(uri)));
      return {
        description: escapeTerminalControlsInLine(`Debugging ${JSON.stringify(error.slice(0, 80))}`),
        messages: [{ role: 'user', content: { type: 'text', text: escapeTerminalControls(instruction) } }, ...contents.map((content) => ({ role: 'user' as const, content }))],
      };
    },
  };
}
