import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { Logger } from '../src/index.js';
import { RedisLink } from '../src/replicas/redis-link.js';
import { RedisTaskStore } from '../src/tasks/redis-store.js';
import { MemoryTaskStore, type TaskRecord, type TaskStore } from '../src/tasks/store.js';
import { TaskRuntime } from '../src/tasks/runtime.js';

const REDIS = 'redis://127.0.0.1:6379';

function record(overrides: Partial<TaskRecord> = {}): TaskRecord {
  const now = new Date().toISOString();
  return { taskId: randomUUID(), principal: 'p', status: 'working', createdAt: now, lastUpdatedAt: now, ttlMs: 60_000, pollIntervalMs: 1000, tool: 't', arguments: {}, ...overrides };
}

describe('task stores: compare-and-set, terminal states final (in memory, and in the real Redis)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function stores(): Promise<[string, TaskStore, TaskStore][]> {
    const memory = new MemoryTaskStore();
    const prefix = `suite-test-taskstore-${randomUUID()}:`;
    const links = [new RedisLink(REDIS, new Logger('a'), { prefix }), new RedisLink(REDIS, new Logger('b'), { prefix })];
    await Promise.all(links.map((link) => new Promise<void>((resolve) => (link.ready ? resolve() : link.onReady(() => resolve())))));
    const [a, b] = links.map((link) => new RedisTaskStore(link));
    closers.push(async () => {
      await memory.close();
      await a!.close();
      await b!.close();
      for (const link of links) await link.close();
      const redis = new Redis(REDIS);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    return [
      ['memory', memory, memory],
      ['redis', a!, b!],
    ];
  }

  it('a terminal status is never overwritten, whichever replica writes, however many race', async () => {
    for (const [name, a, b] of await stores()) {
      const task = record();
      await a.create(task);
      expect((await b.get(task.taskId))?.status, name).toBe('working');
      // Twenty writers on two replicas race to finish it: exactly one wins, and its outcome stays.
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? a : b).update(task.taskId, i % 3 === 0 ? { status: 'cancelled' } : { status: 'completed', result: { content: [{ type: 'text', text: `writer ${i}` }] } })),
      );
      const winners = outcomes.filter((o) => o !== undefined);
      expect(winners, name).toHaveLength(1);
      const final = await a.get(task.taskId);
      expect(final?.status, name).toBe(winners[0]!.status);
      expect(final?.result, name).toEqual(winners[0]!.result);
      expect(await b.update(task.taskId, { status: 'working' }), name).toBeUndefined();
      expect((await b.get(task.taskId))?.status, name).toBe(winners[0]!.status);
    }
  });

  it('racing non-terminal updates all land (a conflict is retried on the new version, not dropped)', async () => {
    for (const [name, a, b] of await stores()) {
      const task = record({ status: 'input_required', answers: {} });
      await a.create(task);
      const written = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? a : b).update(task.taskId, { statusMessage: `writer ${i}` })));
      expect(written.every((w) => w !== undefined), name).toBe(true);
      const final = await a.get(task.taskId);
      expect(final?.status, name).toBe('input_required');
      expect(written.map((w) => w!.statusMessage), name).toContain(final?.statusMessage);
      // Fields a patch does not name are kept.
      expect(final?.answers, name).toEqual({});
    }
  });

  it('an unknown task is undefined; a Redis lease lapses with the replica that held it', async () => {
    const [, [, a, b]] = (await stores()) as [unknown, [string, TaskStore, TaskStore]];
    expect(await a.get('no-such-task')).toBeUndefined();
    expect(await a.update('no-such-task', { status: 'completed' })).toBeUndefined();
    const task = record();
    await a.create(task);
    expect(await b.leased(task.taskId)).toBe(true);
    await a.release(task.taskId);
    expect(await b.leased(task.taskId)).toBe(false);
    // The runtime of another replica reads it as failed: nobody runs it any more.
    const runtime = new TaskRuntime({ store: b });
    closers.push(() => runtime.close());
    const read = await runtime.get(task.taskId, 'p');
    expect(read.status).toBe('failed');
    expect((read.error as { code: number }).code).toBe(-32603);
    // Another principal: not found, not failed.
    await expect(runtime.get(task.taskId, 'q')).rejects.toMatchObject({ code: -32602 });
  });

  it('a result larger than the cap is replaced by an error result that says so', async () => {
    const runtime = new TaskRuntime({ maxResultBytes: 1000, afterMs: 0 });
    closers.push(() => runtime.close());
    const handle = await runtime.call({
      principal: 'p',
      tool: 'big',
      arguments: {},
      required: false,
      requestSignal: new AbortController().signal,
      attempt: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        return { result: { content: [{ type: 'text', text: 'x'.repeat(5000) }] } };
      },
    });
    expect(handle.resultType).toBe('task');
    let read = await runtime.get(handle.taskId as string, 'p');
    while (read.status === 'working') {
      await new Promise((resolve) => setTimeout(resolve, 20));
      read = await runtime.get(handle.taskId as string, 'p');
    }
    const result = read.result as { isError: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/larger than the 1000 bytes a task keeps/);
  });

  it('past the cap on running tasks a call is answered plainly; the memory store keeps at most its cap, finished ones going first', async () => {
    const runtime = new TaskRuntime({ maxRunning: 1, afterMs: 0 });
    closers.push(() => runtime.close());
    const slow = (ms: number, text: string) => async (signal: AbortSignal) => {
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { result: { content: [{ type: 'text', text: signal.aborted ? 'aborted' : text }] } };
    };
    const call = (ms: number, text: string) =>
      runtime.call({ principal: 'p', tool: 't', arguments: {}, required: false, requestSignal: new AbortController().signal, attempt: slow(ms, text) });
    const first = await call(500, 'first');
    expect(first.resultType).toBe('task');
    const second = await call(50, 'second');
    expect(second).toEqual({ content: [{ type: 'text', text: 'second' }] });
    await runtime.cancel(first.taskId as string, 'p');

    const store = new MemoryTaskStore(3);
    closers.push(() => store.close());
    const made = [record(), record(), record()];
    for (const r of made) await store.create(r);
    await store.update(made[1]!.taskId, { status: 'completed', result: { content: [] } });
    const fourth = record();
    await store.create(fourth);
    expect(await store.get(made[1]!.taskId)).toBeUndefined();
    expect((await store.get(made[0]!.taskId))?.status).toBe('working');
    expect((await store.get(fourth.taskId))?.status).toBe('working');
  });
});
