import { afterEach, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

interface Range {
  path: string;
  format: string;
  firstLine?: number;
  lines: string[];
  more: boolean;
  timedOut: boolean;
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const T0 = Date.UTC(2026, 10, 21);
const at = (second: number): string => new Date(T0 + second * 1000).toISOString();
const ENTRIES = 6000;

/**
 * A log of one entry a second, every 500th an error with a two-line stack trace: about 400 KB, so
 * a time range is found by bisection (it reads linearly below 64 KiB), and the .gz copy of the same
 * text is read from its start.
 */
function sample(): { text: string; all: string[]; lineOf: (entry: number) => number } {
  const all: string[] = [];
  const first: number[] = [];
  for (let i = 0; i < ENTRIES; i++) {
    first.push(all.length + 1);
    if (i % 500 === 250) all.push(`${at(i)} ERROR order ${i} failed: card declined`, 'java.lang.IllegalStateException: declined', `\tat Shop.pay(Shop.java:${i})`);
    else all.push(`${at(i)} INFO request ${i} served in ${i % 90} ms`);
  }
  return { text: lines(...all), all, lineOf: (entry) => first[entry] as number };
}

async function range(session: TestSession, args: Record<string, unknown>): Promise<Range & { text: string }> {
  const out = await session.callTool('read_log_range', args);
  expect(out.isError, out.text).toBe(false);
  return { ...(out.structured as unknown as Range), text: out.text };
}

describe.each(TRANSPORTS)('read_log_range (%s)', (transport) => {
  it('by line: a range, a default length, the last lines, past the end, and maxLines with where to continue', async () => {
    fx = await fixture({ transport });
    const { text, all } = sample();
    const file = await fx.write('app.log', text);
    const session = await fx.connect();
    const some = await range(session, { path: file, startLine: 10, endLine: 12 });
    expect(some).toMatchObject({ path: file, format: 'iso8601', firstLine: 10, lines: all.slice(9, 12), more: false, timedOut: false });
    expect(some.text.split('\n')[0]).toBe(`Lines 10-12 of ${file}:`);
    expect((await range(session, { path: file, startLine: 250, maxLines: 4 })).lines).toEqual(all.slice(249, 253));
    expect(await range(session, { path: file, startLine: all.length - 1 })).toMatchObject({ firstLine: all.length - 1, lines: all.slice(-2), more: false });
    const past = await range(session, { path: file, startLine: all.length + 5 });
    expect(past).toMatchObject({ lines: [], more: false });
    expect(past.firstLine).toBeUndefined();
    expect(past.text).toBe(`${file} has fewer than ${all.length + 5} lines.`);
    const capped = await range(session, { path: file, startLine: 1, endLine: 1000, maxLines: 100 });
    expect(capped).toMatchObject({ firstLine: 1, lines: all.slice(0, 100), more: true });
    expect(capped.text).toMatch(/\n\[more: continue with startLine 101\]$/);
  });

  it('by time: the entries between since and until with their stack traces, deep in the file', async () => {
    fx = await fixture({ transport });
    const { text, all, lineOf } = sample();
    const file = await fx.write('app.log', text);
    const session = await fx.connect();
    // Around the error at second 4750: the entries before and after, and its two trace lines.
    const deep = await range(session, { path: file, since: at(4749), until: at(4751) });
    expect(deep).toMatchObject({ firstLine: lineOf(4749), lines: all.slice(lineOf(4749) - 1, lineOf(4752) - 1), more: false });
    expect(deep.lines).toHaveLength(5);
    expect(deep.lines[2]).toBe('java.lang.IllegalStateException: declined');
    // Open-ended either way.
    expect(await range(session, { path: file, since: at(ENTRIES - 2) })).toMatchObject({ firstLine: lineOf(ENTRIES - 2), lines: all.slice(-2) });
    expect(await range(session, { path: file, until: at(2) })).toMatchObject({ firstLine: 1, lines: all.slice(0, 3) });
    // Between two entries: nothing, said so.
    const none = await range(session, { path: file, since: '2026-11-21T00:00:00.200Z', until: '2026-11-21T00:00:00.800Z' });
    expect(none).toMatchObject({ lines: [], more: false });
    expect(none.text).toBe(`No entries of ${file} fall in that time range.`);
    // More than maxLines in the range.
    const capped = await range(session, { path: file, since: at(1000), until: at(2000), maxLines: 50 });
    expect(capped).toMatchObject({ firstLine: lineOf(1000), lines: all.slice(lineOf(1000) - 1, lineOf(1000) + 49), more: true });
  });

  it('by time with durations back from now', async () => {
    fx = await fixture({ transport });
    const now = Date.now();
    const file = await fx.write('recent.log', lines(`${isoAgo(90, now)} INFO ninety`, `${isoAgo(45, now)} WARN forty-five`, `${isoAgo(20, now)} ERROR twenty`, '  at x.js:1', `${isoAgo(5, now)} INFO five`));
    const session = await fx.connect();
    const window = await range(session, { path: file, since: '1h', until: '10m' });
    expect(window).toMatchObject({ firstLine: 2, lines: [expect.stringMatching(/WARN forty-five$/), expect.stringMatching(/ERROR twenty$/), '  at x.js:1'] });
  });

  it('reads a .gz copy the same way: the same lines, numbers and time ranges as the plain text', async () => {
    fx = await fixture({ transport });
    const { text, all, lineOf } = sample();
    const plain = await fx.write('app.log', text);
    const gz = await fx.writeGz('app.log.1.gz', text);
    const session = await fx.connect();
    const queries: Record<string, unknown>[] = [
      { startLine: 10, endLine: 12 },
      { startLine: all.length - 1 },
      { startLine: 1, endLine: 1000, maxLines: 100 },
      { since: at(4749), until: at(4751) },
      { since: at(ENTRIES - 2) },
      { since: at(1000), until: at(2000), maxLines: 50 },
    ];
    for (const query of queries) {
      const fromGz = await range(session, { path: gz, ...query });
      const fromPlain = await range(session, { path: plain, ...query });
      expect({ ...fromGz, path: plain, text: '' }, JSON.stringify(query)).toEqual({ ...fromPlain, text: '' });
      expect(fromGz.lines.length, JSON.stringify(query)).toBeGreaterThan(0);
    }
    expect((await range(session, { path: gz, since: at(4749), until: at(4751) })).firstLine).toBe(lineOf(4749));
    expect((await range(session, { path: gz, startLine: all.length + 1 })).lines).toEqual([]);
  });
});
