import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { makeTempDir } from '@suite/test-kit';
import { startHttpServer } from '@suite/test-kit/abuse';
import { callTool, connectTaskClient, getTask, redisPrefix, untilTask } from '@suite/test-kit/tasks';
import { BIN } from './helpers.js';

const REDIS = 'redis://127.0.0.1:6379';
const BUDGET_MS = 100;

/** Lines of a log big enough that a full search of it outlasts the budget several times over. */
function bigLog(lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(`2024-01-15T10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}Z INFO [worker-${i % 8}] request ${i} took ${(i * 7) % 1000} ms user=u${i % 97}`);
  return `${out.join('\n')}\nNEEDLE-AT-THE-END\n`;
}

describe('search_logs as a task (2026-07-28, tasks extension), two replicas on Redis', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it('a long search returns a handle within the budget + 200 ms; the other replica resolves it to the matches', async () => {
    const { dir, cleanup } = await makeTempDir('logs-tasks-');
    closers.push(cleanup);
    await writeFile(path.join(dir, 'huge.log'), bigLog(1_500_000));
    const redis = redisPrefix(REDIS);
    closers.push(redis.clean);
    const args = [dir, '--auth-token', 'tasks-test-token', '--redis-url', REDIS, '--redis-prefix', redis.prefix, '--task-after-ms', String(BUDGET_MS)];
    const [a, b] = await Promise.all([startHttpServer(BIN, args), startHttpServer(BIN, args)]);
    closers.push(() => a.server.stop(), () => b.server.stop());
    const connect = async (url: string, tasks = true): Promise<Client> => {
      const client = await connectTaskClient(url, { token: 'tasks-test-token', tasks });
      closers.push(() => client.close());
      return client;
    };
    const onA = await connect(a.url);
    const onB = await connect(b.url);
    // Warm: the first call of a process loads what searching needs.
    await callTool(onA, 'tail_log', { path: path.join(dir, 'huge.log'), lines: 1 });

    // A pattern without a literal to look for first, so the search reads every line with the regular
    // expression: about 0.3 s on a quiet machine (a literal needle took 0.08 s: no task at all), CPU-bound
    // rather than cache-bound, so a second try is as long as the first.
    const search = { pattern: '^[A-Z-]{17}$', timeBudgetSeconds: 60 };
    // Up to three tries: a loaded machine (CI runs three packages' tests at once on two cores) can hold one
    // round trip past the 200 ms; a server that does not answer at the budget misses every try.
    const elapsed: number[] = [];
    let outcome: Awaited<ReturnType<typeof callTool>> | undefined;
    for (let attempt = 0; attempt < 3 && (elapsed.length === 0 || elapsed.at(-1)! >= BUDGET_MS + 200); attempt++) {
      const started = performance.now();
      outcome = await callTool(onA, 'search_logs', search);
      elapsed.push(performance.now() - started);
      expect(outcome.task, JSON.stringify(outcome.result)).toBeDefined();
    }
    expect(Math.min(...elapsed), `handles after ${elapsed.map((e) => e.toFixed(0)).join(', ')} ms`).toBeLessThan(BUDGET_MS + 200);
    outcome = outcome!;
    const done = await untilTask(onB, outcome.task!.taskId, { timeoutMs: 60_000 });
    expect(done.status).toBe('completed');
    expect(done.result?.isError).toBeFalsy();
    const structured = done.result?.structuredContent as { matches: { text: string }[]; timedOut: boolean };
    expect(structured.matches.map((m) => m.text)).toEqual(['NEEDLE-AT-THE-END']);
    expect(structured.timedOut).toBe(false);
    expect((await getTask(onA, outcome.task!.taskId)).status).toBe('completed');

    // The same search for a client without the extension: the plain result, however long it takes.
    const plain = await callTool(await connect(b.url, false), 'search_logs', search);
    expect(plain.task).toBeUndefined();
    expect(JSON.stringify(plain.result?.content)).toContain('NEEDLE-AT-THE-END');
  }, 120_000);
});
