import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Logger, SuiteServer, serveHttp, type AuthInfo, type RunningHttp, type SessionInfo } from '../src/index.js';
import { connectHttp, type TestSession } from '@suite/test-kit';

const TOKEN_A = 'token-alpha-0123456789';
const TOKEN_B = 'token-bravo-9876543210';

/** Tools that show what a handler sees of its session's credentials (never the whole token). */
function authProbe(session: SessionInfo, built: SuiteServer[]): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-auth', version: '0.0.1', session });
  built.push(server);
  const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
  server.tool({
    name: 'whoami',
    description: 'Shows the start of the token this request carries.',
    input: z.object({}),
    output: z.object({ session: z.string(), token: z.string(), sessionToken: z.string(), clientId: z.string() }),
    annotations: { title: 'Who am I', ...read },
    handler: async (_args, ctx) => {
      const structured = {
        session: ctx.sessionId,
        token: ctx.auth?.token.slice(0, 11) ?? '',
        sessionToken: server.session.auth?.token.slice(0, 11) ?? '',
        clientId: ctx.auth?.clientId ?? '',
      };
      return { text: JSON.stringify(structured), structured };
    },
  });
  server.tool({
    name: 'leak',
    description: 'Tries to leak the token through a log line and an error.',
    input: z.object({}),
    annotations: { title: 'Leak', ...read },
    handler: async (_args, ctx) => {
      ctx.log.warning(`calling upstream with ${ctx.auth?.token}`);
      throw new Error(`upstream refused ${ctx.auth?.token}`);
    },
  });
  return server;
}

function rawRequest(port: number, method: string, headers: Record<string, string>, body?: unknown): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let data = '';
      res.on('data', (c) => (data += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: data }));
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };

describe('per-session auth over HTTP', () => {
  let running: RunningHttp | undefined;
  const sessions: TestSession[] = [];
  let built: SuiteServer[] = [];
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
    await running?.close();
    running = undefined;
    built = [];
  });

  async function start(authenticate?: (token: string | undefined) => AuthInfo | null, extra: { maxSessions?: number; authToken?: string } = {}): Promise<RunningHttp> {
    running = await serveHttp((session) => authProbe(session, built), {
      port: 0,
      host: '127.0.0.1',
      log: new Logger('auth-test'),
      ...(authenticate ? { authenticate } : {}),
      ...extra,
    });
    return running;
  }

  const perUser = (token: string | undefined): AuthInfo | null => (token ? { token, clientId: `user-${token.slice(6, 11)}` } : null);

  it('gives each session its own token, in the factory and in every handler, with no cross-talk', async () => {
    const server = await start(perUser);
    const a = await connectHttp(server.url, { token: TOKEN_A });
    const b = await connectHttp(server.url, { token: TOKEN_B });
    sessions.push(a, b);
    const [fromA, fromB] = await Promise.all([a.callTool('whoami'), b.callTool('whoami')]);
    expect(fromA.structured).toEqual({ session: a.sessionId(), token: 'token-alpha', sessionToken: 'token-alpha', clientId: 'user-alpha' });
    expect(fromB.structured).toEqual({ session: b.sessionId(), token: 'token-bravo', sessionToken: 'token-bravo', clientId: 'user-bravo' });
    expect(a.sessionId()).not.toBe(b.sessionId());
    // Each session's secret scope holds its own token only.
    const [serverA, serverB] = [built.find((s) => s.sessionId === a.sessionId())!, built.find((s) => s.sessionId === b.sessionId())!];
    expect(serverA.secrets.redact(`${TOKEN_A} ${TOKEN_B}`)).toBe(`[redacted] ${TOKEN_B}`);
    expect(serverB.secrets.redact(`${TOKEN_A} ${TOKEN_B}`)).toBe(`${TOKEN_A} [redacted]`);
  });

  it("hands the factory the headers of the session's initialize request, without credentials", async () => {
    const server = await start(perUser);
    const a = await connectHttp(server.url, { token: TOKEN_A, headers: { 'X-MCP-Toolsets': 'files', Cookie: 'c=1' } });
    sessions.push(a);
    const headers = built.find((s) => s.sessionId === a.sessionId())!.session.headers!;
    expect(headers['x-mcp-toolsets']).toBe('files');
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
    expect(JSON.stringify(headers)).not.toContain(TOKEN_A);
  });

  it('never shows a session its token in a log message or an error', async () => {
    const server = await start(perUser);
    const a = await connectHttp(server.url, { token: TOKEN_A });
    sessions.push(a);
    await a.client.setLoggingLevel('debug');
    const out = await a.callTool('leak');
    expect(out.isError).toBe(true);
    expect(out.text).not.toContain(TOKEN_A);
    const log = await a.waitFor('notifications/message');
    expect(JSON.stringify(log)).toContain('calling upstream with [redacted]');
    expect(JSON.stringify(a.notifications)).not.toContain(TOKEN_A);
  });

  it('refuses a request without a token (401), and a token that did not open the session (404)', async () => {
    const server = await start(perUser);
    expect((await rawRequest(server.port, 'POST', {}, INIT)).status).toBe(401);
    const a = await connectHttp(server.url, { token: TOKEN_A });
    sessions.push(a);
    const hijack = await rawRequest(server.port, 'POST', { authorization: `Bearer ${TOKEN_B}`, 'mcp-session-id': a.sessionId()! }, { jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(hijack.status).toBe(404);
    expect(hijack.body).not.toContain('tools');
    // The rightful owner still works.
    expect((await a.callTool('whoami')).structured).toMatchObject({ token: 'token-alpha' });
  });

  it('forgets a session token when the session ends', async () => {
    const server = await start(perUser);
    const a = await connectHttp(server.url, { token: TOKEN_A });
    const id = a.sessionId();
    await a.callTool('whoami');
    const serverA = built.find((s) => s.sessionId === id)!;
    expect(serverA.secrets.size).toBe(1);
    await a.close();
    await expect.poll(() => server.sessionCount()).toBe(0);
    expect(serverA.secrets.size).toBe(0);
  });

  it('passes the gate token as the session auth when one --auth-token guards the server', async () => {
    const server = await start(undefined, { authToken: TOKEN_A });
    expect((await rawRequest(server.port, 'POST', { authorization: `Bearer ${TOKEN_B}` }, INIT)).status).toBe(401);
    const a = await connectHttp(server.url, { token: TOKEN_A });
    sessions.push(a);
    expect((await a.callTool('whoami')).structured).toMatchObject({ token: 'token-alpha', clientId: 'auth-token' });
  });

  it('caps sessions: past the cap, 503 with Retry-After; a closed session frees its slot', async () => {
    const server = await start(undefined, { maxSessions: 2 });
    const a = await connectHttp(server.url);
    const b = await connectHttp(server.url);
    sessions.push(b);
    const refused = await rawRequest(server.port, 'POST', {}, INIT);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toMatchObject({ error: { message: expect.stringMatching(/all 2 sessions are in use/) } });
    // Requests of existing sessions are still served while full.
    expect((await b.callTool('whoami')).isError).toBe(false);
    await a.close();
    await expect.poll(() => server.sessionCount()).toBe(1);
    const c = await connectHttp(server.url);
    sessions.push(c);
    expect(server.sessionCount()).toBe(2);
  });

  it('lets handlers reach the session id of the transport (one identity)', async () => {
    const server = await start();
    const a = await connectHttp(server.url);
    sessions.push(a);
    expect((await a.callTool('whoami')).structured).toMatchObject({ session: a.sessionId(), token: '' });
  });
});
