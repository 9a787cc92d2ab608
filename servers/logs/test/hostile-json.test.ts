import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { fixture, type Fixture } from './helpers.js';

/**
 * Hostile structured input: a JSON line of 100 MB between two ordinary ones. Written as a stream
 * (1 MiB at a time) and read by streaming tools: the test stays cheap, and the server must answer
 * every tool with the ordinary entries, never crash or hold the line whole.
 */

const MIB = 1024 * 1024;
const FIRST = JSON.stringify({ level: 'error', time: '2026-12-01T00:00:00Z', service: 'api', status: 500, msg: 'before' });
const LAST = JSON.stringify({ level: 'error', time: '2026-12-01T00:00:02Z', service: 'api', status: 503, msg: 'after' });

describe('a JSON line of 100 MB (in-process)', () => {
  let fx: Fixture;
  let session: TestSession;
  let file: string;
  beforeAll(async () => {
    fx = await fixture();
    file = fx.file('huge.jsonl');
    const out = createWriteStream(file);
    out.write(`${FIRST}\n{"level":"error","service":"api","status":500,"pad":"`);
    const pad = Buffer.alloc(MIB, 'x');
    for (let i = 0; i < 100; i++) if (!out.write(pad)) await once(out, 'drain');
    out.end(`"}\n${LAST}\n`);
    await once(out, 'finish');
    session = await fx.connect();
  }, 60_000);
  afterAll(async () => {
    await fx.close();
  });

  it('search_logs, tail_log and log_stats with fields and group_by answer with the ordinary entries', async () => {
    const search = await session.callTool('search_logs', { paths: [file], fields: { service: 'api', status: '>=500' }, group_by: 'status' });
    expect(search.isError, search.text).toBe(false);
    const s = search.structured as { matches: { text: string }[]; groups: { value: string; count: number }[] };
    expect(s.matches.map((m) => m.text)).toEqual([FIRST, LAST]);
    expect(s.groups).toEqual([
      { value: '500', count: 1 },
      { value: '503', count: 1 },
    ]);

    const tail = await session.callTool('tail_log', { path: file, fields: { service: 'api' }, lines: 5 });
    expect(tail.isError, tail.text).toBe(false);
    // The huge line is no entry (its pieces are not JSON); the two ordinary ones are found past it.
    expect((tail.structured as { lines: string[] }).lines.at(-1)).toBe(LAST);

    const stats = await session.callTool('log_stats', { paths: [file], fields: { service: 'api' }, group_by: 'status' });
    expect(stats.isError, stats.text).toBe(false);
    expect(stats.structured).toMatchObject({ groups: [{ value: '500', count: 1 }, { value: '503', count: 1 }] });
  }, 60_000);
});
