import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SuiteServer, ToolError, encodeCursor, paginate } from '../src/index.js';
import { connectInProcess, type TestSession } from '@suite/test-kit';

function build(): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-test', version: '1.2.3', instructions: 'test server' });
  server.tool({
    name: 'echo',
    description: 'Echoes its input.',
    input: z.object({ text: z.string().describe('What to echo'), times: z.number().int().min(1).max(5).default(1) }),
    aliases: { message: 'text', count: 'times', repeat: 'times' },
    output: z.object({ echoed: z.string(), length: z.number() }),
    annotations: { title: 'Echo', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ text, times }) => {
      const echoed = text.repeat(times);
      return { text: echoed, structured: { echoed, length: echoed.length } };
    },
  });
  server.tool({
    name: 'fail_expected',
    description: 'Fails with a ToolError.',
    input: z.object({}),
    annotations: { title: 'Fail (expected)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async () => {
      throw ToolError.notFound('Not found: notes.txt');
    },
  });
  server.tool({
    name: 'fail_unexpected',
    description: 'Throws a plain error carrying a secret and a host path.',
    input: z.object({}),
    annotations: { title: 'Fail (unexpected)', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    handler: async () => {
      throw new Error('connect failed for postgres://admin:hunter2@db/prod at /srv/secret/config.json');
    },
  });
  return server;
}

describe('tools', () => {
  let session: TestSession;
  afterEach(async () => session?.close());

  it('lists every tool with complete annotations, input and output schemas', async () => {
    session = await connectInProcess(build());
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['echo', 'fail_expected', 'fail_unexpected']);
    for (const tool of tools) {
      expect(tool.annotations).toBeDefined();
      for (const key of ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        expect(tool.annotations![key], `${tool.name}.${key}`).not.toBeUndefined();
      }
      expect(tool.inputSchema.type).toBe('object');
    }
    const echo = tools[0]!;
    expect(echo.inputSchema.required).toEqual(['text']);
    expect((echo.inputSchema.properties as Record<string, { description?: string }>).text!.description).toBe('What to echo');
    expect(echo.outputSchema?.properties).toHaveProperty('echoed');
    expect(session.client.getServerVersion()).toMatchObject({ name: '@suite/server-test', version: '1.2.3' });
    expect(session.client.getInstructions()).toBe('test server');
  });

  it('returns text and validated structuredContent', async () => {
    session = await connectInProcess(build());
    const out = await session.callTool('echo', { text: 'ab', times: 2 });
    expect(out).toMatchObject({ isError: false, text: 'abab', structured: { echoed: 'abab', length: 4 } });
  });

  it('turns invalid arguments into an actionable isError result', async () => {
    session = await connectInProcess(build());
    const out = await session.callTool('echo', { text: 3 });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^Invalid arguments for echo: text: /);
  });

  it('accepts the older names of arguments without publishing them, and refuses a name given twice', async () => {
    session = await connectInProcess(build());
    const { tools } = await session.client.listTools();
    expect(Object.keys(tools[0]!.inputSchema.properties ?? {})).toEqual(['text', 'times']);
    expect(await session.callTool('echo', { message: 'ab', count: 2 })).toMatchObject({ isError: false, text: 'abab' });
    expect(await session.callTool('echo', { text: 'ab', repeat: 3 })).toMatchObject({ isError: false, text: 'ababab' });
    for (const args of [{ text: 'a', message: 'b' }, { text: 'a', count: 2, repeat: 2 }, { text: 'a', times: 2, count: 2 }]) {
      const out = await session.callTool('echo', args);
      expect(out.isError, JSON.stringify(args)).toBe(true);
      expect(out.text).toMatch(/^Invalid arguments for echo: (text|times): given twice \((message|count|repeat) is another name for (text|times)\); give it once\.$/);
    }
    // An own __proto__ key (as JSON.parse makes it) stays a property: it cannot lend the arguments a prototype.
    expect((await session.callTool('echo', JSON.parse('{"message":"x","__proto__":{"times":5}}') as Record<string, unknown>)).text).toBe('x');
  });

  it('treats an optional argument sent as null as absent (as clients of the archived servers send it), a required one as invalid', async () => {
    session = await connectInProcess(build());
    expect(await session.callTool('echo', { text: 'ab', times: null })).toMatchObject({ isError: false, text: 'ab' });
    expect(await session.callTool('echo', { message: 'ab', count: null })).toMatchObject({ isError: false, text: 'ab' });
    const required = await session.callTool('echo', { text: null, times: 2 });
    expect(required.isError).toBe(true);
    expect(required.text).toMatch(/^Invalid arguments for echo: text: /);
  });

  it('shows the message of an expected failure', async () => {
    session = await connectInProcess(build());
    const out = await session.callTool('fail_expected');
    expect(out).toMatchObject({ isError: true, text: 'Not found: notes.txt' });
  });

  it('hides the detail of an unexpected failure behind an error id: no stack, secret or path', async () => {
    session = await connectInProcess(build());
    const out = await session.callTool('fail_unexpected');
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^fail_unexpected failed unexpectedly \(error id [0-9a-f]{8}\)\./);
    expect(out.text).not.toMatch(/hunter2|\/srv\/secret|at .*\.ts:\d+|Error:/);
  });

  it('answers a cursor the server did not issue, given to a paging tool, with an isError saying so', async () => {
    const server = new SuiteServer({ name: '@suite/server-test', version: '1.2.3' }).tool({
      name: 'page',
      description: 'Pages through letters.',
      input: z.object({ cursor: z.string().optional() }),
      annotations: { title: 'Page', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: async ({ cursor }) => JSON.stringify(paginate('letters', ['a', 'b', 'c'], cursor, 2)),
    });
    session = await connectInProcess(server);
    const first = JSON.parse((await session.callTool('page', {})).text) as { items: string[]; nextCursor: string };
    expect(JSON.parse((await session.callTool('page', { cursor: first.nextCursor })).text)).toEqual({ items: ['c'] });
    for (const cursor of ['garbage', encodeCursor('other-list', { offset: 1 }), encodeCursor('letters', { offset: -1 })]) {
      expect(await session.callTool('page', { cursor })).toMatchObject({ isError: true, text: expect.stringMatching(/^Invalid cursor: /) });
    }
  });

  it('refuses a string argument that is not well-formed Unicode (an unpaired surrogate) before the handler runs (found by the fuzzer)', async () => {
    session = await connectInProcess(build());
    for (const text of ['\udc00x', 'a\ud800', 'ok \ud83d']) {
      const out = await session.callTool('echo', { text });
      expect(out).toMatchObject({ isError: true, text: 'Invalid arguments for echo: text: contains an unpaired UTF-16 surrogate, which is not Unicode text; send the characters themselves.' });
    }
    // Characters outside the Basic Multilingual Plane, as surrogate pairs, are fine.
    expect((await session.callTool('echo', { text: '\ud83d\ude00 \u{1D518}' })).isError).toBe(false);
  });

  it('keeps unknown tools a protocol error', async () => {
    session = await connectInProcess(build());
    await expect(session.client.callTool({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('keeps malformed requests a protocol error', async () => {
    session = await connectInProcess(build());
    await expect(session.client.request({ method: 'tools/call', params: { arguments: {} } } as never, z.object({}).passthrough())).rejects.toMatchObject({ code: -32602 });
  });
});

describe('secrets', () => {
  it('never shows a registered secret in an error result or a log notification', async () => {
    const { registerSecret } = await import('../src/index.js');
    registerSecret('tok_abcdef123456');
    const server = new SuiteServer({ name: '@suite/server-secret', version: '0.0.0' });
    server.tool({
      name: 'leaky',
      description: 'Fails with a message that contains a token.',
      input: z.object({}),
      annotations: { title: 'Leaky', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      handler: async (_args, ctx) => {
        ctx.log.warning('calling the API with tok_abcdef123456', { header: 'Bearer tok_abcdef123456' });
        throw ToolError.unavailable('The API refused token tok_abcdef123456.');
      },
    });
    const session = await connectInProcess(server);
    try {
      const out = await session.callTool('leaky');
      expect(out.text).toBe('The API refused token [redacted].');
      await expect.poll(() => session.received('notifications/message').length).toBe(1);
      expect(JSON.stringify(session.received('notifications/message'))).not.toContain('tok_abcdef123456');
    } finally {
      await session.close();
    }
  });
});
