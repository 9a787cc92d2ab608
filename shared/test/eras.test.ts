import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ChangeHub, Logger, RequestStateSeal, SuiteServer, serveHttp, type RunningHttp } from '../src/index.js';
import { probeServer } from './fixtures/probe-server.js';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { expectChangeAfterAck, expectRefusedNotFollowed } from '@suite/test-kit/eras';

const MODERN = '2026-07-28';
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
  'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
};
const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** A JSON-RPC answer from an HTTP body, plain JSON or one SSE event. */
async function answerOf(response: Response): Promise<{ id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } }> {
  const text = await response.text();
  return JSON.parse(text.startsWith('{') ? text : /data: (.*)/.exec(text)![1]!) as never;
}
const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The probe server plus a tool that samples and a file resource that can be followed. */
function erasServer(dir: string, changes: ChangeHub): SuiteServer {
  const server = probeServer({ directories: [dir], changes });
  server.tool({
    name: 'ask_twice',
    description: 'Asks the client to sample twice and joins the answers.',
    input: z.object({ question: z.string() }),
    annotations: { title: 'Ask twice', ...readOnly },
    handler: async ({ question }, ctx) => {
      const first = await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: `${question} (1)` } }], maxTokens: 10 });
      const second = await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: `${question} (2)` } }], maxTokens: 10 });
      return `${first.text} + ${second.text}`;
    },
  });
  server.tool({
    name: 'confirm',
    description: 'Asks the user to confirm.',
    input: z.object({}),
    annotations: { title: 'Confirm', ...readOnly },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({ message: 'Go ahead?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } });
      return `${answer.action} ${JSON.stringify(answer.content ?? {})}`;
    },
  });
  server.prompt({
    name: 'greet',
    description: 'Greets someone.',
    args: z.object({ who: z.string().describe('Whom to greet') }),
    complete: { who: async (value) => ['alice', 'albert', 'bob'].filter((n) => n.startsWith(value)) },
    get: async ({ who }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Hello, ${who}.` } }] }),
  });
  const file = path.join(dir, 'watched.txt');
  server.resource({
    uri: 'probe://watched',
    name: 'watched',
    mimeType: 'text/plain',
    read: async () => ({ uri: 'probe://watched', mimeType: 'text/plain', text: 'x' }),
    subscribe: async () => ({ path: file }),
  });
  // Names nothing to follow: subscribing to it would promise changes that are never told.
  server.resource({ uri: 'probe://static', name: 'static', mimeType: 'text/plain', read: async () => ({ uri: 'probe://static', mimeType: 'text/plain', text: 's' }) });
  return server;
}

function modernClient(capabilities: Record<string, unknown> = {}): ClientV2 {
  return new ClientV2({ name: 'eras-test', version: '0' }, { capabilities, versionNegotiation: { mode: { pin: MODERN } } });
}

describe('both protocol eras from one factory', () => {
  let dir: string;
  let http: RunningHttp | undefined;
  let hub: ChangeHub;
  const clients: { close(): Promise<void> }[] = [];

  beforeAll(() => {
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'eras-')));
    writeFileSync(path.join(dir, 'watched.txt'), 'one');
    return () => rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    await http?.close();
    http = undefined;
    await hub?.close();
  });

  async function start(): Promise<URL> {
    hub = new ChangeHub({ debounceMs: 20 });
    http = await serveHttp(() => erasServer(dir, hub), { port: 0, host: '127.0.0.1', log: new Logger('eras') });
    return new URL(http.url);
  }

  it('serves a 2026-07-28 client over HTTP: discover, tools with 2020-12 schemas, calls, -32602 for an unknown resource', async () => {
    const url = await start();
    const client = modernClient();
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(url));
    expect(client.getProtocolEra()).toBe('modern');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('count');
    expect(tools.find((t) => t.name === 'resolve')?.inputSchema).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
    const result = await client.callTool({ name: 'resolve', arguments: { path: 'watched.txt' } });
    expect(result.structuredContent).toMatchObject({ real: path.join(dir, 'watched.txt'), exists: true });
    await expect(client.readResource({ uri: 'probe://nothing' })).rejects.toMatchObject({ code: -32602 });
    // No sessions in this era: nothing was kept open.
    expect(http!.sessionCount()).toBe(0);
  });

  it('answers a 2025 client (a v1 SDK client) on the same endpoint with a session, as before', async () => {
    const url = await start();
    const client = new ClientV1({ name: 'old', version: '0' });
    clients.push(client);
    await client.connect(new StreamableV1(url));
    const result = await client.callTool({ name: 'resolve', arguments: { path: 'watched.txt' } });
    expect(result.structuredContent).toMatchObject({ exists: true });
    expect(http!.sessionCount()).toBe(1);
  });

  it('negotiates the newest era in auto mode', async () => {
    const url = await start();
    const client = new ClientV2({ name: 'auto', version: '0' }, { versionNegotiation: { mode: 'auto' } });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(url));
    expect(client.getProtocolEra()).toBe('modern');
  });

  it('asks for sampling through input_required, round after round, and runs the tool once all answers are in', async () => {
    const url = await start();
    const client = modernClient({ sampling: {} });
    clients.push(client);
    const asked: string[] = [];
    client.setRequestHandler('sampling/createMessage', async (request) => {
      const text = (request.params.messages[0]!.content as { text: string }).text;
      asked.push(text);
      return { role: 'assistant', content: { type: 'text', text: `answer to ${text}` }, model: 'test' };
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    const result = await client.callTool({ name: 'ask_twice', arguments: { question: 'why' } });
    expect(result.content).toEqual([{ type: 'text', text: 'answer to why (1) + answer to why (2)' }]);
    expect(asked).toEqual(['why (1)', 'why (2)']);
  });

  it('asks for roots through input_required when the client offers them, and narrows the command-line directories', async () => {
    const url = await start();
    const sub = path.join(dir, 'sub');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(sub, { recursive: true });
    const client = modernClient({ roots: {} });
    clients.push(client);
    client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: pathToFileURL(sub).href, name: 'sub' }] }));
    await client.connect(new StreamableHTTPClientTransport(url));
    const result = await client.callTool({ name: 'allowed_directories', arguments: {} });
    expect(result.structuredContent).toMatchObject({ directories: [sub], source: 'command-line narrowed by client' });
    // A client without roots gets the command-line directories, with no round trip.
    const plain = modernClient();
    clients.push(plain);
    await plain.connect(new StreamableHTTPClientTransport(url));
    expect((await plain.callTool({ name: 'allowed_directories', arguments: {} })).structuredContent).toMatchObject({ directories: [dir], source: 'command-line' });
  });

  it('refuses a tampered requestState with a clear error', async () => {
    const url = await start();
    const body = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name: 'ask_twice',
        arguments: { question: 'x' },
        requestState: 'v1.eyJwIjp7fX0.AAAA',
        inputResponses: {},
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
          'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
        },
      },
    };
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'ask_twice' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    expect(text).toContain('-32602');
    expect(text).toMatch(/Invalid or expired requestState/);
  });

  it('delivers resources/updated on a subscriptions/listen stream when a followed file changes', async () => {
    const url = await start();
    const client = modernClient();
    clients.push(client);
    const updated: string[] = [];
    client.setNotificationHandler('notifications/resources/updated', (n) => {
      updated.push(n.params.uri);
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    const subscription = await client.listen({ resourceSubscriptions: ['probe://watched'] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual(['probe://watched']);
    await expect.poll(() => hub.isWatching(path.join(dir, 'watched.txt')), { timeout: 5000 }).toBe(true);
    writeFileSync(path.join(dir, 'watched.txt'), `changed ${Date.now()}`);
    await expect.poll(() => updated, { timeout: 5000 }).toContain('probe://watched');
    await subscription.close();
    // The stream's change sources go with it.
    await expect.poll(() => hub.isWatching(path.join(dir, 'watched.txt')), { timeout: 5000 }).toBe(false);
  });

  it('serves both eras over stdio from the built bin', async () => {
    const bin = path.join(import.meta.dirname, 'fixtures', 'stdio-bin.mjs');
    const modern = modernClient();
    clients.push(modern);
    await modern.connect(new StdioClientTransport({ command: process.execPath, args: [bin], stderr: 'ignore' }));
    expect(modern.getProtocolEra()).toBe('modern');
    expect((await modern.callTool({ name: 'ping', arguments: {} })).content).toEqual([{ type: 'text', text: 'pong' }]);
    const legacy = new ClientV2({ name: 'legacy', version: '0' });
    clients.push(legacy);
    await legacy.connect(new StdioClientTransport({ command: process.execPath, args: [bin], stderr: 'ignore' }));
    expect(legacy.getProtocolEra()).toBe('legacy');
    expect((await legacy.callTool({ name: 'ping', arguments: {} })).content).toEqual([{ type: 'text', text: 'pong' }]);
  });

  it('asks for elicitation through input_required', async () => {
    const url = await start();
    const client = modernClient({ elicitation: {} });
    clients.push(client);
    client.setRequestHandler('elicitation/create', async (request) => {
      expect(request.params.message).toBe('Go ahead?');
      return { action: 'accept', content: { ok: true } };
    });
    await client.connect(new StreamableHTTPClientTransport(url));
    const result = await client.callTool({ name: 'confirm', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'accept {"ok":true}' }]);
  });

  it('answers a 2026-07-28 call that needs a capability the client did not declare with HTTP 400 and -32021 naming it (sampling, elicitation)', async () => {
    const url = await start();
    const call = async (tool: string, declared: Record<string, unknown>) =>
      fetch(url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': tool },
        body: JSON.stringify({ jsonrpc: '2.0', id: 71, method: 'tools/call', params: { name: tool, arguments: tool === 'ask_twice' ? { question: 'q' } : {}, _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': declared } } }),
      });
    for (const [tool, declared, needed] of [
      ['ask_twice', { elicitation: {} }, 'sampling'],
      ['confirm', { sampling: {} }, 'elicitation'],
    ] as const) {
      const response = await call(tool, declared);
      expect(response.status).toBe(400);
      const answer = await answerOf(response);
      expect(answer.result).toBeUndefined();
      expect(answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { [needed]: {} } } });
      expect(answer.error!.message).toContain(needed);
    }
    // Declared, the same call goes on as usual (asks through input_required).
    const asked = await answerOf(await call('confirm', { elicitation: {} }));
    expect(asked.result).toMatchObject({ resultType: 'input_required' });
  });

  it('refuses an expired requestState, and one replayed into a call with other arguments', async () => {
    hub = new ChangeHub();
    const seal = new RequestStateSeal('a key of at least thirty-two bytes, for the test', 1);
    http = await serveHttp(
      () => {
        const server = new SuiteServer({ name: '@suite/server-seal', version: '0', requestState: seal });
        server.tool({
          name: 'ask',
          description: 'Samples once.',
          input: z.object({ q: z.string() }),
          annotations: { title: 'Ask', ...readOnly },
          handler: async ({ q }, ctx) => (await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: q } }], maxTokens: 5 })).text,
        });
        return server;
      },
      { port: 0, host: '127.0.0.1', log: new Logger('eras') },
    );
    const call = async (args: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> => {
      const response = await fetch(http!.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'ask' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'ask',
            arguments: args,
            ...extra,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
              'io.modelcontextprotocol/clientCapabilities': { sampling: {} },
            },
          },
        }),
      });
      return response.text();
    };
    const first = JSON.parse(await call({ q: 'x' })) as { result: { resultType: string; requestState: string } };
    expect(first.result.resultType).toBe('input_required');
    const answers = { inputResponses: { sampling: { role: 'assistant', model: 'm', content: { type: 'text', text: 'answer' } } } };
    // In time and for the same call: the answer is used.
    expect(await call({ q: 'x' }, { requestState: first.result.requestState, ...answers })).toContain('"text":"answer"');
    // The same state with other arguments: refused.
    expect(await call({ q: 'other' }, { requestState: first.result.requestState, ...answers })).toMatch(/belongs to another request/);
    await new Promise((r) => setTimeout(r, 2100));
    expect(await call({ q: 'x' }, { requestState: first.result.requestState, ...answers })).toMatch(/Invalid or expired requestState/);
  });

  it('delivers a change made right after the acknowledgement (HTTP listen) or the subscribe answer (in-process 2025), every time', async () => {
    const url = await start();
    const file = path.join(dir, 'watched.txt');
    const followed = { uri: 'probe://watched', change: async (round: number) => writeFileSync(file, `round ${round}`), refused: ['probe://nothing', 'probe://static', 'nothing://at/all'] };
    const modern = modernClient();
    clients.push(modern);
    await modern.connect(new StreamableHTTPClientTransport(url));
    await expectChangeAfterAck(modern, followed);
    await expectRefusedNotFollowed(modern, followed);
    // A 2025 session in the same process.
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = erasServer(dir, hub);
    await server.connect(serverSide);
    const legacy = new ClientV2({ name: 'in-process', version: '0' });
    clients.push(legacy, server);
    await legacy.connect(clientSide as never);
    await expectChangeAfterAck(legacy, followed);
    await expectRefusedNotFollowed(legacy, followed);
  });

  it('acknowledges a listen stream for the resources it follows only; naming none it follows, the stream ends at once', async () => {
    const url = await start();
    const client = modernClient();
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(url));
    const mixed = await client.listen({ resourceSubscriptions: ['nothing://at/all', 'probe://watched', 'probe://nothing'] });
    expect(mixed.honoredFilter.resourceSubscriptions).toEqual(['probe://watched']);
    await mixed.close();
    const none = await client.listen({ resourceSubscriptions: ['probe://nothing'] });
    expect(none.honoredFilter).toEqual({});
    expect(await none.closed).toBe('graceful');
    // What was refused was never followed.
    expect(hub.activeSubscriptions).toBe(0);
  });

  it('answers JSON nested past the bound with 400 and a JSON-RPC error naming it, in both eras, and keeps serving', async () => {
    const url = await start();
    const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const modern = await fetch(url, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
      body: `{"jsonrpc":"2.0","id":41,"method":"tools/list","params":{"_meta":{${JSON.stringify(ENVELOPE).slice(1, -1)},"x":${nested(5000)}}}}`,
    });
    expect(modern.status).toBe(400);
    expect(await modern.json()).toMatchObject({ id: 41, error: { code: -32600, message: expect.stringMatching(/more than 512 levels deep/), data: { maxNesting: 512 } } });
    const init = await fetch(url, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } }),
    });
    const session = init.headers.get('mcp-session-id')!;
    await init.text();
    const sessionHeaders = { ...JSON_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' };
    const legacy = await fetch(url, { method: 'POST', headers: sessionHeaders, body: `{"jsonrpc":"2.0","id":42,"method":"tools/list","params":{"_meta":{"x":${nested(5000)}}}}` });
    expect(legacy.status).toBe(400);
    expect(await legacy.json()).toMatchObject({ id: 42, error: { code: -32600, data: { maxNesting: 512 } } });
    // The session still serves, nesting within the bound included.
    const fine = await fetch(url, { method: 'POST', headers: sessionHeaders, body: `{"jsonrpc":"2.0","id":43,"method":"tools/list","params":{"_meta":{"x":${nested(400)}}}}` });
    expect(fine.status).toBe(200);
    expect((await answerOf(fine)).result?.tools).toBeDefined();
  });

  it('tells a 2026-07-28 request that carries Mcp-Session-Id that requests of that era carry no session', async () => {
    const url = await start();
    const legacy = new ClientV2({ name: 'legacy', version: '0' });
    clients.push(legacy);
    const transport = new StreamableHTTPClientTransport(url);
    await legacy.connect(transport);
    for (const session of [transport.sessionId!, 'no-such-session']) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 51, method: 'tools/list', params: { _meta: ENVELOPE } }),
      });
      expect(response.status).toBe(400);
      const answer = await answerOf(response);
      expect(answer.id).toBe(51);
      expect(answer.error?.message).toMatch(/2026-07-28 requests carry no session/);
      expect(answer.error?.message).not.toMatch(/Unsupported protocol version|Start a new session/);
    }
    // The 2025 session it named is untouched.
    expect((await legacy.callTool({ name: 'count', arguments: { n: 1 } })).isError).toBeFalsy();
  });

  it('ignores inputResponses the server never asked for: without a requestState, and beyond what the requestState asked', async () => {
    const url = await start();
    const call = async (extra: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { ...JSON_HEADERS, 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'ask_twice' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 61, method: 'tools/call', params: { name: 'ask_twice', arguments: { question: 'q' }, ...extra, _meta: ENVELOPE } }),
      });
      return (await answerOf(response)).result!;
    };
    const sampled = (text: string): Record<string, unknown> => ({ role: 'assistant', model: 'm', content: { type: 'text', text } });
    // Answers offered before any question: not used, the server asks for the first.
    const unasked = await call({ inputResponses: { sampling: sampled('forged 1'), 'sampling-2': sampled('forged 2') } });
    expect(unasked).toMatchObject({ resultType: 'input_required', inputRequests: { sampling: expect.anything() } });
    // The first answer given as asked, plus one for the second question before it was put: the second is asked anyway.
    const second = await call({ requestState: unasked.requestState, inputResponses: { sampling: sampled('one'), 'sampling-2': sampled('forged 2') } });
    expect(second).toMatchObject({ resultType: 'input_required', inputRequests: { 'sampling-2': expect.anything() } });
    const done = await call({ requestState: second.requestState, inputResponses: { 'sampling-2': sampled('two') } });
    expect(done.content).toEqual([{ type: 'text', text: 'one + two' }]);
  });

  it('serves prompts and completion to a 2026-07-28 client as to a 2025 one', async () => {
    const url = await start();
    const modern = modernClient();
    clients.push(modern);
    await modern.connect(new StreamableHTTPClientTransport(url));
    const legacy = new ClientV1({ name: 'old', version: '0' });
    clients.push(legacy);
    await legacy.connect(new StreamableV1(url));
    for (const client of [modern, legacy] as const) {
      const prompt = await client.getPrompt({ name: 'greet', arguments: { who: 'bob' } });
      expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Hello, bob.' } }]);
      const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'al' } });
      expect(completion.completion.values).toEqual(['alice', 'albert']);
      await expect(client.getPrompt({ name: 'nope', arguments: {} })).rejects.toMatchObject({ code: -32602 });
    }
  });
});
