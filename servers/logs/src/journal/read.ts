import { countOf } from '@suite/shared';
import type { LineChunk, RawSource } from '../chunks.js';
import type { JournalSource, LogsConfig } from '../config.js';
import { DEFAULT_JSON_FIELDS, parserFor, type FormatSpec } from '../formats/parsers.js';
import type { SearchMatch, SearchQuery } from '../scan-protocol.js';
import { compileQuery, searchSource } from '../search.js';
import type { StatsAccumulator } from '../stats.js';
import { entryMatches, type EntryFilter } from '../tail.js';
import type { JournalEntry } from './entries.js';
import { collect, readJournal, readJournalFiltered, type EntryStream, type FilteredStream } from './journalctl.js';
import { entryPrefilter } from './prefilter.js';
import { decodeJournalCursor, encodeJournalCursor, journalQuery, journalSources, type JournalView } from './views.js';

/**
 * The journal behind the operations file logs have: a tail, a search, statistics, a time range
 * and new entries after a cursor. Entries are JSON lines (see entries.ts) read with the JSON-lines
 * parser and the same search and statistics code as files; with several journals (--journal and
 * --journal-dir), each is read in turn and entries are merged by time where order matters.
 */

/** The spec journal lines are read with: the default JSON field names, whatever --json-*-field says for files. */
export const JOURNAL_SPEC: FormatSpec = { format: 'json', json: DEFAULT_JSON_FIELDS, reference: 0 };
const parser = parserFor(JOURNAL_SPEC);
const CHUNK_BYTES = 256 * 1024;

/**
 * A stream of entries as the chunks of whole lines search and statistics read. An entry a
 * prefilter left out is an empty line (no pattern matches one): matches keep their line numbers.
 */
function linesOf(stream: EntryStream | FilteredStream, seen?: (entry: JournalEntry) => void): RawSource {
  return {
    consumed: () => stream.bytes(),
    async *lineChunks(): AsyncGenerator<LineChunk> {
      let parts: string[] = [];
      let size = 0;
      let offset = 0;
      const flush = (): LineChunk => {
        const bytes = Buffer.from(`${parts.join('\n')}\n`);
        const chunk = { bytes, offset };
        offset += bytes.length;
        parts = [];
        size = 0;
        return chunk;
      };
      for await (const entry of stream.entries) {
        if (typeof entry === 'number') {
          parts.push('\n'.repeat(entry - 1));
          size += entry;
        } else {
          seen?.(entry);
          parts.push(entry.line);
          size += entry.line.length + 1;
        }
        if (size >= CHUNK_BYTES) yield flush();
      }
      if (parts.length > 0) yield flush();
    },
  };
}

export interface JournalTail {
  lines: string[];
  times: number[];
  cutByBytes: boolean;
  reachedStart: boolean;
  stoppedEarly?: 'time-budget' | 'scan-limit';
}

/**
 * The last `count` entries that pass the filter, oldest first: journalctl filters what it can and
 * reads newest first; the rest of the filter (text, non-exact fields) is applied here. At most
 * `maxScan` entries are looked at per journal.
 */
export async function tailJournal(config: LogsConfig, view: JournalView, options: { count: number; maxBytes: number; filter: EntryFilter; signal: AbortSignal; deadline: number; maxScan?: number }): Promise<JournalTail> {
  const picked: JournalEntry[] = [];
  let reachedStart = true;
  let stoppedEarly: JournalTail['stoppedEarly'];
  const ours = options.filter.grep !== undefined || (options.filter.fields?.length ?? 0) > 0;
  for (const source of journalSources(config)) {
    const query = journalQuery(view, options.filter);
    // Without a filter of ours, journalctl's -n picks the entries; with one, entries are read newest first until enough pass.
    const stream = readJournal(source, ours ? { ...query, reverse: true } : { ...query, lines: options.count, reverse: true }, { signal: options.signal, deadline: options.deadline });
    let looked = 0;
    let found = 0;
    for await (const entry of stream.entries) {
      looked++;
      if (!ours || entryMatches([entry.line], parser.head(entry.line), options.filter)) {
        picked.push(entry);
        if (++found >= options.count) break;
      }
      if (looked >= (options.maxScan ?? 1_000_000)) {
        stoppedEarly = 'scan-limit';
        break;
      }
    }
    if (stream.timedOut()) stoppedEarly = 'time-budget';
    if (found >= options.count || stoppedEarly) reachedStart = false;
  }
  picked.sort((a, b) => a.micros - b.micros);
  let chosen = picked.slice(-options.count);
  let bytes = 0;
  let cut = 0;
  for (let i = chosen.length - 1; i >= 0; i--) {
    bytes += Buffer.byteLength((chosen[i] as JournalEntry).line) + 1;
    if (bytes > options.maxBytes) {
      cut = i + 1;
      break;
    }
  }
  chosen = chosen.slice(cut);
  return { lines: chosen.map((e) => e.line), times: chosen.map((e) => Math.floor(e.micros / 1000)), cutByBytes: cut > 0, reachedStart: reachedStart && cut === 0, ...(stoppedEarly ? { stoppedEarly } : {}) };
}

export interface JournalSearch {
  matches: SearchMatch[];
  stopped?: 'max-results' | 'time-budget';
  bytes: number;
  journals: number;
}

/** A search over the journals of a view, with the search code files use; matches name the view. */
export async function searchJournal(config: LogsConfig, view: JournalView, query: SearchQuery, options: { signal: AbortSignal; deadline: number; limit: number; chunkDone: () => void; /** Every entry made into a line (the tests' reference). */ unfiltered?: boolean }): Promise<JournalSearch> {
  const compiled = compileQuery(query);
  // Entries whose export bytes cannot hold a match are never made into lines.
  const prefilter = options.unfiltered ? undefined : entryPrefilter(query);
  const matches: SearchMatch[] = [];
  let bytes = 0;
  let stopped: JournalSearch['stopped'];
  const sources = journalSources(config);
  for (const source of sources) {
    if (matches.length >= options.limit) {
      stopped = 'max-results';
      break;
    }
    const selection = journalQuery(view, { ...(query.minLevel ? { minLevel: query.minLevel } : {}), ...pick(query), ...(query.fields ? { fields: query.fields } : {}) });
    const reading = { signal: options.signal, deadline: options.deadline };
    const stream = prefilter ? readJournalFiltered(source, selection, reading, prefilter) : readJournal(source, selection, reading);
    const outcome = await searchSource(linesOf(stream), view.display, JOURNAL_SPEC, query, compiled, {
      deadline: options.deadline,
      limit: options.limit - matches.length,
      emit: (found) => matches.push(...found),
      chunkDone: options.chunkDone,
      linesAfter: undefined,
    });
    bytes += stream.bytes();
    if (stream.timedOut()) stopped = 'time-budget';
    if (outcome.stopped) {
      stopped = outcome.stopped;
      break;
    }
  }
  return { matches, ...(stopped ? { stopped } : {}), bytes, journals: sources.length };
}

function pick(q: { since?: number; until?: number }): { since?: number; until?: number } {
  return { ...(q.since !== undefined ? { since: q.since } : {}), ...(q.until !== undefined ? { until: q.until } : {}) };
}

/** Statistics over the journals of a view, counted into `stats` (the accumulator files use). */
export async function statsJournal(config: LogsConfig, view: JournalView, stats: StatsAccumulator, query: { since?: number; until?: number; fields?: EntryFilter['fields'] }, options: { signal: AbortSignal; deadline: number; chunkDone: () => void }): Promise<{ entries: number; bytes: number; timedOut: boolean }> {
  let entries = 0;
  let bytes = 0;
  let timedOut = false;
  for (const source of journalSources(config)) {
    const stream = readJournal(source, journalQuery(view, { ...pick(query), ...(query.fields ? { fields: query.fields } : {}) }), { signal: options.signal, deadline: options.deadline });
    const read = await stats.add(linesOf(stream), JOURNAL_SPEC, options.deadline, options.chunkDone);
    entries += read.lines;
    bytes += read.bytes;
    if (read.timedOut || stream.timedOut()) {
      timedOut = true;
      break;
    }
  }
  return { entries, bytes, timedOut };
}

/** Entries between since and until, oldest first, at most maxLines (more: there are others after them). */
export async function rangeJournal(config: LogsConfig, view: JournalView, window: { since?: number; until?: number }, options: { maxLines: number; maxBytes: number; signal: AbortSignal; deadline: number }): Promise<{ lines: string[]; more: boolean; timedOut: boolean }> {
  const all: JournalEntry[] = [];
  let timedOut = false;
  for (const source of journalSources(config)) {
    const stream = readJournal(source, journalQuery(view, window), { signal: options.signal, deadline: options.deadline });
    all.push(...(await collect(stream, options.maxLines + 1)));
    if (stream.timedOut()) timedOut = true;
  }
  all.sort((a, b) => a.micros - b.micros);
  const lines: string[] = [];
  let bytes = 0;
  for (const entry of all.slice(0, options.maxLines)) {
    bytes += Buffer.byteLength(entry.line) + 1;
    if (bytes > options.maxBytes && lines.length > 0) break;
    lines.push(entry.line);
  }
  return { lines, more: all.length > lines.length, timedOut };
}

export interface JournalNewLines {
  status: 'started' | 'appended' | 'unchanged';
  lines: string[];
  cursor: string;
  more: boolean;
  notes: string[];
}

/** Entries a journal has at most per read_new_lines answer (the byte cap usually ends it first). */
const MAX_NEW_ENTRIES = 5000;

/**
 * The entries after a cursor, by journal cursor: each entry once, in the order journalctl gives
 * them, whatever happened to the journal files in between (rotation, vacuuming, a boot). The first
 * call returns a cursor at the last entry.
 */
export async function newJournalLines(config: LogsConfig, view: JournalView, cursorText: string | undefined, maxBytes: number, signal: AbortSignal, deadline: number): Promise<JournalNewLines> {
  const sources = journalSources(config);
  const query = journalQuery(view, {});
  if (cursorText === undefined) {
    const cursors: (string | null)[] = [];
    for (const source of sources) {
      const last = await collect(readJournal(source, { ...query, lines: 1, reverse: true }, { signal, deadline }), 1);
      cursors.push(last[0]?.cursor ?? null);
    }
    return {
      status: 'started',
      lines: [],
      cursor: encodeJournalCursor({ ...(view.unit !== undefined ? { u: view.unit } : {}), c: cursors }),
      more: false,
      notes: [`Following ${view.display} from its last entry. Call read_new_lines again with this cursor to get the entries added since.`],
    };
  }
  const state = decodeJournalCursor(cursorText, view, sources.length);
  const next = [...state.c];
  const found: { entry: JournalEntry; source: number }[] = [];
  let more = false;
  for (let i = 0; i < sources.length; i++) {
    const after = state.c[i];
    const stream = readJournal(sources[i] as JournalSource, { ...query, ...(after ? { afterCursor: after } : {}) }, { signal, deadline });
    let bytes = 0;
    let n = 0;
    for await (const entry of stream.entries) {
      bytes += Buffer.byteLength(entry.line) + 1;
      // Each journal gets its share of the answer; what does not fit stays after the cursor.
      if ((n > 0 && bytes > maxBytes / sources.length) || n >= MAX_NEW_ENTRIES) {
        more = true;
        break;
      }
      found.push({ entry, source: i });
      next[i] = entry.cursor;
      n++;
    }
  }
  found.sort((a, b) => a.entry.micros - b.entry.micros || a.source - b.source);
  const lines = found.map((f) => f.entry.line);
  const notes = more ? [`More entries than fitted in one answer (${countOf(lines.length, 'entry', 'entries')} here): call again with the cursor for the rest.`] : [];
  return {
    status: lines.length === 0 ? 'unchanged' : 'appended',
    lines,
    cursor: encodeJournalCursor({ ...(view.unit !== undefined ? { u: view.unit } : {}), c: next }),
    more,
    notes,
  };
}

