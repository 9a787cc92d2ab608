import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { Logger, serveHttp, type RunningHttp } from '../src/index.js';
import { probeServer } from './fixtures/probe-server.js';
import { realpath } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { makeTempDir } from '@suite/test-kit';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

function rawPost(port: number, headers: Record<string, string>, body: unknown = INIT, pathName = '/mcp'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path: pathName, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } },
      (res) => {
        let data = '';
        res.on('data', (c) => (data += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

function rawGet(port: number, pathName: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathName, method: 'GET', headers }, (res) => {
      resolve(res.statusCode ?? 0);
      res.destroy();
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP transport', () => {
  let running: RunningHttp | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function start(options: { authToken?: string; idleTimeoutMs?: number; releaseMemoryAfter?: number; log?: Logger } = {}): Promise<RunningHttp> {
    running = await serveHttp(() => probeServer({ directories: [] }), { port: 0, host: '127.0.0.1', log: new Logger('http-test'), ...options });
    return running;
  }

  it('serves Streamable HTTP to an SDK client, one server per session', async () => {
    const server = await start();
    const clients = [new Client({ name: 'a', version: '0' }), new Client({ name: 'b', version: '0' })];
    for (const client of clients) await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    expect(server.sessionCount()).toBe(2);
    const tools = await clients[0]!.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('count');
    const out = await clients[1]!.callTool({ name: 'log', arguments: { levels: ['info'] } });
    expect(out.content).toEqual([{ type: 'text', text: 'logged' }]);
    for (const client of clients) await client.close();
  });

  it('asks a 2025 client for its roots once its GET stream is open (asked before, the request had nowhere to go)', async () => {
    const { dir, cleanup } = await makeTempDir('http-roots-');
    try {
      const server = await start();
      const client = new Client({ name: 'roots', version: '0' }, { capabilities: { roots: { listChanged: true } } });
      let asked = 0;
      client.setRequestHandler(ListRootsRequestSchema, async () => {
        asked += 1;
        return { roots: [{ uri: pathToFileURL(dir).href }] };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const started = Date.now();
      const out = await client.callTool({ name: 'allowed_directories', arguments: {} });
      // Without the answer the call would wait out the 5 s roots wait and see no directories.
      expect((out.structuredContent as { directories: string[] }).directories).toEqual([await realpath(dir)]);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(asked).toBe(1);
      await client.close();
    } finally {
      await cleanup();
    }
  });

  it('rejects a foreign Host header with 403 (DNS rebinding)', async () => {
    const server = await start();
    expect((await rawPost(server.port, { host: 'evil.example' })).status).toBe(403);
    expect((await rawPost(server.port, { host: `evil.example:${server.port}` })).status).toBe(403);
    expect(await rawGet(server.port, '/sse', { host: 'evil.example' })).toBe(403);
    expect((await rawPost(server.port, { host: `localhost:${server.port}` })).status).toBe(200);
  });

  it('rejects a foreign Origin with 403 and accepts loopback origins', async () => {
    const server = await start();
    const host = `127.0.0.1:${server.port}`;
    expect((await rawPost(server.port, { host, origin: 'http://evil.example' })).status).toBe(403);
    expect((await rawPost(server.port, { host, origin: 'null' })).status).toBe(403);
    expect(await rawGet(server.port, '/sse', { host, origin: 'https://evil.example' })).toBe(403);
    expect((await rawPost(server.port, { host, origin: 'http://localhost:6274' })).status).toBe(200);
  });

  it('requires the bearer token when one is set', async () => {
    const server = await start({ authToken: 's3cret-token' });
    const host = `127.0.0.1:${server.port}`;
    expect((await rawPost(server.port, { host })).status).toBe(401);
    expect((await rawPost(server.port, { host, authorization: 'Bearer wrong' })).status).toBe(401);
    expect((await rawPost(server.port, { host, authorization: 'Bearer s3cret-token-and-more' })).status).toBe(401);
    const denied = await rawPost(server.port, { host, authorization: 'Bearer nope' });
    expect(denied.body).not.toContain('s3cret');
    expect(await rawGet(server.port, '/sse', { host })).toBe(401);

    const client = new Client({ name: 'c', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: { Authorization: 'Bearer s3cret-token' } } }));
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    await client.close();
  });

  it('serves the legacy HTTP+SSE endpoints under the same checks', async () => {
    const server = await start({ authToken: 'tok' });
    const client = new Client({ name: 'legacy', version: '0' });
    const headers = { Authorization: 'Bearer tok' };
    await client.connect(
      new SSEClientTransport(new URL(`http://127.0.0.1:${server.port}/sse`), {
        requestInit: { headers },
        eventSourceInit: { fetch: (url, init) => fetch(url, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } }) },
      }),
    );
    const out = await client.callTool({ name: 'log', arguments: { levels: [] } });
    expect(out.content).toEqual([{ type: 'text', text: 'logged' }]);
    expect((await rawPost(server.port, { host: 'evil.example' }, {}, '/messages?sessionId=x')).status).toBe(403);
    await client.close();
  });

  it('answers an unknown session with 404 and a non-initialize first request with 400', async () => {
    const server = await start();
    const host = `127.0.0.1:${server.port}`;
    expect((await rawPost(server.port, { host, 'mcp-session-id': 'no-such-session' }, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(404);
    expect((await rawPost(server.port, { host }, { jsonrpc: '2.0', id: 2, method: 'ping' })).status).toBe(400);
  });

  it('answers a body over the limit with 413, and a keep-alive client can go on using its connections', async () => {
    running = await serveHttp(() => probeServer({ directories: [] }), { port: 0, host: '127.0.0.1', log: new Logger('http-test'), maxBodyBytes: 256 * 1024 });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const big = JSON.stringify({ ...INIT, params: { ...INIT.params, padding: 'x'.repeat(2 * 1024 * 1024) } });
    const statuses: (number | string)[] = [];
    // fetch keeps connections alive and reuses them: an answer that resets the connection instead of
    // draining it shows up as a failed request (ECONNRESET) here, not as a 413.
    for (let i = 0; i < 8; i++) {
      const answer = await fetch(running.url, { method: 'POST', headers, body: i % 2 === 0 ? big : JSON.stringify(INIT), signal: AbortSignal.timeout(3000) }).then(
        async (r) => {
          await r.text();
          return r.status;
        },
        (error: Error & { cause?: { code?: string } }) => error.cause?.code ?? error.name,
      );
      statuses.push(answer);
    }
    expect(statuses).toEqual([413, 200, 413, 200, 413, 200, 413, 200]);
  }, 60_000);

  it('closes idle sessions', async () => {
    const server = await start({ idleTimeoutMs: 200 });
    const client = new Client({ name: 'idle', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    expect(server.sessionCount()).toBe(1);
    await expect.poll(() => server.sessionCount(), { timeout: 3000, interval: 50 }).toBe(0);
    await client.close();
  });

  it('runs a full garbage collection once enough sessions have expired', async () => {
    const log = new Logger('http-test');
    const messages: string[] = [];
    log.attach((_level, _logger, data) => messages.push(typeof data === 'string' ? data : String((data as { message?: unknown }).message)));
    const server = await start({ idleTimeoutMs: 200, releaseMemoryAfter: 3, log });
    for (let i = 0; i < 3; i++) expect((await rawPost(server.port, { host: `127.0.0.1:${server.port}` })).status).toBe(200);
    expect(server.sessionCount()).toBe(3);
    await expect.poll(() => server.sessionCount(), { timeout: 3000, interval: 50 }).toBe(0);
    // After the batch settles (1 s).
    await expect.poll(() => messages.filter((m) => m.startsWith('full garbage collection')), { timeout: 5000, interval: 100 }).toEqual(['full garbage collection after 3 sessions closed']);
  });
});
