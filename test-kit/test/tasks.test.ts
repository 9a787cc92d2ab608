import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import type { Client } from '@modelcontextprotocol/client';
import { startHttpServer, type HttpServerProcess } from '../src/conformance.js';
import { callTool, cancelTask, connectTaskClient, connectTaskStdio, errorCode, getTask, untilTask, updateTask } from '../src/tasks.js';

/**
 * The tasks extension through the suite's conformance fixture (built on @suite/shared alone): the
 * built bin over HTTP, two replicas sharing the machine's Redis under a prefix of the test's own,
 * and over stdio with the in-memory store. Clients are SDK v2 clients declaring the extension.
 */
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'fixture-server.js');
const REDIS = 'redis://127.0.0.1:6379';
const BUDGET_MS = 400;

/** An acknowledgement's fields besides `_meta` (the server's identity): none for tasks/cancel and tasks/update. */
function envelope(ack: Record<string, unknown>): Record<string, unknown> {
  const { _meta: _ignored, ...rest } = ack;
  return rest;
}

describe('tasks (io.modelcontextprotocol/tasks) on the shared layer, through the fixture server', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function replicas(extra: string[] = []): Promise<{ a: HttpServerProcess; b: HttpServerProcess }> {
    const prefix = `suite-test-tasks-${process.pid}-${randomBytes(4).toString('hex')}:`;
    closers.push(async () => {
      const redis = new Redis(REDIS);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    const args = ['--per-user-tokens', '--redis-url', REDIS, '--redis-prefix', prefix, '--task-after-ms', String(BUDGET_MS), ...extra];
    const [a, b] = await Promise.all([startHttpServer(bin, args), startHttpServer(bin, args)]);
    closers.push(() => a!.server.stop(), () => b!.server.stop());
    return { a: a!, b: b! };
  }

  async function client(url: string, token: string, tasks = true): Promise<Client> {
    const c = await connectTaskClient(url, { token, tasks });
    closers.push(() => c.close());
    return c;
  }

  it('a call past the budget is a task within budget + 200 ms; the other replica reads it, then its result', async () => {
    const { a, b } = await replicas();
    const onA = await client(a.url, 'alice');
    const onB = await client(b.url, 'alice');
    // Up to three tries: a loaded machine (CI runs three packages' tests at once on two cores) can hold one
    // round trip past the 200 ms; a server that does not answer at the budget misses every try.
    const elapsed: number[] = [];
    let outcome: Awaited<ReturnType<typeof callTool>> | undefined;
    for (let attempt = 0; attempt < 3 && (elapsed.length === 0 || elapsed.at(-1)! >= BUDGET_MS + 200); attempt++) {
      const started = performance.now();
      outcome = await callTool(onA, 'slow_compute', { seconds: 2, label: 'shared' });
      elapsed.push(performance.now() - started);
      expect(outcome.task, JSON.stringify(outcome)).toBeDefined();
      expect(elapsed.at(-1)).toBeGreaterThanOrEqual(BUDGET_MS - 5);
    }
    expect(Math.min(...elapsed), `handles after ${elapsed.map((e) => e.toFixed(0)).join(', ')} ms`).toBeLessThan(BUDGET_MS + 200);
    outcome = outcome!;
    const handle = outcome.task!;
    expect(handle.status).toBe('working');
    expect(Number.isInteger(handle.ttlMs)).toBe(true);
    // Stored before the handle was returned: the other replica reads it at once.
    const seen = await getTask(onB, handle.taskId);
    expect(seen.taskId).toBe(handle.taskId);
    expect(seen.status).toBe('working');
    expect(seen.result).toBeUndefined();
    const done = await untilTask(onB, handle.taskId);
    expect(done.status).toBe('completed');
    expect(done.result?.content[0]?.text).toBe('Computed shared after 2 s.');
  });

  it('a call within the budget, and any call of a client without the extension, is answered plainly', async () => {
    const { a } = await replicas();
    const fast = await callTool(await client(a.url, 'alice'), 'slow_compute', { seconds: 0 });
    expect(fast.result?.content[0]?.text).toBe('Computed result after 0 s.');
    const plain = await client(a.url, 'alice', false);
    const slow = await callTool(plain, 'slow_compute', { seconds: 1 });
    expect(slow.result?.content[0]?.text).toBe('Computed result after 1 s.');
    // Without the extension the task methods are refused with Missing Required Client Capability.
    expect(await errorCode(getTask(plain, 'anything'))).toBe(-32021);
    expect(await errorCode(cancelTask(plain, 'anything'))).toBe(-32021);
    expect(await errorCode(updateTask(plain, 'anything', {}))).toBe(-32021);
    // A tool that requires tasks (a fixture only) refuses such a client the same way.
    expect(await errorCode(plain.callTool({ name: 'failing_job', arguments: {} }))).toBe(-32021);
  });

  it("another principal's task is not found, on either replica, for get, update and cancel", async () => {
    const { a, b } = await replicas();
    const alice = await client(a.url, 'alice');
    const { task } = await callTool(alice, 'slow_compute', { seconds: 30 });
    expect(task).toBeDefined();
    for (const url of [a.url, b.url]) {
      const mallory = await client(url, 'mallory');
      expect(await errorCode(getTask(mallory, task!.taskId))).toBe(-32602);
      expect(await errorCode(cancelTask(mallory, task!.taskId))).toBe(-32602);
      expect(await errorCode(updateTask(mallory, task!.taskId, {}))).toBe(-32602);
    }
    // Still Alice's, still running: the refusals changed nothing.
    expect((await getTask(alice, task!.taskId)).status).toBe('working');
    expect(await errorCode(getTask(alice, 'no-such-task'))).toBe(-32602);
    await cancelTask(alice, task!.taskId);
  });

  it('a cancel on replica B stops the work on replica A, and a late result never overwrites it', async () => {
    const { a, b } = await replicas();
    const onA = await client(a.url, 'alice');
    const onB = await client(b.url, 'alice');
    const { task } = await callTool(onA, 'slow_compute', { seconds: 3, label: 'cancelled' });
    expect(envelope(await cancelTask(onB, task!.taskId))).toEqual({});
    const read = await getTask(onA, task!.taskId);
    expect(read.status).toBe('cancelled');
    // Past the time the work would have finished: still cancelled, no result.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const later = await getTask(onB, task!.taskId);
    expect(later.status).toBe('cancelled');
    expect(later.result).toBeUndefined();
    // Cancelling a terminal task is the same empty acknowledgement.
    expect(envelope(await cancelTask(onA, task!.taskId))).toEqual({});
  });

  it('a replica killed with SIGKILL mid-task: its task reads failed within 20 s on the other', async () => {
    const { a, b } = await replicas();
    const onA = await client(a.url, 'alice');
    const onB = await client(b.url, 'alice');
    const { task } = await callTool(onA, 'slow_compute', { seconds: 120 });
    expect((await getTask(onB, task!.taskId)).status).toBe('working');
    const killed = performance.now();
    a.server.kill('SIGKILL');
    const failed = await untilTask(onB, task!.taskId, { timeoutMs: 25_000 });
    expect(failed.status).toBe('failed');
    expect(performance.now() - killed).toBeLessThan(20_000);
    expect(failed.error?.code).toBe(-32603);
    expect(failed.error?.message).toMatch(/stopped before it finished/);
    expect(failed.result).toBeUndefined();
  }, 40_000);

  it('a task is kept for its TTL after it finished, then not found', async () => {
    const { a } = await replicas(['--task-ttl', '2']);
    const alice = await client(a.url, 'alice');
    const { task } = await callTool(alice, 'slow_compute', { seconds: 1 });
    expect(task!.ttlMs).toBe(2000);
    expect((await untilTask(alice, task!.taskId)).status).toBe('completed');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect((await getTask(alice, task!.taskId)).status).toBe('completed');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await errorCode(getTask(alice, task!.taskId))).toBe(-32602);
  });

  it('a tool error completes the task with isError; an unexpected failure fails it', async () => {
    const { a } = await replicas();
    const alice = await client(a.url, 'alice');
    const job = await callTool(alice, 'failing_job', {});
    const completed = await untilTask(alice, job.task!.taskId);
    expect(completed.status).toBe('completed');
    expect(completed.result?.isError).toBe(true);
    const broken = await callTool(alice, 'protocol_error_job', {});
    const failed = await untilTask(alice, broken.task!.taskId);
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).toMatch(/^protocol_error_job failed unexpectedly \(error id \w+\)\. The server log has the detail\.$/);
    expect(JSON.stringify(failed)).not.toMatch(/fixture-server|at Object|\.js:\d+/);
  });

  it('input through tasks/update: answered on the other replica, resumed there, partial answers kept', async () => {
    const { a, b } = await replicas();
    const onA = await client(a.url, 'alice');
    const onB = await client(b.url, 'alice');
    const { task } = await callTool(onA, 'multi_input', {});
    const waiting = await untilTask(onB, task!.taskId, { status: 'input_required' });
    const keys = Object.keys(waiting.inputRequests ?? {});
    expect(keys).toHaveLength(2);
    expect(envelope(await updateTask(onB, task!.taskId, { [keys[0]!]: { action: 'accept', content: { name: 'one' } }, unknown: { action: 'accept' } }))).toEqual({});
    const partly = await getTask(onA, task!.taskId);
    expect(partly.status).toBe('input_required');
    expect(Object.keys(partly.inputRequests ?? {})).toEqual([keys[1]]);
    await updateTask(onB, task!.taskId, { [keys[1]!]: { action: 'accept', content: { name: 'two' } } });
    const done = await untilTask(onA, task!.taskId);
    expect(done.status).toBe('completed');
    expect(done.result?.content[0]?.text).toBe('Got one and two.');
  });

  it('a tool that always runs as a task asks first with input_required rounds, then becomes a task with the answer', async () => {
    const { a } = await replicas();
    const alice = await client(a.url, 'alice');
    const asked: string[] = [];
    alice.setRequestHandler('elicitation/create', async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { user_name: 'Alice' } };
    });
    const { task } = await callTool(alice, 'test_tool_with_task', {});
    expect(asked).toEqual(['Your name?']);
    expect(task, 'the round with the answer is a task').toBeDefined();
    const done = await untilTask(alice, task!.taskId);
    expect(done.result?.content[0]?.text).toBe('Hello, Alice!');
  });

  it('over stdio (the in-memory store): a handle, then the result', async () => {
    const stdio = await connectTaskStdio(bin, ['--task-after-ms', String(BUDGET_MS)]);
    closers.push(() => stdio.close());
    // The first request over stdio builds the server (a second or so): not part of the budget.
    await stdio.listTools();
    const elapsed: number[] = [];
    let task: Awaited<ReturnType<typeof callTool>>['task'];
    for (let attempt = 0; attempt < 3 && (elapsed.length === 0 || elapsed.at(-1)! >= BUDGET_MS + 200); attempt++) {
      const started = performance.now();
      ({ task } = await callTool(stdio, 'slow_compute', { seconds: 1, label: 'stdio' }));
      elapsed.push(performance.now() - started);
      expect(task).toBeDefined();
    }
    expect(Math.min(...elapsed), `handles after ${elapsed.map((e) => e.toFixed(0)).join(', ')} ms`).toBeLessThan(BUDGET_MS + 200);
    const done = await untilTask(stdio, task!.taskId);
    expect(done.result?.content[0]?.text).toBe('Computed stdio after 1 s.');
  });
});
