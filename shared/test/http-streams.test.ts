/**
 * Streams and shutdown over HTTP: listen streams have a cap of their own that counts every one of
 * them, an open GET stream keeps its 2025 session alive, and a 2026-07-28 call cut by shutdown is
 * answered with a JSON-RPC error that says so.
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Logger, serveHttp, type RunningHttp } from '../src/index.js';
import { probeServer } from './fixtures/probe-server.js';

const MODERN = '2026-07-28';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };

/** The probe server with a resource, so that a listen stream for resource list changes is honoured. */
function withResource(): ReturnType<typeof probeServer> {
  const server = probeServer({ directories: [] });
  server.resource({ uri: 'probe://note', name: 'note', mimeType: 'text/plain', read: async () => ({ uri: 'probe://note', mimeType: 'text/plain', text: 'x' }) });
  return server;
}

function modernClient(): ClientV2 {
  return new ClientV2({ name: 'streams-test', version: '0' }, { versionNegotiation: { mode: { pin: MODERN } } });
}

describe('HTTP streams and shutdown', () => {
  let running: RunningHttp | undefined;
  const clients: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    await running?.close();
    running = undefined;
  });

  it('counts every subscriptions/listen stream against --max-listen-streams, list changes only too, and says streams when full', async () => {
    running = await serveHttp(withResource, { port: 0, host: '127.0.0.1', log: new Logger('streams'), maxSessions: 100, maxListenStreams: 2 });
    const open = async () => {
      const client = modernClient();
      clients.push(client);
      await client.connect(new StreamableHTTPClientTransport(new URL(running!.url)));
      const stream = await client.listen({ resourcesListChanged: true });
      expect(stream.honoredFilter).toEqual({ resourcesListChanged: true });
      return stream;
    };
    const first = await open();
    await open();
    await expect(open()).rejects.toThrow(/all 2 listen streams \(subscriptions\/listen\) are open/);
    await first.close();
    // The closed stream's place is free again.
    await expect.poll(async () => open().then(() => true, () => false), { timeout: 5000, interval: 100 }).toBe(true);
  });

  it('keeps a 2025 session whose client only listens (its GET stream open) past the idle timeout; once the stream closes, the session expires', async () => {
    running = await serveHttp(() => probeServer({ directories: [] }), { port: 0, host: '127.0.0.1', log: new Logger('streams'), idleTimeoutMs: 300 });
    const port = running.port;
    const headers = { host: `127.0.0.1:${port}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const opened = await fetch(running.url, { method: 'POST', headers, body: JSON.stringify(INIT) });
    const sessionId = opened.headers.get('mcp-session-id')!;
    await opened.text();
    const session = { ...headers, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    expect((await fetch(running.url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status).toBe(202);
    // The GET stream, held open without a request on it. (Its headers come with its first event, so
    // the test does not wait for them: the server has registered the stream once it answers.)
    let status = 0;
    const stream = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'GET', headers: { ...session, accept: 'text/event-stream' } }, (res) => {
      status = res.statusCode ?? 0;
      res.on('data', () => undefined);
    });
    stream.on('error', () => undefined);
    stream.end();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(running.sessionCount()).toBe(1);
    const ping = await fetch(running.url, { method: 'POST', headers: session, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
    expect(ping.status).toBe(200);
    await ping.text();
    // Not refused: no answer yet, or a 200.
    expect([0, 200]).toContain(status);
    stream.destroy();
    await expect.poll(() => running!.sessionCount(), { timeout: 5000, interval: 50 }).toBe(0);
  });

  it('answers a 2026-07-28 call cut by shutdown with a JSON-RPC error saying the server is shutting down, not an empty 499', async () => {
    running = await serveHttp(() => probeServer({ directories: [] }), { port: 0, host: '127.0.0.1', log: new Logger('streams') });
    const client = modernClient();
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(running.url)));
    const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = running.close();
    running = undefined;
    const message = await call;
    await closing;
    expect(message).toMatch(/shutting down/);
    expect(message).not.toMatch(/499/);
  });

  it('answers a 2025 session call cut by shutdown with a JSON-RPC error saying so, at once (not at the client timeout)', async () => {
    running = await serveHttp(() => probeServer({ directories: [] }), { port: 0, host: '127.0.0.1', log: new Logger('streams') });
    const client = new ClientV1({ name: 'legacy', version: '0' });
    clients.push(client);
    await client.connect(new StreamableV1(new URL(running.url)));
    const call = client.callTool({ name: 'wait_for_cancel', arguments: {} }, undefined, { timeout: 8_000 }).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = Date.now();
    const closing = running.close();
    running = undefined;
    const message = await call;
    await closing;
    expect(message).toMatch(/shutting down/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
