import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { startHttpServer, type HttpServerProcess } from '../src/conformance.js';
import { callTool, cancelTask, connectTaskClient, connectTaskStdio, errorCode, getTask, redisPrefix } from '../src/tasks.js';

/**
 * Task status notifications (`notifications/tasks`, SEP-2663) on 2026-07-28 `subscriptions/listen`
 * streams that name task ids, through SDK v2 clients declaring the tasks extension: the built
 * fixture over HTTP (one replica, and two sharing the machine's Redis under a prefix of the test's
 * own) and over stdio.
 */
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'fixture-server.js');
const REDIS = 'redis://127.0.0.1:6379';
const BUDGET_MS = 300;
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

interface Heard {
  method: string;
  params: Record<string, unknown>;
}

/** Every notification the client is sent, whatever its method (the SDK has no handler for notifications/tasks). */
function record(client: Client): Heard[] {
  const heard: Heard[] = [];
  client.fallbackNotificationHandler = async (notification) => {
    heard.push({ method: notification.method, params: (notification.params ?? {}) as Record<string, unknown> });
  };
  return heard;
}

function statuses(heard: Heard[], taskId: string): string[] {
  return heard.filter((n) => n.method === 'notifications/tasks' && n.params.taskId === taskId).map((n) => n.params.status as string);
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('task status notifications on listen streams', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function replicas(count: 1 | 2): Promise<HttpServerProcess[]> {
    const { prefix, clean } = redisPrefix(REDIS);
    closers.push(clean);
    const args = ['--per-user-tokens', '--task-after-ms', String(BUDGET_MS), ...(count === 2 ? ['--redis-url', REDIS, '--redis-prefix', prefix] : [])];
    // The listener's periodic re-read is pushed past the test: changes arrive through the relay or not at all.
    const started = await Promise.all(Array.from({ length: count }, () => startHttpServer(bin, args, { SUITE_TASK_RECHECK_MS: '600000' })));
    for (const s of started) closers.push(() => s!.server.stop());
    return started.map((s) => s!);
  }

  async function client(url: string, token: string, tasks = true): Promise<Client> {
    const c = await connectTaskClient(url, { token, tasks });
    closers.push(() => c.close());
    return c;
  }

  /**
   * Opens a listen stream for `taskIds`; the ids the acknowledgement names. The SDK's client
   * validates the acknowledgement against its own schema, which has no `taskIds` (it keeps the
   * extension's field from `honoredFilter`), so the acknowledgement is read as it arrived.
   */
  async function listen(c: Client, taskIds: string[]): Promise<{ honored: string[]; closed: Promise<string> }> {
    const transport = c.transport!;
    const inner = transport.onmessage!;
    let acknowledged: string[] | undefined;
    transport.onmessage = (message, extra) => {
      const m = message as { method?: string; params?: { notifications?: { taskIds?: string[] } } };
      if (m.method === 'notifications/subscriptions/acknowledged') acknowledged = m.params?.notifications?.taskIds ?? [];
      inner(message, extra);
    };
    try {
      const subscription = await c.listen({ taskIds } as never);
      closers.push(() => subscription.close());
      return { honored: [...(acknowledged ?? [])], closed: subscription.closed };
    } finally {
      transport.onmessage = inner;
    }
  }

  for (const where of ['one replica', 'a second replica sharing Redis'] as const) {
    it(`sends working then completed, cancelled and failed for the listener's own tasks (${where}); another principal's stream gets none`, async () => {
      const servers = await replicas(where === 'one replica' ? 1 : 2);
      const runner = await client(servers[0]!.url, 'alice');
      const watcher = await client(servers.at(-1)!.url, 'alice');
      const stranger = await client(servers.at(-1)!.url, 'mallory');
      const heard = record(watcher);
      const strangerHeard = record(stranger);

      const done = await callTool(runner, 'slow_compute', { seconds: 1.5, label: 'notified' });
      const cancelled = await callTool(runner, 'slow_compute', { seconds: 60, label: 'to cancel' });
      const broken = await callTool(runner, 'protocol_error_job', {});
      const ids = [done.task!.taskId, cancelled.task!.taskId, broken.task!.taskId];

      const mine = await listen(watcher, ids);
      expect(mine.honored.sort()).toEqual([...ids].sort());
      // Another principal's stream, open for a task of its own, names alice's ids too: they are not
      // acknowledged (exactly as unknown ones), and nothing of them is sent on it.
      const own = await callTool(stranger, 'slow_compute', { seconds: 1, label: 'mallory' });
      const theirs = await listen(stranger, [own.task!.taskId, ...ids]);
      expect(theirs.honored).toEqual([own.task!.taskId]);

      await cancelTask(runner, cancelled.task!.taskId);
      await until(() => ['completed', 'cancelled', 'failed'].every((s, i) => statuses(heard, ids[i]!).includes(s)));

      expect(statuses(heard, ids[0]!)).toEqual(['working', 'completed']);
      expect(statuses(heard, ids[1]!).at(-1)).toBe('cancelled');
      expect(statuses(heard, ids[2]!).at(-1)).toBe('failed');
      const completed = heard.find((n) => n.params.taskId === ids[0] && n.params.status === 'completed')!;
      // The full state, as tasks/get shows it, stamped with the listen stream's subscription id.
      expect((completed.params.result as { content: { text: string }[] }).content[0]!.text).toBe('Computed notified after 1.5 s.');
      expect(completed.params._meta).toMatchObject({ [SUBSCRIPTION_ID]: expect.anything() });
      const failed = heard.find((n) => n.params.taskId === ids[2] && n.params.status === 'failed')!;
      expect((failed.params.error as { code: number }).code).toBe(-32603);
      expect(await getTask(runner, ids[0]!)).toMatchObject({ status: 'completed', lastUpdatedAt: completed.params.lastUpdatedAt });

      // Give any stray notification time to arrive before saying none came.
      await until(() => statuses(strangerHeard, own.task!.taskId).includes('completed'));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(strangerHeard.filter((n) => n.method === 'notifications/tasks').map((n) => n.params.taskId)).toEqual([own.task!.taskId, own.task!.taskId]);
    });
  }

  it('ends a stream that carries only task notifications gracefully when the server shuts down', async () => {
    const [server] = await replicas(1);
    const c = await client(server!.url, 'alice');
    const heard = record(c);
    const task = await callTool(c, 'slow_compute', { seconds: 60 });
    const stream = await listen(c, [task.task!.taskId]);
    expect(stream.honored).toEqual([task.task!.taskId]);
    await until(() => statuses(heard, task.task!.taskId).includes('working'));
    await server!.server.stop();
    expect(await stream.closed).toBe('graceful');
  });

  it('refuses task ids on a listen request of a client without the extension (-32021)', async () => {
    const [server] = await replicas(1);
    const plain = await client(server!.url, 'alice', false);
    expect(await errorCode(plain.listen({ taskIds: ['x'] } as never))).toBe(-32021);
  });

  it('over stdio: working then completed on the connection that created the task', async () => {
    const c = await connectTaskStdio(bin, ['--task-after-ms', String(BUDGET_MS)]);
    closers.push(() => c.close());
    const heard = record(c);
    const task = await callTool(c, 'slow_compute', { seconds: 1, label: 'stdio' });
    const unknown = 'not-a-task';
    const { honored } = await listen(c, [task.task!.taskId, unknown]);
    expect(honored).toEqual([task.task!.taskId]);
    await until(() => statuses(heard, task.task!.taskId).includes('completed'));
    expect(statuses(heard, task.task!.taskId)).toEqual(['working', 'completed']);
    expect(statuses(heard, unknown)).toEqual([]);
  });

  it('over stdio: refuses task ids on a listen request of a client without the extension (-32021), and keeps serving', async () => {
    const c = await connectTaskStdio(bin, ['--task-after-ms', String(BUDGET_MS)], { tasks: false });
    closers.push(() => c.close());
    expect(await errorCode(c.listen({ taskIds: ['x'] } as never))).toBe(-32021);
    expect((await callTool(c, 'greet', { name: 'after' })).result?.content[0]?.text).toBe('Hello, after!');
  });
});
