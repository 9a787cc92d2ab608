import { z } from 'zod';
import { escapeTerminalControls, escapeTerminalControlsInLine, type PromptDefinition } from '@suite/shared';
import { logGuard } from '../access.js';
import type { LogsConfig } from '../config.js';
import { completeLogPath } from '../known-logs.js';
import { TIMEFRAMES, parseTimeframe, recentUri } from '../resources/recent.js';
import { fileUri } from '../uris.js';
import { journalExcerpt } from '../journal/prompts.js';
import { isJournalPath } from '../journal/views.js';

const args = z.object({
  timeframe: z.string().min(1).max(16).describe('How far back to look: 15m, 1h, 6h, 24h, 7d'),
  file: z.string().min(1).max(4096).optional().describe('One log to analyse (absolute path, or logs://journal[/<unit>]); default: every log written to in the timeframe'),
});

function instruction(timeframe: string, scope: string): string {
  return (
    `Analyse the log entries of the last ${timeframe} from ${scope}, embedded below. ` +
    'Summarise what happened: errors and warnings (what, how often, since when), bursts or unusual patterns, the likely root causes, ' +
    'and what to check or fix next. Quote the lines you rely on. If you need more than is embedded, use search_logs, log_stats or read_log_range.'
  );
}

/** Analyse the recent logs: embeds logs://recent (or one log's filtered view) as resource content. */
export function analyzeLogs(config: LogsConfig): PromptDefinition<typeof args> {
  return {
    name: 'analyze-logs',
    title: 'Analyse recent logs',
    description: 'Asks the model to analyse the log entries of a timeframe (all logs, or one file): errors, warnings, bursts, likely causes, what to check next.',
    args,
    complete: {
      timeframe: (value) => TIMEFRAMES.filter((t) => t.startsWith(value)),
      file: (value, _context, ctx) => completeLogPath(value, ctx, config),
    },
    get: async ({ timeframe, file }, ctx) => {
      const windowMs = parseTimeframe(timeframe);
      if (file !== undefined && isJournalPath(file)) {
        const excerpt = await journalExcerpt(config, file, { since: Date.now() - windowMs }, ctx);
        return {
          description: escapeTerminalControlsInLine(`Analysis of the last ${timeframe} of ${file}`),
          messages: [
            { role: 'user', content: { type: 'text', text: escapeTerminalControls(instruction(timeframe, file)) } },
            { role: 'user', content: excerpt },
          ],
        };
      }
      let uri = recentUri(timeframe);
      let scope = 'every log written to in that time';
      if (file !== undefined) {
        const guard = await logGuard(ctx, config);
        const { real } = await guard.resolve(file, { mustExist: true });
        uri = fileUri(real, { since: timeframe });
        scope = file;
      }
      return {
        description: escapeTerminalControlsInLine(`Analysis of the last ${timeframe} of ${scope}`),
        messages: [
          { role: 'user', content: { type: 'text', text: escapeTerminalControls(instruction(timeframe, scope)) } },
          ...(await ctx.embedResource(uri)).map((content) => ({ role: 'user' as const, content })),
        ],
      };
    },
  };
}
