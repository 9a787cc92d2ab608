/**
 * A 2026-07-28 SDK client that declares the tasks extension (`io.modelcontextprotocol/tasks`).
 * SDK v2 has no task runtime: its client refuses a tools/call answered `resultType: "task"`. The
 * transport here hands such an answer to the SDK as a complete result carrying the task under
 * `_meta[TASK_META]`, so tests call tools through the SDK and see either the result or the task;
 * tasks/get, tasks/update and tasks/cancel go through `client.request` as they are.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { childEnv } from './conformance.js';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** Where the test transport puts a task handle on the result the SDK sees. */
export const TASK_META = 'suite.test/task';

export interface TaskHandle {
  taskId: string;
  status: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs?: number;
}

export interface DetailedTask extends TaskHandle {
  statusMessage?: string;
  inputRequests?: Record<string, unknown>;
  result?: { content: { type: string; text?: string }[]; isError?: boolean; structuredContent?: unknown };
  error?: { code: number; message: string; data?: unknown };
}

type Transport = StreamableHTTPClientTransport | StdioClientTransport;

/** The transport with `resultType: "task"` answers rewritten for the SDK (see the module comment). */
function taskAware<T extends Transport>(inner: T): T {
  return new Proxy(inner, {
    set(target, key, value) {
      if (key !== 'onmessage' || typeof value !== 'function') return Reflect.set(target, key, value);
      const handler = value as (message: unknown, extra?: unknown) => void;
      return Reflect.set(target, key, (message: unknown, extra?: unknown) => {
        const result = (message as { result?: Record<string, unknown> }).result;
        if (result?.resultType !== 'task') return handler(message, extra);
        const { resultType: _task, _meta, content: _content, ...task } = result;
        handler({ ...(message as object), result: { resultType: 'complete', content: [], _meta: { ...(_meta as object), [TASK_META]: task } } }, extra);
      });
    },
  });
}

const CAPABILITIES = { elicitation: {}, extensions: { [TASKS_EXTENSION]: {} } };

/** A 2026-07-28 client of an HTTP endpoint declaring the tasks extension (or not, with `tasks: false`). */
export async function connectTaskClient(url: string, options: { token?: string; tasks?: boolean } = {}): Promise<Client> {
  const client = new Client({ name: 'suite-test-tasks', version: '0' }, { capabilities: options.tasks === false ? {} : CAPABILITIES, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(taskAware(new StreamableHTTPClientTransport(new URL(url), options.token ? { requestInit: { headers: { authorization: `Bearer ${options.token}` } } } : {})));
  return client;
}

/** The same over a built bin's stdio. */
export async function connectTaskStdio(bin: string, args: string[], options: { env?: Record<string, string | undefined>; tasks?: boolean } = {}): Promise<Client> {
  const client = new Client({ name: 'suite-test-tasks', version: '0' }, { capabilities: options.tasks === false ? {} : CAPABILITIES, versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(taskAware(new StdioClientTransport({ command: process.execPath, args: [bin, ...args], env: childEnv(options.env), stderr: 'ignore' })));
  return client;
}

export type CallOutcome = { task: TaskHandle; result?: undefined } | { result: { content: { type: string; text?: string }[]; isError?: boolean }; task?: undefined };

/** tools/call: the plain result, or the task the server made of the call. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>, options: { timeout?: number } = {}): Promise<CallOutcome> {
  const answer = await client.callTool({ name, arguments: args }, options.timeout ? { timeout: options.timeout } : undefined);
  const task = (answer._meta as Record<string, unknown> | undefined)?.[TASK_META] as TaskHandle | undefined;
  return task ? { task } : { result: answer as CallOutcome['result'] & object };
}

const LOOSE = z.looseObject({});

export async function getTask(client: Client, taskId: string): Promise<DetailedTask> {
  return (await client.request({ method: 'tasks/get', params: { taskId } }, LOOSE)) as unknown as DetailedTask;
}

export async function cancelTask(client: Client, taskId: string): Promise<Record<string, unknown>> {
  return client.request({ method: 'tasks/cancel', params: { taskId } }, LOOSE);
}

export async function updateTask(client: Client, taskId: string, inputResponses: Record<string, unknown>): Promise<Record<string, unknown>> {
  return client.request({ method: 'tasks/update', params: { taskId, inputResponses } }, LOOSE);
}

/** Polls tasks/get until the task is terminal (or has `status`), within `timeoutMs`. */
export async function untilTask(client: Client, taskId: string, options: { status?: string; timeoutMs?: number } = {}): Promise<DetailedTask> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const task = await getTask(client, taskId);
    if (task.status === options.status || ['completed', 'failed', 'cancelled'].includes(task.status)) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} still ${task.status} after ${options.timeoutMs ?? 15_000} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The JSON-RPC error code a request was refused with (fails when it was not refused). */
export async function errorCode(request: Promise<unknown>): Promise<number> {
  try {
    await request;
  } catch (error) {
    return (error as { code?: number }).code ?? NaN;
  }
  throw new Error('the request was not refused');
}

/**
 * A Redis prefix of the test's own (under the machine's Redis), and how to delete every key under
 * it afterwards.
 */
export function redisPrefix(url: string): { prefix: string; clean: () => Promise<void> } {
  const prefix = `suite-test-tasks-${process.pid}-${randomBytes(4).toString('hex')}:`;
  return {
    prefix,
    clean: async () => {
      const redis = new Redis(url);
      try {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        redis.disconnect();
      }
    },
  };
}
