import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { startHttpServer } from '@suite/test-kit/abuse';
import { callTool, cancelTask, connectTaskClient, getTask, redisPrefix, untilTask } from '@suite/test-kit/tasks';
import { ADMIN_URL, BIN, createTestDatabase, withClient } from './helpers.js';

const REDIS = 'redis://127.0.0.1:6379';
const BUDGET_MS = 300;

describe('query as a task (2026-07-28, tasks extension), two replicas on Redis', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it("a cancel on replica B stops replica A's pg_sleep in the database within 2 s", async () => {
    const db = await createTestDatabase();
    closers.push(() => db.drop());
    const redis = redisPrefix(REDIS);
    closers.push(redis.clean);
    const args = [db.roleUrl, '--auth-token', 'tasks-test-token', '--redis-url', REDIS, '--redis-prefix', redis.prefix, '--task-after-ms', String(BUDGET_MS)];
    const [a, b] = await Promise.all([startHttpServer(BIN, args, { DATABASE_URL: undefined }), startHttpServer(BIN, args, { DATABASE_URL: undefined })]);
    closers.push(() => a.server.stop(), () => b.server.stop());
    const connect = async (url: string): Promise<Client> => {
      const client = await connectTaskClient(url, { token: 'tasks-test-token' });
      closers.push(() => client.close());
      return client;
    };
    const onA = await connect(a.url);
    const onB = await connect(b.url);
    const sleeping = async (): Promise<number> =>
      withClient(ADMIN_URL, async (c) => Number((await c.query("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1 AND query LIKE '%pg_sleep(60)%' AND state = 'active'", [db.role])).rows[0].n));

    // Up to three tries: a loaded machine (CI runs three packages' tests at once on two cores) can hold one
    // round trip past the 200 ms (511 ms seen); a server that does not answer at the budget misses every try.
    // A slow try's query is cancelled (and gone from the database) before the next.
    const elapsed: number[] = [];
    let task: Awaited<ReturnType<typeof callTool>>['task'];
    for (let attempt = 0; attempt < 3; attempt++) {
      const started = performance.now();
      ({ task } = await callTool(onA, 'query', { sql: 'SELECT pg_sleep(60) AS slept' }));
      elapsed.push(performance.now() - started);
      expect(task).toBeDefined();
      if (elapsed.at(-1)! < BUDGET_MS + 200 || attempt === 2) break;
      await cancelTask(onA, task!.taskId);
      while ((await sleeping()) > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Math.min(...elapsed), `handles after ${elapsed.map((e) => e.toFixed(0)).join(', ')} ms`).toBeLessThan(BUDGET_MS + 200);
    expect(await sleeping()).toBe(1);
    expect((await getTask(onB, task!.taskId)).status).toBe('working');

    const cancelledAt = performance.now();
    await cancelTask(onB, task!.taskId);
    while ((await sleeping()) > 0) {
      expect(performance.now() - cancelledAt).toBeLessThan(2000);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(performance.now() - cancelledAt).toBeLessThan(2000);
    const read = await untilTask(onA, task!.taskId);
    expect(read.status).toBe('cancelled');
    expect(read.result).toBeUndefined();

    // A quick query of a client with the extension is still answered plainly.
    const quick = await callTool(onB, 'query', { sql: 'SELECT 1 AS one' });
    expect(quick.task).toBeUndefined();
    expect(JSON.stringify(quick.result?.content)).toContain('one');
  }, 60_000);
});
