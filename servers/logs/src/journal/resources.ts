import { escapeTerminalControls, escapeTerminalControlsInLine, type ChangeSource, type RequestContext, type ResourceContents, type ResourceDefinition, type ResourceTemplateDefinition } from '@suite/shared';
import { formatBytes } from '../arguments.js';
import { JOURNAL_TEMPLATE, JOURNAL_URI, type LogsConfig } from '../config.js';
import { collect, fieldValues, readJournal } from './journalctl.js';
import { tailJournal } from './read.js';
import { journalQuery, journalSources, journalUri, journalView } from './views.js';

/**
 * `logs://journal` and `logs://journal/{unit}`: the last entries of the journal (or of one unit)
 * as JSON lines, bounded like a file's tail. A subscription is told when the view has an entry it
 * did not have: its signature is the cursor of its newest entry in each journal, polled.
 */

/** How often a subscribed journal view is looked at (one journalctl per journal each time). */
const POLL_MS = 1000;

async function readView(uri: string, config: LogsConfig, ctx: RequestContext): Promise<ResourceContents> {
  const view = journalView(uri);
  const maxBytes = config.limits.resourceTailBytes;
  const result = await tailJournal(config, view, { count: 5000, maxBytes, filter: {}, signal: ctx.signal, deadline: Date.now() + config.limits.tailBudgetMs });
  const notes: string[] = [];
  if (!result.reachedStart) notes.push(`[the last entries, at most ${formatBytes(maxBytes)}; use the tail_log, search_logs and read_log_range tools for the rest]`);
  if (result.lines.length === 0) notes.push('[no entries]');
  return { uri, mimeType: 'application/x-ndjson', text: escapeTerminalControls([...notes, ...result.lines].join('\n')) };
}

function follow(uri: string, config: LogsConfig): ChangeSource {
  const view = journalView(uri);
  const sources = journalSources(config);
  return {
    poll: {
      intervalMs: POLL_MS,
      signature: async () => {
        // Not the subscribe request's signal: the poll outlives the request.
        const signal = new AbortController().signal;
        const newest: string[] = [];
        for (const source of sources) {
          const last = await collect(readJournal(source, { ...journalQuery(view, {}), lines: 1, reverse: true }, { signal, deadline: Date.now() + 10_000 }), 1).catch(() => []);
          newest.push(last[0]?.cursor ?? '');
        }
        return newest.join('\n');
      },
    },
  };
}

export function journalResources(config: LogsConfig): { resource: ResourceDefinition; template: ResourceTemplateDefinition } {
  const units = async (ctx: RequestContext): Promise<string[]> => {
    const all = new Set<string>();
    for (const source of journalSources(config)) for (const unit of await fieldValues(source, '_SYSTEMD_UNIT', { signal: ctx.signal, deadline: Date.now() + 5000, max: 200 })) all.add(unit);
    return [...all].sort();
  };
  return {
    resource: {
      uri: JOURNAL_URI,
      name: 'journal',
      title: 'The systemd journal',
      description: `The last entries of the journal (every unit), one JSON line each: time, level, message and the journal's fields. At most ${formatBytes(config.limits.resourceTailBytes)}. Subscribe to hear of new entries.`,
      mimeType: 'application/x-ndjson',
      read: (ctx) => readView(JOURNAL_URI, config, ctx),
      subscribe: async () => follow(JOURNAL_URI, config),
    },
    template: {
      uriTemplate: JOURNAL_TEMPLATE,
      name: 'journal-unit',
      title: 'A systemd unit\'s journal',
      description: `The last entries of one unit (logs://journal/nginx.service), as for logs://journal. At most ${formatBytes(config.limits.resourceTailBytes)}. Subscribe to hear of its new entries.`,
      mimeType: 'application/x-ndjson',
      read: (uri, _variables, ctx) => readView(uri, config, ctx),
      list: async (_cursor, ctx) => ({
        resources: (await units(ctx)).map((unit) => ({ uri: journalUri(unit), name: escapeTerminalControlsInLine(unit), title: escapeTerminalControlsInLine(unit), description: 'journal entries of this unit', mimeType: 'application/x-ndjson' })),
      }),
      complete: { unit: async (value, _context, ctx) => (await units(ctx)).filter((u) => u.startsWith(value)).slice(0, 100).map(escapeTerminalControlsInLine) },
      subscribe: async (uri) => follow(uri, config),
    },
  };
}
