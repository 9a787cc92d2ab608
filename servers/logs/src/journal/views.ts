import { ToolError, encodeCursor, type RequestContext } from '@suite/shared';
import { z } from 'zod';
import { JOURNAL_URI, type JournalSource, type LogsConfig } from '../config.js';
import type { FieldFilter } from '../fields.js';
import type { Level } from '../levels.js';
import { priorityOf } from './entries.js';
import { FIELD_NAME, UNIT_NAME, type JournalQuery } from './journalctl.js';

/**
 * Which journal a tool or resource names: `logs://journal` (every entry of every journal the
 * server was started with) or `logs://journal/<unit>` (one systemd unit's). The same text is a
 * tool's `path` and a resource's URI, so what list_logs shows can be passed to either.
 */

export interface JournalView {
  /** The URI as shown in results. */
  display: string;
  unit?: string;
}

export function isJournalPath(p: string): boolean {
  return p === JOURNAL_URI || p.startsWith(`${JOURNAL_URI}/`);
}

export function journalUri(unit?: string): string {
  return unit === undefined ? JOURNAL_URI : `${JOURNAL_URI}/${encodeURIComponent(unit)}`;
}

export function journalView(p: string): JournalView {
  if (p === JOURNAL_URI || p === `${JOURNAL_URI}/`) return { display: JOURNAL_URI };
  let unit: string;
  try {
    unit = decodeURIComponent(p.slice(JOURNAL_URI.length + 1));
  } catch {
    unit = '';
  }
  if (!UNIT_NAME.test(unit)) {
    throw ToolError.invalidArgument(`Invalid journal unit in ${p}: give a systemd unit name (logs://journal/nginx.service), without wildcards. list_logs shows the units.`);
  }
  return { display: journalUri(unit), unit };
}

/** The journals the server reads; an actionable error when it reads none. */
export function journalSources(config: LogsConfig): JournalSource[] {
  const sources = config.journals ?? [];
  if (sources.length === 0) {
    throw ToolError.invalidArgument('The server reads no journal: start it with --journal (the system journal) or --journal-dir <dir> (journal files) to use logs://journal.');
  }
  return sources;
}

export interface JournalFilter {
  minLevel?: Level;
  since?: number;
  until?: number;
  fields?: FieldFilter[];
}

/** What journalctl can filter of ours with its indexes: the unit, the priority, the time, exact field values. */
export function journalQuery(view: JournalView, filter: JournalFilter): JournalQuery {
  const matches: string[] = [];
  for (const f of filter.fields ?? []) {
    if (f.op !== '=' || !FIELD_NAME.test(f.field) || (typeof f.value !== 'string' && typeof f.value !== 'number')) continue;
    const value = String(f.value);
    if (!value.includes('\n')) matches.push(`${f.field}=${value}`);
  }
  return {
    ...(view.unit !== undefined ? { unit: view.unit } : {}),
    ...(filter.minLevel !== undefined ? { maxPriority: priorityOf(filter.minLevel) } : {}),
    ...(filter.since !== undefined ? { since: filter.since } : {}),
    ...(filter.until !== undefined ? { until: filter.until } : {}),
    ...(matches.length > 0 ? { matches } : {}),
  };
}

/** read_new_lines' cursor for a journal: the journal cursor reached in each source (null: none had entries yet). */
const journalCursor = z.object({ u: z.string().max(300).optional(), c: z.array(z.string().max(1024).nullable()).max(64) });
export type JournalCursorState = z.infer<typeof journalCursor>;

export function encodeJournalCursor(state: JournalCursorState): string {
  return encodeCursor('journal-new-lines', state);
}

export function decodeJournalCursor(text: string, view: JournalView, sources: number): JournalCursorState {
  try {
    const envelope = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as { v?: unknown; k?: unknown; s?: unknown };
    if (envelope.v === 1 && envelope.k === 'journal-new-lines') {
      const state = journalCursor.safeParse(envelope.s);
      if (state.success && state.data.u === view.unit && state.data.c.length === sources) return state.data;
    }
  } catch {
    // Reported below.
  }
  throw ToolError.invalidArgument(`Invalid cursor for ${view.display}: use the cursor read_new_lines returned for it last time, or call it without one to start at the end of the journal.`);
}

/**
 * What a search or statistics call reads: the journal views among its paths, and whether files are
 * read too (with the file paths: undefined for every log under the roots). Without paths, a server
 * with journals reads them, and files only when it has directories or files to read.
 */
export async function splitPaths(ctx: RequestContext, config: LogsConfig, paths: readonly string[] | undefined): Promise<{ views: JournalView[]; files: string[] | undefined; withFiles: boolean }> {
  if (!paths || paths.length === 0) {
    const journals = (config.journals ?? []).length > 0;
    const views = journals ? [journalView(JOURNAL_URI)] : [];
    return { views, files: undefined, withFiles: !journals || (await ctx.roots()).directories.length > 0 };
  }
  const views: JournalView[] = [];
  const files: string[] = [];
  for (const p of paths) {
    if (isJournalPath(p)) {
      journalSources(config);
      const view = journalView(p);
      if (!views.some((v) => v.display === view.display)) views.push(view);
    } else files.push(p);
  }
  // The whole journal covers its units: read once.
  const narrowed = views.some((v) => v.unit === undefined) ? views.filter((v) => v.unit === undefined) : views;
  return { views: narrowed, files, withFiles: files.length > 0 };
}
