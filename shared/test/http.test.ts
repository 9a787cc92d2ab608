import http from 'node:http';
import net from 'node:net';
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

  describe('request bodies in flight', () => {
    /** A raw connection that sends the headers of a POST, then its body a few bytes at a time. */
    function trickle(port: number, headers: string, every: number): { status: Promise<number>; stop: () => void } {
      const socket = net.connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      let answer = '';
      let timer: NodeJS.Timeout | undefined;
      const status = new Promise<number>((resolve) => {
        socket.on('data', (chunk: Buffer) => {
          answer += chunk.toString();
          const match = /^HTTP\/1\.1 (\d+)/.exec(answer);
          if (match) resolve(Number(match[1]));
        });
        socket.on('close', () => resolve(0));
      });
      socket.write(headers);
      timer = setInterval(() => socket.write(headers.includes('chunked') ? '1\r\n \r\n' : ' '), every);
      const stop = (): void => {
        clearInterval(timer);
        timer = undefined;
        socket.destroy();
      };
      void status.then(() => clearInterval(timer));
      return { status, stop };
    }

    it('are bounded all together: 100 slow 4 MiB uploads hold a few MiB, the ones past the budget get 503 at once, the rest 408 at the deadline, and the budget comes back', async () => {
      running = await serveHttp(() => probeServer({ directories: [] }), {
        port: 0,
        host: '127.0.0.1',
        log: new Logger('http-test'),
        maxBodyBytesInFlight: 8 * 1024 * 1024,
        bodyTimeoutMs: 1_500,
      });
      const port = running.port;
      const head = (length: number): string =>
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\n\r\n`;
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
      const started = Date.now();
      const uploads = Array.from({ length: 100 }, () => trickle(port, head(4 * 1024 * 1024), 100));
      let chunked: ReturnType<typeof trickle> | undefined;
      try {
        const statuses = await Promise.all(uploads.map((u) => u.status));
        const elapsed = Date.now() - started;
        // Two 4 MiB bodies fit the 8 MiB budget; every other upload is refused before its body is read.
        expect(statuses.filter((s) => s === 503).length).toBe(98);
        expect(statuses.filter((s) => s === 408).length).toBe(2);
        expect(elapsed).toBeLessThan(6_000);
        // A body without a length is held to the same deadline (once the budget has room again).
        chunked = trickle(port, `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n`, 100);
        expect(await chunked.status).toBe(408);
        // The test process (the server included) grew by far less than the bodies declared (400 MiB).
        expect(rssPeak - rssBefore).toBeLessThan(64 * 1024 * 1024);
      } finally {
        clearInterval(sampler);
        for (const u of uploads) u.stop();
        chunked?.stop();
      }
      // Everything was given back: a request of the largest size is served again.
      const big = JSON.stringify({ ...INIT, params: { ...INIT.params, padding: 'x'.repeat(3 * 1024 * 1024) } });
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (let i = 0; i < 2; i++) {
        const answer = await fetch(running.url, { method: 'POST', headers, body: big });
        await answer.text();
        expect(answer.status).toBe(200);
      }
    }, 30_000);
  });

  it('closes idle sessions (a session whose GET stream is open is not idle: see http-streams.test.ts)', async () => {
    const server = await start({ idleTimeoutMs: 200 });
    expect((await rawPost(server.port, { host: `127.0.0.1:${server.port}` })).status).toBe(200);
    expect(server.sessionCount()).toBe(1);
    await expect.poll(() => server.sessionCount(), { timeout: 3000, interval: 50 }).toBe(0);
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
