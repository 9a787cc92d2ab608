import { countOf, escapeTerminalControls, type RequestContext } from '@suite/shared';
import type { LogsConfig } from '../config.js';
import type { EntryFilter } from '../tail.js';
import { tailJournal } from './read.js';
import { journalView } from './views.js';

/** Entries a prompt embeds from the journal at most. */
const PROMPT_ENTRIES = 500;

/**
 * The journal's entries a prompt embeds (analyze-logs over a timeframe, debug-error for the
 * entries holding an error): the last ones that pass the filter, as text, bounded like a resource.
 */
export async function journalExcerpt(config: LogsConfig, path: string, filter: EntryFilter, ctx: RequestContext): Promise<{ type: 'text'; text: string }> {
  const view = journalView(path);
  const tail = await tailJournal(config, view, { count: PROMPT_ENTRIES, maxBytes: config.limits.resourceTailBytes, filter, signal: ctx.signal, deadline: Date.now() + config.limits.tailBudgetMs });
  const header = `[${view.display}: ${tail.lines.length === 0 ? 'no entries match' : `the last ${countOf(tail.lines.length, 'entry', 'entries')} that match, one JSON line each`}]`;
  return { type: 'text', text: escapeTerminalControls([header, ...tail.lines].join('\n')) };
}
