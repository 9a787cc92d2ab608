import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SuiteServer, paginate, encodeCursor } from '../src/index.js';
import { connectInProcess, type TestSession } from '@suite/test-kit';
import { probeServer } from './fixtures/probe-server.js';

describe('cancellation, progress and logging', () => {
  let session: TestSession;
  afterEach(async () => session?.close());

  it('aborts a long handler on notifications/cancelled', async () => {
    const server = probeServer({ directories: [] });
    session = await connectInProcess(server);
    const controller = new AbortController();
    const call = session.callTool('wait_for_cancel', {}, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    controller.abort('user pressed stop');
    await expect(call).rejects.toThrow();
    await expect.poll(() => server.observed.aborted, { timeout: 1000, interval: 10 }).toBe(true);
    expect(Date.now() - started).toBeLessThan(1000);
    // The session is still usable afterwards.
    expect((await session.callTool('log', { levels: [] })).text).toBe('logged');
  });

  it('reports progress when the request carries a progress token', async () => {
    session = await connectInProcess(probeServer());
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const out = await session.callTool('count', { n: 3 }, { onprogress: (p) => seen.push(p) });
    expect(out.text).toBe('counted to 3');
    expect(seen.map((p) => p.progress)).toEqual([1, 2, 3]);
    expect(seen[2]).toMatchObject({ total: 3, message: 'step 3' });
  });

  it('sends no progress without a token', async () => {
    session = await connectInProcess(probeServer());
    await session.callTool('count', { n: 2 });
    expect(session.received('notifications/progress')).toEqual([]);
  });

  it('sends log messages at or above the level the client set', async () => {
    session = await connectInProcess(probeServer());
    await session.client.setLoggingLevel('warning');
    await session.callTool('log', { levels: ['debug', 'info', 'warning', 'error'] });
    await expect.poll(() => session.received('notifications/message').length).toBe(2);
    const levels = session.received('notifications/message').map((n) => n.params?.level);
    expect(levels).toEqual(['warning', 'error']);
    expect(session.received('notifications/message')[0]!.params).toMatchObject({ logger: 'probe', data: 'a warning message' });
  });

  it('lets tools use client sampling and elicitation through the test kit', async () => {
    session = await connectInProcess(probeServer(), {
      sampling: async () => ({ role: 'assistant', content: { type: 'text', text: 'forty-two' }, model: 'test-model' }),
      elicitation: async () => ({ action: 'accept', content: { ok: true } }),
    });
    const out = await session.callTool('ask_model', { question: 'meaning?' });
    expect(JSON.parse(out.text)).toEqual({ sampled: 'forty-two', elicited: 'accept' });
  });

  it('reports a clear isError when the client cannot sample', async () => {
    session = await connectInProcess(probeServer());
    const out = await session.callTool('ask_model', { question: 'x' });
    expect(out).toMatchObject({ isError: true, text: 'The client does not support sampling.' });
  });
});

describe('pagination, prompts and completion', () => {
  let session: TestSession;
  afterEach(async () => session?.close());

  function catalogServer(): SuiteServer {
    const server = new SuiteServer({ name: '@suite/server-catalog', version: '0.0.1', pageSize: 10 });
    const names = Array.from({ length: 25 }, (_, i) => `item-${String(i).padStart(2, '0')}`);
    server.resource({ uri: 'catalog://readme', name: 'readme', mimeType: 'text/plain', read: async () => ({ uri: 'catalog://readme', text: 'hi' }) });
    server.resourceTemplate({
      uriTemplate: 'catalog://items/{name}',
      name: 'item',
      read: async (uri, vars) => ({ uri, mimeType: 'text/plain', text: `this is ${vars.name}` }),
      list: async (cursor) => {
        const page = paginate('items', names, cursor, 7);
        return { resources: page.items.map((n) => ({ uri: `catalog://items/${n}`, name: n })), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
      },
      complete: { name: (value) => names.filter((n) => n.startsWith(value)) },
    });
    server.prompt({
      name: 'describe_item',
      description: 'Describe an item.',
      args: z.object({ name: z.string().describe('Item name'), tone: z.string().optional().describe('Tone') }),
      complete: { name: (value) => names.filter((n) => n.startsWith(value)) },
      get: async ({ name, tone }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Describe ${name}${tone ? ` in a ${tone} tone` : ''}.` } }] }),
    });
    return server;
  }

  it('pages resources/list with opaque cursors until every resource is seen once', async () => {
    session = await connectInProcess(catalogServer());
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await session.client.listResources(cursor ? { cursor } : {});
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 20);
    expect(pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(26);
    expect(new Set(seen).size).toBe(26);
  });

  it('rejects a forged cursor with invalid params', async () => {
    session = await connectInProcess(catalogServer());
    await expect(session.client.listResources({ cursor: 'garbage' })).rejects.toMatchObject({ code: -32602 });
    await expect(session.client.listResources({ cursor: encodeCursor('other-list', { offset: 1 }) })).rejects.toMatchObject({ code: -32602 });
  });

  it('passes a listing\'s annotations (lastModified, audience, priority) to the client as they are', async () => {
    const server = new SuiteServer({ name: '@suite/server-annotated', version: '0.0.1' });
    server.resourceTemplate({
      uriTemplate: 'files://{name}',
      name: 'file',
      read: async (uri) => ({ uri, text: '' }),
      list: async () => ({
        resources: [
          { uri: 'files://a', name: 'a', annotations: { lastModified: '2026-11-20T08:30:15.250Z', audience: ['user', 'assistant'], priority: 0.5 } },
          { uri: 'files://b', name: 'b' },
        ],
      }),
    });
    session = await connectInProcess(server);
    const { resources } = await session.client.listResources();
    expect(resources).toEqual([
      { uri: 'files://a', name: 'a', annotations: { lastModified: '2026-11-20T08:30:15.250Z', audience: ['user', 'assistant'], priority: 0.5 } },
      { uri: 'files://b', name: 'b' },
    ]);
  });

  it('reads through a template and reports unknown resources as -32602 (both eras)', async () => {
    session = await connectInProcess(catalogServer());
    const read = await session.client.readResource({ uri: 'catalog://items/item-03' });
    expect(read.contents).toEqual([{ uri: 'catalog://items/item-03', mimeType: 'text/plain', text: 'this is item-03' }]);
    await expect(session.client.readResource({ uri: 'catalog://nothing' })).rejects.toMatchObject({ code: -32602 });
  });

  it('lists prompts with their arguments and completes argument values', async () => {
    session = await connectInProcess(catalogServer());
    const { prompts } = await session.client.listPrompts();
    expect(prompts[0]).toMatchObject({
      name: 'describe_item',
      arguments: [
        { name: 'name', description: 'Item name', required: true },
        { name: 'tone', description: 'Tone', required: false },
      ],
    });
    const got = await session.client.getPrompt({ name: 'describe_item', arguments: { name: 'item-01', tone: 'dry' } });
    expect(got.messages[0]!.content).toEqual({ type: 'text', text: 'Describe item-01 in a dry tone.' });
    await expect(session.client.getPrompt({ name: 'describe_item', arguments: {} })).rejects.toMatchObject({ code: -32602 });

    const completion = await session.client.complete({ ref: { type: 'ref/prompt', name: 'describe_item' }, argument: { name: 'name', value: 'item-1' } });
    expect(completion.completion.values).toHaveLength(10);
    const templateCompletion = await session.client.complete({ ref: { type: 'ref/resource', uri: 'catalog://items/{name}' }, argument: { name: 'name', value: 'item-2' } });
    expect(templateCompletion.completion.values).toEqual(['item-20', 'item-21', 'item-22', 'item-23', 'item-24']);
  });
});
