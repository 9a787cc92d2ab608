import { appendFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { fixture, lines, type Fixture } from './helpers.js';

/** Counts of one in every message the tools give: "1 file", "1 entry", never "1 files" or "1 entries". */
describe('counts of one (in-process)', () => {
  let fx: Fixture;
  let session: TestSession;
  let log: string;
  beforeAll(async () => {
    fx = await fixture();
    log = await fx.write('one.log', lines('2026-11-21T05:00:00Z ERROR the only entry'));
    session = await fx.connect();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('search_logs, log_stats and read_new_lines say the singular', async () => {
    const search = await session.callTool('search_logs', { pattern: 'only' });
    expect(search.text).toMatch(/^1 match in 1 file \(/);
    const stats = await session.callTool('log_stats', {});
    expect(stats.text).toMatch(/^1 entry in 1 file \(/);
    const start = (await session.callTool('read_new_lines', { path: log })).structured as { cursor: string };
    await appendFile(log, lines('2026-11-21T05:00:01Z INFO one more'));
    const next = await session.callTool('read_new_lines', { path: log, cursor: start.cursor });
    expect(next.text).toMatch(/^1 new line \(appended\)\./m);
    for (const out of [search, stats, next]) expect(out.text).not.toMatch(/\b1 (files|entries|matches|lines|new lines)\b/);
  });
});
