import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PathGuard, TimeBudget, ToolError } from '@suite/shared';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchWorkers } from '../src/content-search.js';
import { includeExcludeMatcher } from '../src/globs.js';
import { rootContaining, walkBatches } from '../src/walk.js';
import { searchFile, type FileSearchOutcome, type LineMatch } from './legacy-content-search.js';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

/**
 * search_content's engine (worker threads, raw-byte search, lazy line counts) against the
 * previous release's search (legacy-content-search.ts, driven as the old tool drove it): the same
 * matches in the same order, the same counts, caps and truncation, over a tree of real files made
 * to hit every path: literals, regular expressions with and without a literal, case folding,
 * CRLF, empty lines, a first empty line, no final newline, long lines, chunk boundaries, binary
 * content in the first and in a later chunk, invalid UTF-8, and the caps with context.
 */

interface Args {
  pattern: string;
  literal?: boolean;
  caseSensitive?: boolean;
  contextLines?: number;
  maxResults?: number;
  maxFileBytes?: number;
  include?: string[];
  exclude?: string[];
  respectGitignore?: boolean;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The old tool's loop around the old file search, as it was. */
async function legacySearch(dir: string, target: string, input: Args): Promise<Record<string, unknown>> {
  const args = { literal: false, caseSensitive: true, contextLines: 0, maxResults: 100, maxFileBytes: 10 * 1024 * 1024, include: [], exclude: [], respectGitignore: true, ...input };
  const guard = new PathGuard([dir]);
  const source = args.literal ? escapeRegExp(args.pattern) : args.pattern;
  const flags = args.caseSensitive ? '' : 'i';
  const lineTest = new RegExp(source, flags);
  const chunkRegex = new RegExp(source, `${flags}m`);
  const chunkTest =
    args.literal && args.caseSensitive ? (text: string) => text.includes(args.pattern) : (text: string) => chunkRegex.test(text.includes('\r') ? text.replace(/\r(?=\n)/g, '') : text);
  const budget = new TimeBudget(new AbortController().signal, 600_000, () => ToolError.timeout('out of time'));
  const found: (LineMatch & { path: string })[] = [];
  const counts = { filesSearched: 0, filesMatched: 0, skippedBinary: 0, skippedTooLarge: 0, skippedUnreadable: 0 };
  let truncated = false;
  const options = () => ({ lineTest, chunkTest, contextLines: args.contextLines, maxFileBytes: args.maxFileBytes, maxMatches: args.maxResults - found.length + 1, budget });
  const record = (relative: string, outcome: FileSearchOutcome): void => {
    if (outcome.kind === 'binary') counts.skippedBinary++;
    else if (outcome.kind === 'too-large') counts.skippedTooLarge++;
    else if (outcome.kind === 'unreadable') counts.skippedUnreadable++;
    else {
      counts.filesSearched++;
      if (outcome.matches.length > 0) counts.filesMatched++;
      for (const m of outcome.matches) {
        if (found.length >= args.maxResults) {
          truncated = true;
          return;
        }
        found.push({ path: relative, ...m });
      }
    }
  };
  if ((await stat(target)).isFile()) {
    record(target, await searchFile(guard, target, options()));
  } else {
    const filters = includeExcludeMatcher(args.include, args.exclude);
    const gitignoreRoot = rootContaining(guard.directories, target);
    walk: for await (const batch of walkBatches(target, {
      exclude: (relative, isDir, name) => filters.excluded(relative, name) || (!isDir && !filters.included(relative, name)),
      respectGitignore: args.respectGitignore,
      ...(gitignoreRoot ? { gitignoreRoot } : {}),
    })) {
      for (const entry of batch.entries) {
        if (entry.type !== 'file') continue;
        if (found.length >= args.maxResults) {
          truncated = true;
          break walk;
        }
        record(entry.relative, await searchFile(guard, entry.path, options()));
      }
    }
  }
  return { path: target, matches: found, ...counts, truncated };
}

/** A deterministic pseudo-random sequence (tests must repeat exactly). */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const WORDS = ['needle', 'Needle', 'NEEDLE', 'neeedle 42', 'haystack', 'hay', 'x123x', 'ZQX-RARE-7', 'zqx-rare-', 'tab\there', 'naïve', '', 'end'];

function line(next: () => number): string {
  const n = Math.floor(next() * 6);
  return Array.from({ length: n }, () => WORDS[Math.floor(next() * WORDS.length)]).join(' ');
}

async function makeTree(root: string): Promise<void> {
  const next = random(42);
  for (let d = 0; d < 6; d++) {
    const dir = path.join(root, `d${d}`, d % 2 ? 'deep' : '');
    await mkdir(dir, { recursive: true });
    for (let f = 0; f < 25; f++) {
      const lines = Array.from({ length: 1 + Math.floor(next() * 40) }, () => line(next));
      const crlf = f % 7 === 3;
      let text = lines.join(crlf ? '\r\n' : '\n');
      if (f % 5 !== 0) text += crlf ? '\r\n' : '\n';
      if (f % 11 === 4) text = `\n${text}`;
      await writeFile(path.join(dir, `f${f}.${f % 3 ? 'txt' : 'ts'}`), text);
    }
  }
  const special = path.join(root, 'special');
  await mkdir(special);
  // Several chunks (256 KiB each), matches on both sides of the cuts, a long line cut for display.
  const big = Array.from({ length: 30_000 }, (_, i) => (i % 997 === 0 ? `row ${i} needle ${'.'.repeat(i % 3 === 0 ? 700 : 5)} tail needle` : `row ${i} ok`));
  await writeFile(path.join(special, 'big.txt'), `${big.join('\n')}\n`);
  await writeFile(path.join(special, 'binary-first.dat'), Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2])]));
  await writeFile(path.join(special, 'binary-later.dat'), Buffer.concat([Buffer.from(`needle first\n${'filler text\n'.repeat(40_000)}`), Buffer.from([0]), Buffer.from('needle\n')]));
  await writeFile(path.join(special, 'latin1.txt'), Buffer.concat([Buffer.from('caf'), Buffer.from([0xe9]), Buffer.from(' needle\n\xff\xfe needle\n', 'latin1')]));
  await writeFile(path.join(special, 'one-long-line.txt'), `${'a'.repeat(1_500_000)} needle ${'b'.repeat(10)}\nneedle after\n`);
  await writeFile(path.join(special, 'only-newline.txt'), '\n');
  await writeFile(path.join(special, 'first-empty.txt'), '\nneedle on two\n');
  await writeFile(path.join(special, 'empty.txt'), '');
}

const QUERIES: Args[] = [
  { pattern: 'needle', literal: true },
  { pattern: 'NEEDLE', literal: true, caseSensitive: false },
  { pattern: 'needle', maxResults: 10_000 },
  { pattern: 'ne+dle \\d+' },
  { pattern: 'zqx-rare-\\d', caseSensitive: false },
  { pattern: '\\d{3}x' },
  { pattern: '^needle', contextLines: 2 },
  { pattern: '^$', maxResults: 10_000 },
  { pattern: 'end$', contextLines: 1, maxResults: 10_000 },
  { pattern: 'hay(stack)?', contextLines: 3, maxResults: 37 },
  { pattern: 'needle', contextLines: 2, maxResults: 5 },
  { pattern: 'needle', contextLines: 4, maxResults: 1 },
  { pattern: 'needle', literal: true, maxResults: 60, contextLines: 1 },
  { pattern: 'na.ve|tab', caseSensitive: false, contextLines: 1, maxResults: 10_000 },
  { pattern: 'needle', maxFileBytes: 300 },
  { pattern: 'row \\d+ needle', include: ['*.txt'], contextLines: 1 },
];

describe('search_content against the previous release', () => {
  let h: ReadSideHarness;
  let root: string;
  beforeAll(async () => {
    h = await startReadSide();
    root = path.join(h.dir, 'tree');
    await makeTree(root);
  }, 60_000);
  afterAll(async () => h.close());

  it.each(QUERIES.map((q) => [JSON.stringify(q), q] as const))('%s: the same answer', async (_, query) => {
    const out = await h.session.callTool('search_content', { path: root, respectGitignore: false, ...query });
    expect(out.isError, out.text).toBe(false);
    expect(out.structured).toEqual(await legacySearch(h.dir, root, { respectGitignore: false, ...query }));
  });

  it('the same answer for single files, each of the special ones', async () => {
    for (const name of ['big.txt', 'binary-later.dat', 'latin1.txt', 'one-long-line.txt', 'only-newline.txt', 'first-empty.txt', 'empty.txt']) {
      const file = path.join(root, 'special', name);
      for (const query of [{ pattern: 'needle' }, { pattern: '^$' }, { pattern: '^', contextLines: 1 }, { pattern: 'needle', literal: true, contextLines: 2, maxResults: 3 }]) {
        const out = await h.session.callTool('search_content', { path: file, ...query });
        expect(out.structured, `${name} ${JSON.stringify(query)}`).toEqual(await legacySearch(h.dir, file, query));
      }
    }
  });

  it('skips binary files whether the zero is in the first block or a later one', async () => {
    const out = await h.session.callTool('search_content', { path: path.join(root, 'special'), pattern: 'needle', include: ['*.dat'] });
    expect(out.structured).toMatchObject({ skippedBinary: 2, filesSearched: 0, matches: [] });
  });
});

describe('search_content workers', () => {
  let h: ReadSideHarness;
  let wide: string;
  beforeAll(async () => {
    h = await startReadSide();
    wide = path.join(h.dir, 'wide');
    for (let d = 0; d < 60; d++) {
      await mkdir(path.join(wide, `d${d}`), { recursive: true });
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(path.join(wide, `d${d}`, `f${f}.txt`), `${'filler line\n'.repeat(200)}last ${d}-${f}\n`)));
    }
  }, 60_000);
  afterAll(async () => h.close());

  it('answers a cancellation within 100 ms, mid-search', async () => {
    const controller = new AbortController();
    // A regular expression without a literal: every line of 6,000 files is tested, long enough to cancel it mid-way.
    const call = h.session.callTool('search_content', { path: wide, pattern: '(?:l|x)a(?:s|y)t 59-99$' }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 30));
    const aborted = performance.now();
    controller.abort('enough');
    await expect(call).rejects.toThrow();
    expect(performance.now() - aborted).toBeLessThan(100);
  });

  it('shares at most one worker per core between concurrent calls, and gives the same answers', async () => {
    const calls = await Promise.all(Array.from({ length: 20 }, (_, i) => h.session.callTool('search_content', { path: wide, pattern: `last ${i}-7$` })));
    calls.forEach((out, i) => expect(out.structured).toMatchObject({ matches: [{ path: `d${i}/f7.txt`, line: 201, text: `last ${i}-7` }], filesSearched: 6000 }));
    expect(searchWorkers().size).toBeLessThanOrEqual(Math.min(4, (await import('node:os')).availableParallelism()));
  });

  it('caps matches across files that each match on every line, with context, as the previous release did', async () => {
    const dense = path.join(h.dir, 'dense');
    await mkdir(dense);
    await Promise.all(Array.from({ length: 300 }, (_, f) => writeFile(path.join(dense, `f${String(f).padStart(3, '0')}.txt`), Array.from({ length: 40 }, (_, i) => `hit ${f}-${i}`).join('\n'))));
    for (const query of [{ pattern: 'hit', maxResults: 1000, contextLines: 2 }, { pattern: 'hit \\d+-3\\d', maxResults: 333, contextLines: 5 }, { pattern: 'hit', maxResults: 10_000 }]) {
      const out = await h.session.callTool('search_content', { path: dense, ...query });
      expect(out.structured, JSON.stringify(query)).toEqual(await legacySearch(h.dir, dense, query));
    }
  });

  it('stops at maxResults across files, and says there may be more', async () => {
    const out = await h.session.callTool('search_content', { path: wide, pattern: 'last', maxResults: 150 });
    expect(out.structured).toMatchObject({ truncated: true, filesMatched: 150 });
    expect(out.structured).toEqual(await legacySearch(h.dir, wide, { pattern: 'last', maxResults: 150 }));
  });
});
