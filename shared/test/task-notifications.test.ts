import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Client } from '@modelcontextprotocol/client';
import { callTool, connectTaskClient } from '@suite/test-kit/tasks';
import { ChangeHub, Logger, SuiteServer, TaskRuntime, serveHttp, type RunningHttp, type SessionInfo } from '../src/index.js';

/**
 * One 2026-07-28 listen stream that follows a resource and a task at once, over in-process HTTP:
 * the SDK's stream keeps carrying its own change kinds, and the task notifications go between
 * its frames (see transports/task-listen.ts).
 */
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

describe('a listen stream following a resource and a task', () => {
  let dir: string;
  let http: RunningHttp | undefined;
  let hub: ChangeHub | undefined;
  let runtime: TaskRuntime | undefined;
  const clients: Client[] = [];

  beforeAll(() => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'task-notes-')));
    writeFileSync(path.join(dir, 'watched.txt'), 'one');
    return () => rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    await http?.close();
    await hub?.close();
    await runtime?.close();
  });

  it('carries resources/updated and the task notifications, the acknowledgement naming both', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    hub = new ChangeHub({ debounceMs: 20 });
    runtime = new TaskRuntime({ afterMs: 100 });
    const file = path.join(dir, 'watched.txt');
    // The session decides the principal: the task's (from tools/call) and the stream's are the same caller's.
    const build = (session: SessionInfo): SuiteServer => {
      const server = new SuiteServer({ name: '@suite/test-task-notes', version: '0.0.0', session, changes: hub!, tasks: runtime! });
      server.tool({
        name: 'held',
        description: 'Answers once the test lets it.',
        input: z.object({}),
        annotations: { title: 'Held', ...readOnly },
        longRunning: true,
        handler: async () => {
          await gate;
          return 'released';
        },
      });
      server.resource({
        uri: 'probe://watched',
        name: 'watched',
        mimeType: 'text/plain',
        read: async () => ({ uri: 'probe://watched', mimeType: 'text/plain', text: 'x' }),
        subscribe: async () => ({ path: file }),
      });
      return server;
    };
    http = await serveHttp(build, { port: 0, host: '127.0.0.1', log: new Logger('task-notes') });
    const client = await connectTaskClient(http.url);
    clients.push(client);
    const heard: { method: string; params: Record<string, unknown> }[] = [];
    client.fallbackNotificationHandler = async (n) => {
      heard.push({ method: n.method, params: (n.params ?? {}) as Record<string, unknown> });
    };
    const updated: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updated.push(n.params.uri);
    });

    const { task } = await callTool(client, 'held', {});
    expect(task?.status).toBe('working');
    const subscription = await client.listen({ resourceSubscriptions: ['probe://watched'], taskIds: [task!.taskId] } as never);
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['probe://watched']);
    const taskStatuses = (): unknown[] => heard.filter((n) => n.method === 'notifications/tasks').map((n) => n.params.status);
    await expect.poll(taskStatuses, { timeout: 5000 }).toEqual(['working']);

    writeFileSync(file, `changed ${Date.now()}`);
    await expect.poll(() => updated, { timeout: 5000 }).toContain('probe://watched');
    release();
    await expect.poll(taskStatuses, { timeout: 5000 }).toEqual(['working', 'completed']);
    const completed = heard.find((n) => n.params.status === 'completed')!;
    expect(completed.params.result).toMatchObject({ content: [{ type: 'text', text: 'released' }] });
    await subscription.close();
  });
});
