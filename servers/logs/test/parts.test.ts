import { createWriteStream } from 'node:fs';
import { link, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { createGzip, constants as zlib } from 'node:zlib';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES } from '../src/chunks.js';
import { logsSearchedInParts } from '../src/scan-runner.js';
import { fixture, type Fixture } from './helpers.js';

/**
 * A large log searched in parts by several workers at once must give the answer of one search
 * from its start. The oracle is the same text gzipped: a .gz log is never cut (it can only be read
 * from its start), so both searches must find the same lines with the same line numbers, times,
 * levels, entries, context and caps. The log is made so that a long stack trace straddles the cut,
 * which the second part must attribute to the entry that started before it.
 */

const LINE = 100;
const LINES = 800_000;
const TOTAL = LINE * LINES;
/** The first cut: after the last newline before the read that ends nearest the middle. */
const READ_END = Math.floor(TOTAL / 2 / CHUNK_BYTES) * CHUNK_BYTES;
const TRACE_FROM = Math.floor((READ_END - 60_000) / LINE);
const TRACE_TO = Math.floor((READ_END + 60_000) / LINE);

function pad(text: string): string {
  return `${text}${' '.repeat(LINE - 1 - text.length)}\n`;
}

function lineAt(i: number): string {
  const n = i + 1;
  const time = new Date(Date.parse('2026-11-21T00:00:00Z') + n * 10).toISOString();
  if (i === TRACE_FROM) return pad(`${time} ERROR order ${n} failed: java.lang.IllegalStateException: locked`);
  if (i > TRACE_FROM && i <= TRACE_TO) return pad(`\tat com.example.Orders.update(Orders.java:${i % 400}) frame ${n}`);
  const level = n % 997 === 0 ? 'ERROR' : n % 10 === 7 ? 'WARN' : 'INFO';
  const rare = n % 99_991 === 0 ? ' ZQX-RARE-' + n : '';
  return pad(`${time} ${level} request ${n} served by worker-${n % 16}${rare}`);
}

async function* text(): AsyncGenerator<string> {
  for (let i = 0; i < LINES; i += 10_000) {
    let chunk = '';
    for (let k = i; k < Math.min(LINES, i + 10_000); k++) chunk += lineAt(k);
    yield chunk;
  }
}

interface Match {
  file: string;
  line: number;
  [key: string]: unknown;
}

describe('search_logs on a log searched in parts', () => {
  let fx: Fixture;
  let plain: string;
  let gz: string;

  beforeAll(async () => {
    fx = await fixture();
    plain = fx.file('big.log');
    gz = fx.file('copy.log.gz');
    await pipeline(Readable.from(text()), createWriteStream(plain));
    await pipeline(Readable.from(text()), createGzip({ level: zlib.Z_BEST_SPEED }), createWriteStream(gz));
  }, 120_000);
  afterAll(async () => fx.close());

  const QUERIES: Record<string, unknown>[] = [
    { pattern: 'ZQX-RARE-', literal: true },
    { pattern: 'ZQX-RARE-\\d+', contextLines: 3 },
    { pattern: 'worker-1[0-5]$', maxResults: 2000 },
    { pattern: 'Orders.java:(17|399)\\)', contextLines: 2, maxResults: 2000 },
    { pattern: 'frame', level: 'error', maxResults: 2000 },
    { pattern: 'frame \\d+$', maxResults: 700 },
    { level: 'error', maxResults: 600 },
    { pattern: 'request \\d+ served by worker-3', caseSensitive: false, maxResults: 2000, contextLines: 1 },
  ];

  it.each(QUERIES.map((q) => [JSON.stringify(q), q] as const))('%s: the answer of one search from the start', async (_, query) => {
    const session = await fx.session();
    const run = async (file: string) => {
      const out = await session.callTool('search_logs', { paths: [file], timeBudgetSeconds: 120, ...query }, { timeout: 120_000 });
      expect(out.isError, out.text).toBe(false);
      const s = out.structured as { matches: Match[]; truncated: boolean; timedOut: boolean; filesSearched: number };
      return { matches: s.matches.map((m) => ({ ...m, file: '' })), truncated: s.truncated, timedOut: s.timedOut, filesSearched: s.filesSearched };
    };
    const before = logsSearchedInParts();
    const parts = await run(plain);
    expect(logsSearchedInParts() - before).toBe(availableParallelism() > 1 ? 1 : 0);
    expect(parts).toEqual(await run(gz));
  });

  it('attributes continuation lines after the cut to the entry that began before it', async () => {
    const session = await fx.session();
    const out = await session.callTool('search_logs', { paths: [plain], pattern: `frame ${TRACE_TO + 1}\\b` });
    const [match] = (out.structured as { matches: Match[] }).matches;
    expect(match).toMatchObject({ line: TRACE_TO + 1, level: 'error', entry: expect.stringContaining(`order ${TRACE_FROM + 1} failed`) });
  });

  it('answers a cancellation within 100 ms, with every part stopped', async () => {
    // Thirty hard links to the log: 2.4 GB to search, long enough to be cancelled mid-way, no disk used.
    const copies = fx.file('copies');
    await mkdir(copies);
    for (let i = 0; i < 30; i++) await link(plain, path.join(copies, `copy-${i}.log`));
    const session = await fx.session();
    const controller = new AbortController();
    const call = session.callTool('search_logs', { paths: [copies], pattern: 'worker-\\d+ (?:x|y)z', timeBudgetSeconds: 120 }, { signal: controller.signal, timeout: 120_000 });
    await fx.scans(session, 'running');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const aborted = performance.now();
    controller.abort();
    await expect(call).rejects.toThrow();
    expect(performance.now() - aborted).toBeLessThan(100);
    await fx.scans(session, 'stopped');
  });
});
