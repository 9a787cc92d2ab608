import { readFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/server.js';
import { TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

/** The backward reader's chunk size (src/tail.ts) and the forward one (src/chunks.ts). */
const BACKWARD_CHUNK = 64 * 1024;
const FORWARD_CHUNK = 512 * 1024;

function isContinuationByte(b: number | undefined): boolean {
  return b !== undefined && (b & 0xc0) === 0x80;
}

describe.each(TRANSPORTS)('tail_log (%s)', (transport) => {
  it('returns the last lines of a file many chunks long, exactly', async () => {
    fx = await fixture({ transport });
    const all = Array.from({ length: 20_000 }, (_, i) => `${isoAgo(20_000 - i)} INFO line ${i}`);
    await fx.write('big.log', lines(...all));
    const session = await fx.connect();
    const out = await session.callTool('tail_log', { path: fx.file('big.log'), lines: 3 });
    expect(out.isError).toBe(false);
    expect(out.text).toBe(all.slice(-3).join('\n'));
    expect(out.structured).toMatchObject({ format: 'iso8601', entries: 3, reachedStart: false, cutByBytes: false });
    const more = await session.callTool('tail_log', { path: fx.file('big.log'), lines: 2500 });
    expect((more.structured as { lines: string[] }).lines).toEqual(all.slice(-2500));
  });

  it('never splits a multi-byte UTF-8 character, though characters straddle every chunk boundary', async () => {
    fx = await fixture({ transport });
    // Lines of 4-byte emoji (401 bytes with the newline) and of 3- and 2-byte characters (501 bytes): boundaries fall inside characters.
    const all = Array.from({ length: 1200 }, (_, i) => `${i % 2 ? '😀'.repeat(100) : `日本語ログ${'é'.repeat(5)}`.repeat(20)}`.slice(0, 200));
    const file = await fx.write('utf8.log', lines(...all));
    const bytes = await readFile(file);
    const backward = [1, 2, 3].map((k) => bytes.length - k * BACKWARD_CHUNK);
    // The test only proves something if boundaries really are inside characters.
    expect(backward.filter((b) => isContinuationByte(bytes[b])).length).toBeGreaterThanOrEqual(2);
    const session = await fx.connect();
    const out = await session.callTool('tail_log', { path: file, lines: 500 });
    const got = (out.structured as { lines: string[] }).lines;
    expect(got).toEqual(all.slice(-500));
    expect(out.text).not.toContain('\uFFFD');
  });

  it('keeps multi-byte text intact across the forward chunks of a search and a range read', async () => {
    fx = await fixture({ transport });
    // Over 2 MiB of lines with 2-, 3- and 4-byte characters; reads end every 512 KiB, inside them.
    const all = Array.from({ length: 9000 }, (_, i) => `${i} ${'Grüße aus Köln — 東京 🚀 '.repeat(8)}${i % 1000 === 0 ? 'NEEDLE' : ''}`);
    const file = await fx.write('wide.log', lines(...all));
    const bytes = await readFile(file);
    expect(bytes.length).toBeGreaterThan(4 * FORWARD_CHUNK);
    expect([1, 2, 3, 4].filter((k) => isContinuationByte(bytes[k * FORWARD_CHUNK])).length).toBeGreaterThanOrEqual(2);
    const session = await fx.connect();
    const found = await session.callTool('search_logs', { pattern: 'NEEDLE', literal: true, paths: [file] });
    const matches = (found.structured as { matches: { line: number; text: string }[] }).matches;
    expect(matches.map((m) => m.line)).toEqual([1, 1001, 2001, 3001, 4001, 5001, 6001, 7001, 8001]);
    expect(found.text).not.toContain('\uFFFD');
    // Lines read forward right around the first read boundary.
    const lineAtBoundary = bytes.subarray(0, FORWARD_CHUNK).toString('latin1').split('\n').length;
    const range = await session.callTool('read_log_range', { path: file, startLine: lineAtBoundary - 2, endLine: lineAtBoundary + 2 });
    expect((range.structured as { lines: string[] }).lines).toEqual(all.slice(lineAtBoundary - 3, lineAtBoundary + 2));
    expect(range.text).not.toContain('\uFFFD');
  });

  it('filters by level and keeps each entry with its stack trace, newest last', async () => {
    fx = await fixture({ transport });
    const body: string[] = [];
    for (let i = 0; i < 3000; i++) {
      body.push(`${isoAgo(3000 - i)} ${i % 700 === 0 ? 'ERROR' : 'INFO'} event ${i}`);
      if (i % 700 === 0) body.push('java.lang.RuntimeException: boom', `\tat App.handle(App.java:${i})`);
    }
    await fx.write('app.log', lines(...body));
    const session = await fx.connect();
    const out = await session.callTool('tail_log', { path: fx.file('app.log'), lines: 2, level: 'error' });
    expect(out.structured).toMatchObject({ entries: 2 });
    expect((out.structured as { lines: string[] }).lines).toEqual([
      expect.stringMatching(/ERROR event 2100$/),
      'java.lang.RuntimeException: boom',
      '\tat App.handle(App.java:2100)',
      expect.stringMatching(/ERROR event 2800$/),
      'java.lang.RuntimeException: boom',
      '\tat App.handle(App.java:2800)',
    ]);
    const grep = await session.callTool('tail_log', { path: fx.file('app.log'), lines: 10, grep: 'APP.JAVA:1400' });
    expect((grep.structured as { lines: string[] }).lines).toEqual([expect.stringMatching(/ERROR event 1400$/), 'java.lang.RuntimeException: boom', '\tat App.handle(App.java:1400)']);
    const since = await session.callTool('tail_log', { path: fx.file('app.log'), lines: 100, since: '5m' });
    expect((since.structured as { lines: string[] }).lines.length).toBeGreaterThanOrEqual(4);
    expect((since.structured as { lines: string[] }).lines.length).toBeLessThanOrEqual(6);
  });

  it('reads the end of a .gz log, CRLF lines, a last line without newline, and an empty file', async () => {
    fx = await fixture({ transport });
    const all = Array.from({ length: 5000 }, (_, i) => `${isoAgo(5000 - i)} INFO compressed ${i}`);
    await fx.writeGz('old.log.2.gz', lines(...all));
    await fx.write('crlf.log', 'first\r\nsecond\r\nthird');
    await fx.write('empty.log', '');
    const session = await fx.connect();
    const gz = await session.callTool('tail_log', { path: fx.file('old.log.2.gz'), lines: 2 });
    expect(gz.text).toBe(all.slice(-2).join('\n'));
    const crlf = await session.callTool('tail_log', { path: fx.file('crlf.log'), lines: 2 });
    expect((crlf.structured as { lines: string[] }).lines).toEqual(['second', 'third']);
    const empty = await session.callTool('tail_log', { path: fx.file('empty.log') });
    expect(empty).toMatchObject({ isError: false, structured: { lines: [], reachedStart: true } });
    expect(empty.text).toMatch(/is empty/);
  });

  it('caps the answer in bytes, keeping the newest whole lines (one huge line is cut at a character boundary)', async () => {
    fx = await fixture({ transport });
    // The default cap (as the bin has it): a last line of twice that many bytes of 2-byte characters.
    const cap = DEFAULT_LIMITS.maxOutputBytes;
    await fx.write('long.log', lines(...Array.from({ length: 200 }, (_, i) => `${i} ${'x'.repeat(90)}`), `tail ${'é'.repeat(cap)}`));
    const session = await fx.connect();
    const out = await session.callTool('tail_log', { path: fx.file('long.log'), lines: 100 });
    const got = (out.structured as { lines: string[] }).lines;
    expect(out.structured).toMatchObject({ cutByBytes: true, entries: 1 });
    expect(got).toHaveLength(1);
    expect(got[0]?.startsWith('…')).toBe(true);
    expect(Buffer.byteLength(got[0] as string)).toBeLessThanOrEqual(cap);
    expect(Buffer.byteLength(got[0] as string)).toBeGreaterThan(cap / 2);
    expect(got[0]).not.toContain('\uFFFD');
    expect(out.text).toMatch(/answer is capped/);
    const two = await session.callTool('tail_log', { path: fx.file('long.log'), lines: 100, grep: ' xxx' });
    expect((two.structured as { lines: string[] }).lines.at(-1)).toMatch(/^199 x+$/);
  });
});
