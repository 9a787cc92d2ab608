import { createWriteStream, existsSync } from 'node:fs';
import { link, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

interface Match {
  file: string;
  line: number;
  text: string;
  time?: string;
  level?: string;
  entry?: string;
  before?: string[];
  after?: string[];
}
const matchesOf = (out: { structured: Record<string, unknown> | undefined }): Match[] => (out.structured as { matches: Match[] }).matches;

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe.each(TRANSPORTS)('search_logs (%s)', (transport) => {
  it('finds a regular expression or literal text, with line numbers, times and levels', async () => {
    fx = await fixture({ transport });
    const file = await fx.write(
      'app.log',
      lines(
        '2026-11-21T04:00:00Z INFO user 17 logged in',
        '2026-11-21T04:00:01Z WARN user 17 password expires soon',
        '2026-11-21T04:00:02Z ERROR payment 9931 declined: card expired',
        '2026-11-21T04:00:03Z INFO Payment 9932 accepted',
      ),
    );
    const session = await fx.connect();
    const regex = await session.callTool('search_logs', { pattern: 'payment \\d+ (declined|accepted)' });
    expect(matchesOf(regex)).toEqual([{ file, line: 3, text: '2026-11-21T04:00:02Z ERROR payment 9931 declined: card expired', time: '2026-11-21T04:00:02.000Z', level: 'error' }]);
    const insensitive = await session.callTool('search_logs', { pattern: 'PAYMENT', caseSensitive: false });
    expect(matchesOf(insensitive).map((m) => m.line)).toEqual([3, 4]);
    const literal = await session.callTool('search_logs', { pattern: 'declined: card', literal: true });
    expect(matchesOf(literal).map((m) => m.line)).toEqual([3]);
    const brackets = await session.callTool('search_logs', { pattern: '(declined', literal: true });
    expect(matchesOf(brackets)).toEqual([]);
    expect(brackets.text).toMatch(/^No matches in 1 file/);
  });

  it('filters by level threshold and time range; without a pattern it lists matching entries', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'app.log',
      lines(
        `${isoAgo(120)} ERROR two hours ago`,
        `${isoAgo(50)} WARN fifty minutes ago`,
        `${isoAgo(30)} INFO thirty minutes ago`,
        `${isoAgo(20)} ERROR twenty minutes ago`,
        '  at frame (x.js:1)',
        `${isoAgo(5)} CRITICAL five minutes ago`,
      ),
    );
    const session = await fx.connect();
    const warnings = await session.callTool('search_logs', { level: 'warning' });
    expect(matchesOf(warnings).map((m) => m.text.replace(/^\S+ /, ''))).toEqual(['ERROR two hours ago', 'WARN fifty minutes ago', 'ERROR twenty minutes ago', 'CRITICAL five minutes ago']);
    const lastHour = await session.callTool('search_logs', { level: 'error', since: '1h' });
    expect(matchesOf(lastHour).map((m) => m.level)).toEqual(['error', 'critical']);
    const window = await session.callTool('search_logs', { pattern: 'ago', since: '55m', until: '10m' });
    expect(matchesOf(window).map((m) => m.line)).toEqual([2, 3, 4]);
    // A continuation line carries its entry's level and time.
    const frame = await session.callTool('search_logs', { pattern: 'frame', level: 'error', since: '1h' });
    expect(matchesOf(frame)).toEqual([expect.objectContaining({ line: 5, level: 'error', entry: expect.stringContaining('twenty minutes ago') })]);
    const none = await session.callTool('search_logs', { pattern: 'frame', level: 'critical' });
    expect(matchesOf(none)).toEqual([]);
  });

  it('searches rotated and .gz copies newest first, or only the live file', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines('2026-11-21T04:00:03Z ERROR disk full (live)'));
    await fx.write('app.log.1', lines('2026-11-21T03:00:00Z ERROR disk full (rotated once)'));
    await fx.writeGz('app.log.2.gz', lines('2026-11-21T02:00:00Z INFO fine', '2026-11-21T02:00:01Z ERROR disk full (compressed)'));
    await fx.writeGz('app.log.3.gz', lines('2026-11-21T01:00:00Z ERROR disk full (oldest)'));
    await fx.write('other.txt', lines('disk full but not a log'));
    const session = await fx.connect();
    const all = await session.callTool('search_logs', { pattern: 'disk full', literal: true });
    expect(matchesOf(all).map((m) => [m.file.replace(`${fx!.dir}/`, ''), m.line])).toEqual([
      ['app.log', 1],
      ['app.log.1', 1],
      ['app.log.2.gz', 2],
      ['app.log.3.gz', 1],
    ]);
    expect(all.structured).toMatchObject({ filesSearched: 4, truncated: false, timedOut: false });
    const named = await session.callTool('search_logs', { pattern: 'disk full', literal: true, paths: [fx.file('app.log')] });
    expect(matchesOf(named)).toHaveLength(4);
    const live = await session.callTool('search_logs', { pattern: 'disk full', literal: true, includeRotated: false });
    expect(matchesOf(live).map((m) => m.file)).toEqual([fx.file('app.log')]);
  });

  it('gives context lines before and after, and stops at maxResults saying there are more', async () => {
    fx = await fixture({ transport });
    await fx.write('ctx.log', lines(...Array.from({ length: 50 }, (_, i) => `2026-11-21T04:00:${String(i).padStart(2, '0')}Z INFO step ${i}${i % 10 === 5 ? ' HIT' : ''}`)));
    const session = await fx.connect();
    const out = await session.callTool('search_logs', { pattern: 'HIT', contextLines: 2, maxResults: 3 });
    const found = matchesOf(out);
    expect(found.map((m) => m.line)).toEqual([6, 16, 26]);
    expect(found[0]?.before?.map((l) => l.slice(-6))).toEqual(['step 3', 'step 4']);
    expect(found[0]?.after?.map((l) => l.slice(-6))).toEqual(['step 6', 'step 7']);
    expect(out.structured).toMatchObject({ truncated: true });
    expect(out.text).toMatch(/\[truncated: stopped at maxResults=3/);
    expect(out.text).toContain(`${fx.file('ctx.log')}-4-`);
  });

  it('reports progress while it scans, rotated and .gz copies included', async () => {
    fx = await fixture({ transport });
    // About 10 MiB over three files: many chunks, so progress comes on the way, well before the answer.
    const body = (from: number, count: number): string =>
      lines(...Array.from({ length: count }, (_, i) => `${new Date(Date.UTC(2026, 10, 21) + (from + i) * 1000).toISOString()} INFO request ${from + i} served${(from + i) % 10_000 === 7 ? ' NEEDLE' : ''}`));
    await fx.writeGz('app.log.2.gz', body(0, 20_000));
    await fx.write('app.log.1', body(20_000, 80_000));
    await fx.write('app.log', body(100_000, 80_000));
    const session = await fx.connect();
    const progress: { progress: number; total?: number }[] = [];
    const out = await session.callTool('search_logs', { pattern: 'NEEDLE', literal: true }, { onprogress: (p) => progress.push(p) });
    const every = (file: string, count: number): [string, number][] => Array.from({ length: count / 10_000 }, (_, k) => [file, k * 10_000 + 8]);
    expect(matchesOf(out).map((m) => [m.file.slice(fx!.dir.length + 1), m.line])).toEqual([...every('app.log', 80_000), ...every('app.log.1', 80_000), ...every('app.log.2.gz', 20_000)]);
    // The total is the files' sizes on disk (the .gz compressed). The report that reaches it comes
    // with the answer, and an SDK client drops a progress notification it reads together with the
    // response (over stdio, in one read), so only the reports on the way are asserted.
    const total = progress[0]?.total;
    expect(total).toBeGreaterThan(7 * 1024 * 1024);
    expect(progress[0]?.progress).toBeLessThan(total as number);
    expect(progress.map((p) => p.total)).toEqual(progress.map(() => total));
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
  });

  it('refuses nested repetition and invalid regular expressions, and empty searches, as isError', async () => {
    fx = await fixture({ transport });
    await fx.write('a.log', lines('x'));
    const session = await fx.connect();
    const nested = await session.callTool('search_logs', { pattern: '(a+)+b' });
    expect(nested).toMatchObject({ isError: true });
    expect(nested.text).toMatch(/repeated group that itself repeats \(\(a\+\)\+\).*literal: true/);
    const invalid = await session.callTool('search_logs', { pattern: 'error[' });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toMatch(/^Invalid regular expression "error\[": .*Pass literal: true/);
    const nothing = await session.callTool('search_logs', {});
    expect(nothing.isError).toBe(true);
    expect(nothing.text).toMatch(/Give a pattern, a level, fields, or a time range/);
    const badTime = await session.callTool('search_logs', { pattern: 'x', since: 'yesterday' });
    expect(badTime.text).toMatch(/^since: "yesterday" is not a time\. Use a duration back from now \(15m, 2h, 7d\)/);
  });

  it('stops a regular expression that backtracks catastrophically at the time budget, keeping what it found', async () => {
    fx = await fixture({ transport });
    // (a|aa)*c passes the nesting check but takes exponential time on a run of a's that is not followed
    // by the c (the line has a c, so no prefilter can skip it).
    await fx.write('slow.log', lines('found aac early', ...Array.from({ length: 200 }, () => `${'a'.repeat(40)}bc`)));
    const session = await fx.connect();
    const started = Date.now();
    const out = await session.callTool('search_logs', { pattern: '(a|aa)*c', timeBudgetSeconds: 1 });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ timedOut: true });
    expect(matchesOf(out).map((m) => m.line)).toEqual([1]);
    expect(out.text).toMatch(/time budget of 1 s reached \(the regular expression was still working on one line/);
    await fx.scans(session, 'stopped');
  });

  it('cancels a running search: the worker stops at once', async () => {
    fx = await fixture({ transport });
    await fx.write('slow.log', lines(...Array.from({ length: 500 }, () => `${'a'.repeat(40)}bc`)));
    const session = await fx.connect();
    const controller = new AbortController();
    const call = session.callTool('search_logs', { pattern: '(a|aa)*c', timeBudgetSeconds: 120 }, { signal: controller.signal });
    await fx.scans(session, 'running');
    controller.abort();
    await expect(call).rejects.toThrow();
    await fx.scans(session, 'stopped');
  });
});

describe('search_logs on a 100 MB file', () => {
  let big: Fixture;
  let file: string;
  const LINES = 1_000_000;
  const RARE = [17, 250_001, 999_990];

  beforeAll(async () => {
    big = await fixture();
    file = big.file('big.log');
    const stream = createWriteStream(file);
    const base = Date.parse('2026-11-21T00:00:00Z');
    for (let i = 1; i <= LINES; ) {
      let chunk = '';
      for (let k = 0; k < 20_000 && i <= LINES; k++, i++) {
        const level = i % 100_000 === 0 ? 'CRITICAL' : i % 97 === 0 ? 'ERROR' : 'INFO';
        chunk += `${new Date(base + i * 50).toISOString()} ${level} request ${String(i).padStart(7, '0')} served in ${i % 1000}ms by worker-${i % 8} path=/api/v1/orders/${i % 5000}/items${RARE.includes(i) ? ' token=ZX81-RARE' : ''}\n`;
      }
      if (!stream.write(chunk)) await new Promise<void>((r) => stream.once('drain', () => r()));
    }
    await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
  });
  afterAll(async () => {
    await big.close();
  });

  it('finds a rare literal with exact line numbers, reporting progress', async () => {
    const session = await big.connect();
    const progress: number[] = [];
    const out = await session.callTool('search_logs', { pattern: 'ZX81-RARE', literal: true }, { onprogress: (p) => progress.push(p.progress), timeout: 120_000 });
    expect(matchesOf(out).map((m) => m.line)).toEqual(RARE);
    expect(out.structured).toMatchObject({ filesSearched: 1, truncated: false, timedOut: false });
    expect((out.structured as { bytesScanned: number }).bytesScanned).toBeGreaterThan(100_000_000);
    expect(progress.length).toBeGreaterThan(0);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
  });

  it('finds a case-insensitive regular expression, and filters entries by level over the whole file', async () => {
    const session = await big.connect();
    const regex = await session.callTool('search_logs', { pattern: 'token=zx\\d+-rare', caseSensitive: false }, { timeout: 120_000 });
    expect(matchesOf(regex).map((m) => m.line)).toEqual(RARE);
    const critical = await session.callTool('search_logs', { level: 'critical', maxResults: 50 }, { timeout: 120_000 });
    expect(matchesOf(critical).map((m) => m.line)).toEqual(Array.from({ length: 10 }, (_, k) => (k + 1) * 100_000));
  });

  it('tails the end and reads a time range near the end quickly, whatever the size', async () => {
    const session = await big.connect();
    const tail = await session.callTool('tail_log', { path: file, lines: 2 });
    expect((tail.structured as { lines: string[] }).lines.map((l) => l.split(' ')[3])).toEqual(['0999999', '1000000']);
    const range = await session.callTool('read_log_range', { path: file, since: '2026-11-21T13:53:19.900Z', until: '2026-11-21T13:53:20Z' });
    expect(range.structured).toMatchObject({ firstLine: 999_998, lines: [expect.stringContaining('request 0999998'), expect.stringContaining('request 0999999'), expect.stringContaining('request 1000000')] });
  });

  it('log_stats counts the whole file, reporting progress', async () => {
    const session = await big.connect();
    const progress: number[] = [];
    const out = await session.callTool('log_stats', { paths: [file], topErrors: 1 }, { onprogress: (p) => progress.push(p.progress), timeout: 120_000 });
    const errors = Math.floor(LINES / 97);
    expect(out.structured).toMatchObject({ entries: LINES, levels: { info: LINES - errors - 10, error: errors, critical: 10 }, complete: true, bucket: '15m' });
    expect((out.structured as { topErrors: { pattern: string; count: number }[] }).topErrors).toEqual([
      // Errors and criticals alike (errorLevel: error and above); "worker-1" is an id of letters and digits.
      expect.objectContaining({ pattern: 'request <n> served in <n>ms by <id> path=/api/v<n>/orders/<n>/items', count: errors + 10, level: 'critical' }),
    ]);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toBe((out.structured as { bytesScanned: number }).bytesScanned);
  });

  it('log_stats stops when cancelled, long before the end of its work', async () => {
    // Forty hard links to the file: 4 GB to count (tens of seconds), no disk used. The call is
    // cancelled at its first progress report; the scan must be gone well before it could have ended.
    const copies = big.file('copies');
    await mkdir(copies);
    try {
      for (let i = 0; i < 40; i++) await link(file, path.join(copies, `copy-${i}.log`));
      const session = await big.connect();
      const controller = new AbortController();
      const call = session.callTool('log_stats', { paths: [copies] }, { signal: controller.signal, onprogress: () => controller.abort(), timeout: 120_000 });
      await expect(call).rejects.toThrow();
      await big.scans(session, 'stopped', 5000);
    } finally {
      await rm(copies, { recursive: true, force: true });
    }
  });
});

describe.each(TRANSPORTS)('search_logs prefilters never lose a line (%s)', (transport) => {
  it('finds exactly the lines JavaScript regular expressions match, for patterns whose required text is easy to get wrong', async () => {
    fx = await fixture({ transport });
    const sample = [
      'ac', 'abc', 'abbc', 'color', 'colour', 'colouur', 'bc', 'aabc', 'xyz', 'xxyz', 'yz', 'foobaz', 'barbaz', 'baz', 'foo only', 'bar only',
      'errs', 'errors', 'error', '12 ms', 'ms', 'app.log here', 'applog', 'adef', 'def', 'abc def', 'ABC', 'xABC', 'cd', 'ababcd', 'ab*c', 'ab**c',
      'start here', 'not start', 'the end', 'end not', 'qr', 'qqr', 'café', 'cafe', 'prefix', 'fix', 'foo', 'fox', 'a b', 'a\tb', 'tab\tsep', 'TAB\tSEP',
      'Timeout after 30 s', 'TIMEOUT', 'time out', 'ZX81-RARE', 'zx81-rare', 'Zx81-Rare',
    ];
    await fx.write('tricky.log', lines(...sample));
    const session = await fx.connect();
    const patterns: [string, boolean][] = [
      ['ab?c', true], ['colou?r', true], ['a{0,2}bc', true], ['x+yz', true], ['(foo|bar)baz', true], ['foo|bar', true], ['err(or)?s', true],
      ['\\d+ ms', true], ['\\.log\\b', true], ['[abc]def', true], ['a.c', true], ['\\x41BC', true], ['\\u0041BC', true], ['(?:ab)*cd', true],
      ['ab\\*c', true], ['ab{2}c', true], ['^start', true], ['end$', true], ['q{1}r', true], ['café', true], ['(?<=pre)fix', true],
      ['fo(?!x)o', true], ['a\\sb', true], ['tab\\tsep', true], ['tab\\tsep', false], ['timeout', false], ['ZX81-RARE', false], ['x81-r', false],
    ];
    for (const [pattern, caseSensitive] of patterns) {
      const re = new RegExp(pattern, caseSensitive ? '' : 'i');
      const expected = sample.flatMap((l, i) => (re.test(l) ? [i + 1] : []));
      const out = await session.callTool('search_logs', { pattern, caseSensitive, maxResults: 1000 });
      expect(matchesOf(out).map((m) => m.line), `${pattern} (caseSensitive ${caseSensitive})`).toEqual(expected);
      const literal = await session.callTool('search_logs', { pattern, caseSensitive, literal: true, maxResults: 1000 });
      const plain = sample.flatMap((l, i) => ((caseSensitive ? l : l.toLowerCase()).includes(caseSensitive ? pattern : pattern.toLowerCase()) ? [i + 1] : []));
      expect(matchesOf(literal).map((m) => m.line), `literal ${pattern}`).toEqual(plain);
    }
  });
});

describe.each(TRANSPORTS)('scan workers (%s)', (transport) => {
  it('a worker kept warm takes the next job with nothing left over from the last, and a terminated one is not reused', async () => {
    fx = await fixture({ transport });
    await fx.write('a.log', lines('2026-11-21T04:00:00Z ERROR one', '2026-11-21T04:00:01Z ERROR two', '2026-11-21T04:00:02Z INFO three'));
    await fx.write('slow.log', lines(...Array.from({ length: 50 }, () => `${'a'.repeat(40)}bc`)));
    const session = await fx.connect();
    const first = await session.callTool('search_logs', { pattern: 'ERROR', maxResults: 1, contextLines: 1, paths: [fx.file('a.log')] });
    expect(first.structured).toMatchObject({ truncated: true });
    expect(matchesOf(first).map((m) => [m.line, m.after])).toEqual([[1, ['2026-11-21T04:00:01Z ERROR two']]]);
    const stats = await session.callTool('log_stats', { paths: [fx.file('a.log')] });
    expect(stats.structured).toMatchObject({ entries: 3, levels: { error: 2, info: 1 } });
    const second = await session.callTool('search_logs', { pattern: 'three', paths: [fx.file('a.log')] });
    expect(matchesOf(second).map((m) => m.line)).toEqual([3]);
    expect(second.structured).toMatchObject({ truncated: false });
    const killed = await session.callTool('search_logs', { pattern: '(a|aa)*c', paths: [fx.file('slow.log')], timeBudgetSeconds: 1 });
    expect(killed.structured).toMatchObject({ timedOut: true });
    const after = await session.callTool('search_logs', { pattern: 'two', paths: [fx.file('a.log')] });
    expect(matchesOf(after).map((m) => m.line)).toEqual([2]);
    await fx.scans(session, 'stopped');
  });
});

describe('search_logs while logs disappear (in-process)', () => {
  it('skips a log that disappears during the search with a note, and never fails the whole call', async () => {
    fx = await fixture();
    const content = lines(...Array.from({ length: 200 }, (_, i) => `2026-11-21T04:00:00Z ${i % 50 ? 'INFO' : 'ERROR'} line ${i} needle`));
    const names = Array.from({ length: 30 }, (_, i) => `f${i}.log`);
    for (const name of names) await fx.write(name, content);
    const session = await fx.connect();
    let stop = false;
    // Rotation away and back, over and over: each log is missing for a moment, as in a rotation.
    const churn = (async () => {
      while (!stop) {
        for (const name of names) {
          await rename(fx!.file(name), fx!.file(`${name}.moved`));
          await rename(fx!.file(`${name}.moved`), fx!.file(name));
        }
      }
    })();
    const failures: string[] = [];
    const reasons = new Set<string>();
    const until = Date.now() + 2500;
    try {
      for (let round = 0; Date.now() < until; round++) {
        // Every other round names the files, the others search the directory.
        const paths = round % 2 ? names.map((n) => fx!.file(n)).filter((p) => existsSync(p)) : undefined;
        const out = await session.callTool('search_logs', { pattern: 'needle', literal: true, maxResults: 1, ...(paths ? { paths } : {}) });
        if (out.isError) {
          // A named file may be missing when the call starts: that is the one error a caller can be given.
          if (!/^No such log file or directory: /.test(out.text)) failures.push(out.text);
          continue;
        }
        for (const skip of (out.structured as { skipped: { reason: string }[] }).skipped) reasons.add(skip.reason);
      }
    } finally {
      stop = true;
      await churn;
    }
    expect(failures).toEqual([]);
    // What is skipped is said to be gone, never outside the allowed directories.
    expect([...reasons].filter((r) => !/^gone \(rotated or removed while the request ran\)$/.test(r))).toEqual([]);
  });
});
