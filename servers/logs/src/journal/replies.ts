import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import path from 'node:path';
import { countOf, type RequestContext } from '@suite/shared';
import { formatBytes } from '../arguments.js';
import type { JournalSource, LogsConfig } from '../config.js';
import { GroupCounts, groupOf } from '../fields.js';
import { parserFor } from '../formats/parsers.js';
import type { EntryFilter } from '../tail.js';
import { fieldValues } from './journalctl.js';
import { JOURNAL_SPEC, newJournalLines, rangeJournal, tailJournal } from './read.js';
import { journalSources, journalUri, journalView } from './views.js';

/** The journal's answers to tail_log, read_log_range, read_new_lines and its rows in list_logs: the same shapes as for files. */

const parser = parserFor(JOURNAL_SPEC);

export async function journalTailReply(config: LogsConfig, path: string, args: { lines: number; group_by?: string | undefined }, filter: EntryFilter, ctx: RequestContext) {
  const view = journalView(path);
  const result = await tailJournal(config, view, { count: args.lines, maxBytes: config.limits.maxOutputBytes, filter, signal: ctx.signal, deadline: Date.now() + config.limits.tailBudgetMs });
  const notes: string[] = [];
  const filtered = filter.minLevel !== undefined || filter.since !== undefined || filter.grep !== undefined || (filter.fields?.length ?? 0) > 0;
  if (result.lines.length === 0) notes.push(filtered ? `No entries of ${view.display} match.` : `${view.display} has no entries.`);
  if (result.cutByBytes) notes.push(`[older entries left out: the answer is capped at ${formatBytes(config.limits.maxOutputBytes)}; ask for fewer lines]`);
  if (result.stoppedEarly === 'time-budget') notes.push(`[stopped after ${config.limits.tailBudgetMs / 1000} s with ${countOf(result.lines.length, 'entry', 'entries')}; search_logs looks through the whole journal]`);
  if (result.stoppedEarly === 'scan-limit') notes.push(`[stopped after looking at the last million entries; search_logs looks through the whole journal]`);
  let groups: { value: string; count: number }[] | undefined;
  if (args.group_by !== undefined) {
    const counts = new GroupCounts(Number.MAX_SAFE_INTEGER);
    for (const line of result.lines) counts.add(groupOf(parser.head(line)?.record, args.group_by));
    groups = counts.top(Number.MAX_SAFE_INTEGER);
    if (groups.length > 0) notes.unshift(`[by ${args.group_by}: ${groups.slice(0, 20).map((g) => `${g.value} ${g.count}`).join(', ')}${groups.length > 20 ? ', …' : ''}]`);
  }
  return {
    text: [...result.lines, ...notes].join('\n'),
    structured: {
      path: view.display,
      format: JOURNAL_SPEC.format,
      lines: result.lines,
      entries: result.lines.length,
      reachedStart: result.reachedStart,
      reachedEnd: true,
      cutByBytes: result.cutByBytes,
      ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}),
      ...(groups ? { groups } : {}),
    },
  };
}

export async function journalRangeReply(config: LogsConfig, path: string, window: { since?: number; until?: number }, maxLines: number, budgetMs: number, ctx: RequestContext) {
  const view = journalView(path);
  const result = await rangeJournal(config, view, window, { maxLines, maxBytes: config.limits.maxOutputBytes, signal: ctx.signal, deadline: Date.now() + budgetMs });
  const notes: string[] = [];
  if (result.lines.length === 0) notes.push(`No entries of ${view.display} fall in that time range.`);
  else if (result.more) notes.push('[more: continue with since set to the time of the last entry shown]');
  if (result.timedOut) notes.push(`[stopped after ${budgetMs / 1000} s; narrow the range]`);
  return {
    text: [...result.lines, ...notes].join('\n'),
    structured: { path: view.display, format: JOURNAL_SPEC.format, lines: result.lines, more: result.more, timedOut: result.timedOut },
  };
}

export async function journalNewLinesReply(config: LogsConfig, path: string, cursor: string | undefined, maxBytes: number, ctx: RequestContext) {
  const view = journalView(path);
  const result = await newJournalLines(config, view, cursor, maxBytes, ctx.signal, Date.now() + config.limits.tailBudgetMs);
  const summary = result.status === 'started' ? [] : [`${countOf(result.lines.length, 'new entry', 'new entries')} (${result.status}).`];
  return { text: [...result.notes.map((n) => `[${n}]`), ...summary, ...result.lines, `cursor: ${result.cursor}`].join('\n'), structured: result };
}

/** Units listed under logs://journal at most. */
const MAX_UNITS = 200;

export interface JournalRow {
  path: string;
  unit?: string;
  source: string;
  /** The journal files' total size (0 for a unit's row: its share is not known). */
  size: number;
  /** The journal files' last modification (ms). */
  mtimeMs: number;
}

/** Where journald keeps the system journal: in memory until the first flush, then on disk. */
const SYSTEM_JOURNAL = ['/var/log/journal', '/run/log/journal'];

/** The journal files of the sources (a directory and its machine-id subdirectories), as far as the server's user can list them. */
async function journalFiles(sources: readonly JournalSource[]): Promise<{ size: number; mtimeMs: number }> {
  let size = 0;
  let mtimeMs = 0;
  const visit = async (dir: string, depth: number): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory() && depth > 0) await visit(full, depth - 1);
      else if (entry.isFile() && /\.journal~?$/.test(entry.name)) {
        const info = await lstat(full).catch(() => undefined);
        if (!info) continue;
        size += info.size;
        mtimeMs = Math.max(mtimeMs, info.mtimeMs);
      }
    }
  };
  for (const source of sources) for (const dir of source.kind === 'system' ? SYSTEM_JOURNAL : [source.directory]) await visit(dir, 1);
  return { size, mtimeMs };
}

/** logs://journal, then one row per unit that has entries (journalctl -F _SYSTEMD_UNIT), at most MAX_UNITS. */
export async function journalRows(config: LogsConfig, signal: AbortSignal): Promise<{ rows: JournalRow[]; truncated: boolean }> {
  const sources = journalSources(config);
  const label = sources.map((s) => (s.kind === 'system' ? 'system journal' : `journal files in ${s.directory}`)).join(', ');
  const units = new Set<string>();
  for (const source of sources) {
    for (const unit of await fieldValues(source, '_SYSTEMD_UNIT', { signal, deadline: Date.now() + 10_000, max: MAX_UNITS + 1 })) units.add(unit);
  }
  const sorted = [...units].sort();
  const { size, mtimeMs } = await journalFiles(sources);
  return {
    rows: [{ path: journalUri(), source: label, size, mtimeMs }, ...sorted.slice(0, MAX_UNITS).map((unit) => ({ path: journalUri(unit), unit, source: label, size: 0, mtimeMs }))],
    truncated: sorted.length > MAX_UNITS,
  };
}
