import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONG_QUERY, isAlive, makeDatabaseFile, openServer, waitUntil, type Harness } from './helpers.js';

describe('timeouts and cancellation', () => {
  let h: Harness;
  let cleanup: () => Promise<void>;
  beforeAll(async () => {
    const made = await makeDatabaseFile();
    cleanup = made.cleanup;
    h = await openServer({ file: made.file, workers: 2, limits: { timeoutMs: 60_000 } });
  });
  afterAll(async () => {
    await h.close();
    await cleanup();
  });

  it('stops a query at its time limit, kills its process, and keeps serving', async () => {
    const pidsBefore = h.database.reader.pids;
    expect(pidsBefore.length).toBeGreaterThan(0);
    const out = await h.session.callTool('read_query', { sql: LONG_QUERY, timeoutSeconds: 1 });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/read_query was stopped after 1 s/);
    // The process that ran it is gone (not merely abandoned), so SQLite is not still burning CPU.
    await waitUntil(() => pidsBefore.some((pid) => !isAlive(pid)));
    const after = await h.session.callTool('read_query', { sql: 'SELECT count(*) FROM people' });
    expect(after.structured).toMatchObject({ rows: [[3]] });
  });

  it('answers a ping during a long query, and cancellation kills the query process', async () => {
    const controller = new AbortController();
    let settled = false;
    const call = h.session.callTool('read_query', { sql: LONG_QUERY }, { signal: controller.signal }).finally(() => {
      settled = true;
    });
    // Wait until a query process is busy with it: its pid is one no idle process has.
    await new Promise((r) => setTimeout(r, 300));
    const busyPids = h.database.reader.pids;
    await h.session.client.ping();
    const list = await h.session.callTool('list_tables');
    expect(list.isError).toBe(false);
    expect(settled).toBe(false);
    controller.abort();
    await expect(call).rejects.toThrow();
    // One of the processes that existed while the query ran is killed.
    await waitUntil(() => busyPids.some((pid) => !isAlive(pid)));
    const again = await h.session.callTool('read_query', { sql: 'SELECT 1 AS one' });
    expect(again.structured).toMatchObject({ rows: [[1]] });
  });

  it('runs queries side by side up to the pool size while a long one is stuck', async () => {
    const long = h.session.callTool('read_query', { sql: LONG_QUERY, timeoutSeconds: 3 });
    const quick = await Promise.all([1, 2, 3].map((n) => h.session.callTool('read_query', { sql: 'SELECT ? AS n', params: [n] })));
    expect(quick.map((q) => q.structured!.rows)).toEqual([[[1]], [[2]], [[3]]]);
    const timedOut = await long;
    expect(timedOut.isError).toBe(true);
    expect(timedOut.text).toMatch(/stopped after 3 s/);
  });

  it('a query process that dies mid-query is an isError answer, and the next call gets a new one', async () => {
    const call = h.session.callTool('read_query', { sql: LONG_QUERY });
    await new Promise((r) => setTimeout(r, 300));
    // Killed from outside, as the OOM killer would.
    for (const pid of h.database.reader.pids) process.kill(pid, 'SIGKILL');
    const out = await call;
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/query process stopped unexpectedly; try again/);
    const next = await h.session.callTool('read_query', { sql: 'SELECT 2 AS two' });
    expect(next.structured).toMatchObject({ rows: [[2]] });
  });
});

describe('a single query process', () => {
  it('queues calls behind a busy process, and a queued call can be cancelled', async () => {
    const made = await makeDatabaseFile();
    const h = await openServer({ file: made.file, workers: 1, limits: { timeoutMs: 60_000 } });
    try {
      const long = h.session.callTool('read_query', { sql: LONG_QUERY, timeoutSeconds: 4 });
      await new Promise((r) => setTimeout(r, 200));
      const controller = new AbortController();
      const queued = h.session.callTool('read_query', { sql: 'SELECT 1' }, { signal: controller.signal });
      controller.abort();
      await expect(queued).rejects.toThrow();
      const waiting = h.session.callTool('read_query', { sql: 'SELECT 3 AS three' });
      const timedOut = await long;
      expect(timedOut.isError).toBe(true);
      // The waiting call runs once the stuck query's process is gone and a new one has started.
      expect((await waiting).structured).toMatchObject({ rows: [[3]] });
      expect(h.database.reader.pids.length).toBe(1);
    } finally {
      await h.close();
      await made.cleanup();
    }
  });
});
