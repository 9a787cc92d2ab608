import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '@suite/test-kit';
import { bootId, exportFormat, writeJournal, type JournalTestEntry } from '@suite/test-kit/journal';
import { ExportParser, FilteringExportParser } from '../src/journal/journalctl.js';
import { entryPrefilter } from '../src/journal/prefilter.js';
import { searchJournal } from '../src/journal/read.js';
import type { SearchQuery } from '../src/scan-protocol.js';

/**
 * A search over the journal looks for the pattern's required text in the export bytes and makes
 * only the entries that hold it into JSON lines: the answers must be those of a search that makes
 * every entry a line. Patterns that can match what the line adds (the time, the level, our keys,
 * JSON escapes, Latin-1 field names) are the class tested.
 */

const BOOT = bootId();
const START = (Date.now() - 3_600_000) * 1000;
const ESC = '\u001b';

/** Entries built to catch a prefilter that decides on bytes what only the JSON line shows. */
function hostileEntries(): JournalTestEntry[] {
  const out: JournalTestEntry[] = [];
  const add = (e: Omit<JournalTestEntry, 'micros' | 'boot'>): void => {
    out.push({ micros: START + out.length * 1_000_000, boot: BOOT, ...e });
  };
  for (let i = 0; i < 40; i++) add({ unit: `u${i % 3}.service`, priority: 6, message: `ordinary ${i}` });
  add({ unit: 'a.service', priority: 3, message: 'nothing to see', fields: { ONLY_HERE: 'needle-in-a-field' } });
  add({ unit: 'a.service', priority: 6, message: 'Mixed CASE Needle' });
  add({ unit: 'a.service', priority: 6, message: `colour ${ESC}[31mred${ESC}[0m ends` });
  add({ unit: 'a.service', priority: 6, message: 'line one\nnext line here' });
  add({ unit: 'a.service', priority: 6, message: 'say "quoted" and back\\slash' });
  add({ unit: 'a.service', priority: 6, message: 'tab\there' });
  add({ unit: 'a.service', priority: 6, message: Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x20, 0x62, 0x79, 0x74, 0x65, 0x73, 0x0a]) });
  add({ unit: 'a.service', priority: 6, message: 'split', fields: { SPLIT_A: 'left-half', SPLIT_B: 'right-half' } });
  add({ unit: 'a.service', priority: 6, message: 'DİYARBAKIR and the \u212aelvin sign' });
  add({ unit: 'a.service', priority: 6, message: 'café au lait' });
  add({ unit: 'a.service', priority: 2, message: 'a critical one' });
  add({ unit: 'a.service', priority: 6, message: 'x'.repeat(70_000) + ' beyond the cut' });
  for (let i = 0; i < 40; i++) add({ unit: `u${i % 3}.service`, priority: i % 7 === 0 ? 4 : 6, message: `more ${i} needle-free` });
  return out;
}

/** Patterns the prefilter must not change the answer of: [pattern, literal, caseSensitive]. */
const PATTERNS: [string, boolean, boolean][] = [
  ['needle-in-a-field', true, true], // only in a field that is not MESSAGE
  ['NEEDLE', true, false], // case-insensitive literal
  ['needle', false, false], // case-insensitive regular expression
  ['Mixed CASE', true, true],
  ['ordinary \\d+', false, true],
  ['.*', false, true], // no required text: no prefilter
  ['half","SPLIT_B":"right', true, true], // across a field boundary: only the line shows it
  ['left-halfright', true, true], // the two values side by side in the bytes, never in the line
  ['HALFSPLIT', true, false],
  ['[31mred', true, true], // after the escape of ESC in the line (\u001b[31m)
  ['b[31m', true, true], // the escape's own last letter, then the text after it
  ['nnext', true, true], // \n then "next"
  ['one\\nnext', true, true],
  ['u001b', true, true],
  ['\\"quoted\\"', true, true],
  ['error', true, true], // the level of PRIORITY=3
  ['crit', true, false],
  ['time', true, true], // our key
  ['"message":"a', true, true],
  ['T', true, true], // in every time
  [':00', true, true],
  ['\ufffd', true, true], // what the decoder writes for bytes that are not UTF-8
  ['bad', true, true],
  ['i', true, false], // İ lower-cases to i and a dot (the search of files goes by the bytes here: no match)
  ['kelvin', true, false], // the Kelvin sign lower-cases to k (likewise)
  ['café', true, true],
  ['…', true, true], // what a cut value ends with
  ['beyond the cut', true, true], // past the cut: in the bytes, not in the line
  ['_SYSTEMD_UNIT', true, true], // a field name
  ['u1.service', true, true],
  ['tab\there', true, true],
  ['there', true, true], // the t of \\t, then "here"
];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c().catch(() => undefined);
});

function query(pattern: string, literal: boolean, caseSensitive: boolean): SearchQuery {
  return { pattern, literal, caseSensitive, contextLines: 0, maxResults: 1000 };
}

describe('the journal search prefilter', () => {
  it('gives the answers of a search that makes every entry a line, for patterns in fields, across fields, in escapes, levels and times', async () => {
    const { dir, cleanup } = await makeTempDir('suite-logs-prefilter-');
    cleanups.push(cleanup);
    await writeJournal(path.join(dir, 'p.journal'), hostileEntries());
    const config = { journals: [{ kind: 'directory' as const, directory: dir }] };
    const view = { display: 'logs://journal' };
    const options = { signal: new AbortController().signal, deadline: Date.now() + 120_000, limit: 1000, chunkDone: () => undefined };
    let filtered = 0;
    let matched = 0;
    for (const [pattern, literal, caseSensitive] of PATTERNS) {
      const q = query(pattern, literal, caseSensitive);
      if (entryPrefilter(q)) filtered++;
      const fast = await searchJournal(config as never, view as never, q, options);
      const reference = await searchJournal(config as never, view as never, q, { ...options, unfiltered: true });
      expect({ pattern, matches: fast.matches }).toEqual({ pattern, matches: reference.matches });
      if (reference.matches.length > 0) matched++;
    }
    // The comparison means something: most patterns are prefiltered, and most match something.
    expect(filtered).toBeGreaterThanOrEqual(12);
    expect(matched).toBeGreaterThanOrEqual(20);
    // Spot checks against what the entries hold.
    const find = async (pattern: string, literal: boolean, caseSensitive: boolean): Promise<number> => (await searchJournal(config as never, view as never, query(pattern, literal, caseSensitive), options)).matches.length;
    expect(await find('needle-in-a-field', true, true)).toBe(1);
    expect(await find('NEEDLE', true, false)).toBe(42); // the field, the message, and 40 "needle-free"
    expect(await find('left-halfright', true, true)).toBe(0);
    expect(await find('b[31m', true, true)).toBe(1);
    expect(await find('error', true, true)).toBe(1);
    expect(await find('beyond the cut', true, true)).toBe(0);
  });

  it('which patterns are decided on bytes', () => {
    const decided = (pattern: string, literal = true, caseSensitive = true): boolean => entryPrefilter(query(pattern, literal, caseSensitive)) !== undefined;
    expect(decided('ZX81-RARE-JOURNAL')).toBe(true);
    expect(decided('timeout after \\d+ ms', false)).toBe(true);
    expect(decided('failed', true, false)).toBe(true);
    for (const p of ['.*', 'a|b', 'time', 'mess', '2026-12-02', '12:30', 'say "x"', 'a\\b', '…', '\ufffd', 'u001b', '1b', ':', '{}']) expect({ p, decided: decided(p, !p.includes('|') && p !== '.*') }).toEqual({ p, decided: false });
    expect(entryPrefilter({ ...query('ZX81', true, true), contextLines: 2 })).toBeUndefined();
  });

  it('parses the export bytes as ExportParser does, however they are cut into chunks, leaving out only entries without a hit', () => {
    const entries = hostileEntries();
    const bytes = exportFormat(entries.map((e, i) => ({ ...e, fields: { ...e.fields, __CURSOR: `c${i}` } })));
    const all = new ExportParser().push(bytes);
    expect(all).toHaveLength(entries.length);
    for (const needle of ['needle', 'ordinary 1', 'half', 'bytes']) {
      const prefilter = entryPrefilter(query(needle, true, false));
      if (!prefilter) throw new Error(`no prefilter for ${needle}`);
      for (const size of [3, 64, 1000, 65_536, bytes.length]) {
        const parser = new FilteringExportParser(prefilter);
        const got: (Map<string, string[]> | number)[] = [];
        for (let at = 0; at < bytes.length; at += size) got.push(...parser.push(bytes.subarray(at, at + size)));
        let index = 0;
        for (const item of got) {
          if (typeof item === 'number') {
            for (let k = index; k < index + item; k++) expect(JSON.stringify([...(all[k] as Map<string, string[]>).values()]).toLowerCase()).not.toContain(needle);
            index += item;
          } else {
            expect(item).toEqual(all[index]);
            index++;
          }
        }
        expect({ needle, size, index }).toEqual({ needle, size, index: all.length });
        const parsed = got.filter((g) => typeof g !== 'number').length;
        const holding = all.filter((m) => JSON.stringify([...m.entries()]).toLowerCase().includes(needle)).length;
        expect(parsed).toBeGreaterThanOrEqual(holding);
        expect(parsed).toBeLessThan(all.length);
      }
    }
  });

  it('an entry too large to hold (over 1 MiB unfinished, a value over 8 MiB) goes to ExportParser, which skips what is too long: the same fields', () => {
    const prefilter = entryPrefilter(query('needle', true, true));
    if (!prefilter) throw new Error('no prefilter');
    const entries: JournalTestEntry[] = [
      { micros: START, boot: BOOT, message: 'before' },
      { micros: START + 1, boot: BOOT, message: 'long '.repeat(400_000) },
      { micros: START + 2, boot: BOOT, message: Buffer.concat([Buffer.from('huge\n'), Buffer.alloc(9 * 1024 * 1024, 0x61)]) },
      { micros: START + 3, boot: BOOT, message: 'a needle after them' },
    ].map((e, i) => ({ ...e, fields: { __CURSOR: `c${i}` } }));
    const bytes = exportFormat(entries);
    const all = new ExportParser().push(bytes);
    const parser = new FilteringExportParser(prefilter);
    const got: (Map<string, string[]> | number)[] = [];
    for (let at = 0; at < bytes.length; at += 65_536) got.push(...parser.push(bytes.subarray(at, at + 65_536)));
    const expanded = got.flatMap((g) => (typeof g === 'number' ? Array.from({ length: g }, () => undefined) : [g]));
    expect(expanded).toHaveLength(all.length);
    expanded.forEach((m, i) => {
      if (m !== undefined) expect(m).toEqual(all[i]);
    });
    expect(expanded[3]).toEqual(all[3]);
    expect(all[2]?.get('MESSAGE')).toEqual([`[${9 * 1024 * 1024 + 5} bytes left out]`]);
  });
});
