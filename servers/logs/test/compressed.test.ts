import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolError, type TestSession } from '@suite/test-kit';
import { fixture, lines, type Fixture } from './helpers.js';

/**
 * .gz logs that are too large to decompress within a tail's budget, cut short, or corrupt: what
 * tail_log, read_log_range, resource reads and log_stats say about them. In-process only: the
 * small tail budget is a setting the command line does not have.
 */

const uriOf = (file: string): string => `logs://file${file}`;

/** About 3 MB of text: several of the forward reader's 512 KiB chunks. */
const BIG = Array.from({ length: 40_000 }, (_, i) => `2026-11-21T04:${String(Math.floor(i / 1000) % 60).padStart(2, '0')}:00Z INFO line ${String(i).padStart(5, '0')} ${'x'.repeat(40)}`);
const SMALL = Array.from({ length: 3000 }, (_, i) => `2026-11-21T05:00:00Z ERROR request ${i} failed ${'abc'.repeat(i % 7)}`);

describe('compressed logs whose end a tail cannot reach in its budget (in-process)', () => {
  let fast: Fixture;
  let slow: Fixture;
  let fastSession: TestSession;
  let slowSession: TestSession;
  beforeAll(async () => {
    const gz = gzipSync(Buffer.from(lines(...BIG)));
    // A budget of 1 ms: the first chunk already passes it.
    slow = await fixture({ limits: { tailBudgetMs: 1 } });
    fast = await fixture();
    await writeFile(slow.file('big.log.1.gz'), gz);
    await writeFile(fast.file('big.log.1.gz'), gz);
    slowSession = await slow.connect();
    fastSession = await fast.connect();
  });
  afterAll(async () => {
    await slow.close();
    await fast.close();
  });

  it('tail_log says the end was not reached and shows no middle lines as the last ones', async () => {
    const out = await slowSession.callTool('tail_log', { path: slow.file('big.log.1.gz'), lines: 10 });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ lines: [], reachedEnd: false, reachedStart: false, stoppedEarly: 'time-budget' });
    expect(out.text).toMatch(/^\[the end of .*big\.log\.1\.gz was not reached: it is compressed, so it can only be read from its start, and 0\.001 s decompressed \d+ lines of it without reaching the end\. No lines are shown/);
    expect(out.text).not.toMatch(/INFO line/);
  });

  it('the resource read says so too, instead of labelling the lines read as the last ones', async () => {
    const { text } = await slowSession.readResource(uriOf(slow.file('big.log.1.gz')));
    expect(text).toMatch(/^\[the end of this log was not reached: it is compressed/);
    expect(text).not.toMatch(/INFO line|the last lines/);
  });

  it('within the budget, the tail of a large .gz file is its true end', async () => {
    const out = await fastSession.callTool('tail_log', { path: fast.file('big.log.1.gz'), lines: 100 });
    expect(out.structured).toMatchObject({ lines: BIG.slice(-100), reachedEnd: true, cutByBytes: false });
    const { text } = await fastSession.readResource(uriOf(fast.file('big.log.1.gz')));
    const got = text.split('\n');
    expect(got[0]).toMatch(/^\[the last lines, at most 64\.0 KiB/);
    expect(got.slice(1)).toEqual(BIG.slice(-(got.length - 1)));
  });
});

describe('truncated and corrupt .gz logs (in-process)', () => {
  let fx: Fixture;
  let session: TestSession;
  const whole = gzipSync(Buffer.from(lines(...SMALL)));
  beforeAll(async () => {
    fx = await fixture();
    await fx.write('cut.log.1.gz', whole.subarray(0, whole.length >> 1));
    // Bytes flipped in the middle: the stream decompresses to garbage and fails its check at the end.
    const corrupt = Buffer.from(whole);
    for (let i = corrupt.length >> 1; i < (corrupt.length >> 1) + 64; i++) corrupt[i] = (corrupt[i] as number) ^ 0x5a;
    await fx.write('bad.log.1.gz', corrupt);
    await fx.write('fake.log.1.gz', 'this was never gzip\n');
    session = await fx.connect();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('tail_log, read_log_range and resource reads give a clear error, not a failure', async () => {
    for (const [name, why] of [
      ['cut.log.1.gz', /is not valid gzip data: it is truncated \(its compressed stream ends early/],
      ['bad.log.1.gz', /is not valid gzip data: it is corrupt\. search_logs reads the part before the damage\.$/],
      ['fake.log.1.gz', /is not valid gzip data: it is corrupt/],
    ] as const) {
      const file = fx.file(name);
      const tail = await session.callTool('tail_log', { path: file });
      expect(tail.isError, name).toBe(true);
      expect(tail.text).toMatch(why);
      expect(tail.text.startsWith(file)).toBe(true);
      const filtered = await session.callTool('tail_log', { path: file, level: 'error' });
      expect(filtered.text).toMatch(why);
      const range = await session.callTool('read_log_range', { path: file, startLine: 2900 });
      expect(range).toMatchObject({ isError: true, text: expect.stringMatching(why) });
      expect(await protocolError(session.readResource(uriOf(file)))).toMatchObject({ code: -32602, message: expect.stringMatching(why) });
    }
  });

  it('log_stats counts a truncated file up to where it ends, a corrupt one not at all, and says which', async () => {
    const out = await session.callTool('log_stats', { paths: [fx.file('cut.log.1.gz'), fx.file('bad.log.1.gz'), fx.file('fake.log.1.gz')] });
    expect(out.isError).toBe(false);
    const s = out.structured as { entries: number; files: { file: string; lines?: number; note?: string; skipped?: string }[]; first?: string; last?: string };
    const cut = s.files.find((f) => f.file.endsWith('cut.log.1.gz'));
    expect(cut?.note).toMatch(/^truncated gzip data: counted up to where it ends \(\d+ lines\)$/);
    expect(cut?.lines).toBeGreaterThan(0);
    expect(cut?.lines).toBeLessThan(SMALL.length);
    // Every entry counted is a line of the truncated file (the corrupt ones add nothing).
    expect(s.entries).toBeLessThanOrEqual(cut?.lines as number);
    expect(s.entries).toBeGreaterThan(0);
    expect(s.files.find((f) => f.file.endsWith('bad.log.1.gz'))).toMatchObject({ skipped: 'not valid gzip data (corrupt): not counted' });
    expect(s.files.find((f) => f.file.endsWith('fake.log.1.gz'))).toMatchObject({ skipped: 'not valid gzip data (corrupt): not counted' });
    expect(out.text).toMatch(new RegExp(`^${s.entries} entries in 1 file `));
    expect(s.first).toBe('2026-11-21T05:00:00.000Z');
    expect(s.last).toBe('2026-11-21T05:00:00.000Z');
  });

  it('log_stats leaves timestamps that cannot be right out of the timeline', async () => {
    await fx.write('odd.log', lines('2026-11-21T05:00:00Z ERROR fine', '5026-11-21T05:00:00Z ERROR from a damaged clock', '1003-01-01T00:00:00Z ERROR garbage'));
    const out = await session.callTool('log_stats', { paths: [fx.file('odd.log')] });
    expect(out.structured).toMatchObject({ entries: 3, withoutTime: 2, implausibleTimes: 2, first: '2026-11-21T05:00:00.000Z', last: '2026-11-21T05:00:00.000Z' });
    expect(out.text).toMatch(/2 of them have a timestamp that cannot be right/);
    expect(out.text).not.toMatch(/5026|1003/);
  });
});

describe('.gz logs that hold another compression format (in-process)', () => {
  let fx: Fixture;
  let session: TestSession;
  const text = Buffer.from(lines(...SMALL.slice(0, 50)));
  // Real data from the real tools: what an operator finds after a compresscmd changed and the extension did not.
  const FORMATS = [
    ['zstd', ['zstd', '-q', '-c']],
    ['xz', ['xz', '-c']],
    ['bzip2', ['bzip2', '-c']],
  ] as const;
  beforeAll(async () => {
    fx = await fixture();
    for (const [format, [cmd, ...args]] of FORMATS) await fx.write(`${format}.log.1.gz`, execFileSync(cmd, args, { input: text }));
    session = await fx.connect();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('names the real format, in every tool and the resource, instead of calling it corrupt', async () => {
    for (const [format] of FORMATS) {
      const file = fx.file(`${format}.log.1.gz`);
      const expected = new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not gzip data: it holds ${format} data under a \\.gz name, which this server does not decompress\\. Decompress it with ${format} tools`);
      const tail = await session.callTool('tail_log', { path: file });
      expect(tail).toMatchObject({ isError: true, text: expect.stringMatching(expected) });
      expect(tail.text).not.toMatch(/corrupt|before the damage/);
      const range = await session.callTool('read_log_range', { path: file, startLine: 1 });
      expect(range).toMatchObject({ isError: true, text: expect.stringMatching(expected) });
      expect(await protocolError(session.readResource(uriOf(file)))).toMatchObject({ code: -32602, message: expect.stringMatching(expected) });
    }
    const stats = await session.callTool('log_stats', { paths: FORMATS.map(([format]) => fx.file(`${format}.log.1.gz`)) });
    const files = (stats.structured as { files: { file: string; skipped?: string }[] }).files;
    for (const [format] of FORMATS) expect(files.find((f) => f.file.endsWith(`${format}.log.1.gz`))).toMatchObject({ skipped: `not gzip data (${format} data under a .gz name): not counted` });
    const search = await session.callTool('search_logs', { pattern: 'request', paths: FORMATS.map(([format]) => fx.file(`${format}.log.1.gz`)) });
    expect(search.isError, search.text).toBe(false);
    const skipped = (search.structured as { skipped: { file: string; reason: string }[] }).skipped;
    for (const [format] of FORMATS) expect(skipped.find((f) => f.file.endsWith(`${format}.log.1.gz`))?.reason).toBe(`not gzip data (${format} data under a .gz name): not searched`);
    expect(search.text).not.toMatch(/before the damage/);
  });
});
