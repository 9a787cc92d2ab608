import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { freePort, startAuthorizationServer, type TestAuthorizationServer } from '@suite/test-kit/oauth';
import { Logger, SuiteServer, serveHttp, type RunningHttp, type SessionInfo } from '../src/index.js';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { RedisLink } from '../src/replicas/redis-link.js';
import { RedisSessionDirectory } from '../src/replicas/session-directory.js';
import { AuthorizationServerError, ProtectedResource, oauthGrantOf, serverScopes } from '../src/auth/index.js';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const read = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** What the write tool did: a test proves a refused call left nothing here. */
const notes: string[] = [];

function probe(session: SessionInfo, readOnly = false): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-probe', version: '0.0.1', session, selection: { readOnly } });
  server.tool({
    name: 'whoami',
    description: 'Says who the request acts for.',
    input: z.object({}),
    annotations: { title: 'Who am I', ...read },
    handler: async (_args, ctx) => `client=${ctx.auth?.clientId ?? ''} scopes=${(ctx.auth?.scopes ?? []).join(',')}`,
  });
  server.tool({
    name: 'write_note',
    description: 'Writes a note.',
    input: z.object({ text: z.string() }),
    annotations: { title: 'Write a note', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ text }) => {
      notes.push(text);
      return 'written';
    },
  });
  server.tool({
    name: 'ask',
    description: 'Asks the client to sample.',
    input: z.object({ q: z.string() }),
    annotations: { title: 'Ask', ...read },
    handler: async ({ q }, ctx) => (await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: q } }], maxTokens: 5 })).text,
  });
  return server;
}


const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };
const modernMeta = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': { sampling: {} } };
const DISCOVER = { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: modernMeta } };

function modernCall(name: string, args: Record<string, unknown>, extra: Record<string, unknown> = {}): { headers: Record<string, string>; body: unknown } {
  return {
    headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args, ...extra, _meta: modernMeta } },
  };
}

describe('OAuth mode: the HTTP server as a protected resource', () => {
  let as: TestAuthorizationServer;
  let running: RunningHttp;
  let publicUrl: string;
  const log = new Logger('oauth-test');
  const lines: string[] = [];

  const post = async (body: unknown, headers: Record<string, string> = {}, path = '/mcp'): Promise<{ status: number; headers: Headers; text: string }> => {
    const response = await fetch(new URL(path, publicUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  };
  const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    as = await startAuthorizationServer({
      clients: { reader: 'probe:read', writer: 'probe:read probe:write', other: 'probe:read probe:write' },
      scopes: ['probe:read', 'probe:write'],
    });
    const port = await freePort();
    publicUrl = `http://127.0.0.1:${port}/mcp`;
    const oauth = await ProtectedResource.start({ issuer: as.issuer, publicUrl, scopes: serverScopes('probe', true), resourceName: 'probe' });
    // Every line the server logs (at debug), to prove no token is ever in one.
    Logger.setStderrLevel('debug');
    process.stderr.write = ((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stderr.write;
    running = await serveHttp((session) => probe(session), { port, host: '127.0.0.1', oauth, log });
  }, 30_000);

  const stderrWrite = process.stderr.write.bind(process.stderr);
  afterAll(async () => {
    await running?.close();
    await as?.close();
    process.stderr.write = stderrWrite;
    Logger.setStderrLevel('emergency');
  });

  it('publishes its Protected Resource Metadata at the path-aware location and the root', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = await fetch(new URL(path, publicUrl));
      expect(response.status).toBe(200);
      const metadata = (await response.json()) as Record<string, unknown>;
      expect(metadata.resource).toBe(publicUrl);
      expect(metadata.authorization_servers).toEqual([as.issuer]);
      expect(metadata.scopes_supported).toEqual(['probe:read', 'probe:write']);
      expect(JSON.stringify(metadata)).not.toContain('offline_access');
    }
  });

  it('answers a request without a token with 401 and where to get one, in both eras', async () => {
    for (const body of [INIT, DISCOVER]) {
      const answer = await post(body, body === DISCOVER ? { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' } : {});
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="http://127.0.0.1:${new URL(publicUrl).port}/.well-known/oauth-protected-resource/mcp", scope="probe:read"`);
    }
  });

  it('refuses every bad token with 401 invalid_token, never a 500, and never echoes it', async () => {
    const stranger = await generateKeyPair('RS256', { extractable: true });
    const now = Math.floor(Date.now() / 1000);
    const good = await as.sign({}, { audience: publicUrl });
    const [head, payload] = good.split('.');
    const bad: Record<string, string> = {
      'wrong audience': await as.sign({}, { audience: 'http://127.0.0.1:1/other' }),
      'no audience': await as.sign({}),
      'wrong issuer': await as.sign({ iss: 'http://127.0.0.1:2' }, { audience: publicUrl }),
      expired: await as.sign({ iat: now - 600, exp: now - 300 }, { audience: publicUrl }),
      'not yet valid': await as.sign({ nbf: now + 600 }, { audience: publicUrl }),
      'id token (typ JWT)': await as.sign({}, { audience: publicUrl, typ: 'JWT' }),
      'bad signature': `${head}.${payload}.${Buffer.from('not the signature').toString('base64url')}`,
      'tampered payload': `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), scope: 'probe:write' })).toString('base64url')}.${good.split('.')[2]}`,
      'foreign key': await new SignJWT({ iss: as.issuer, aud: publicUrl, sub: 'x', exp: now + 300, scope: 'probe:read' }).setProtectedHeader({ alg: 'RS256', kid: 'test-key-1', typ: 'at+jwt' }).sign(stranger.privateKey),
      'alg none': `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')}.${payload}.`,
      'HS256 with the public key as secret': await new SignJWT({ iss: as.issuer, aud: publicUrl, sub: 'x', exp: now + 300, scope: 'probe:read' })
        .setProtectedHeader({ alg: 'HS256', typ: 'at+jwt', kid: 'test-key-1' })
        .sign(new TextEncoder().encode(JSON.stringify(await exportJWK(stranger.publicKey)))),
      garbage: 'not-a-token-at-all',
      'garbage JWT shape': 'aaaa.bbbb.cccc',
    };
    for (const [what, token] of Object.entries(bad)) {
      for (const body of [INIT, DISCOVER]) {
        const answer = await post(body, { ...bearer(token), ...(body === DISCOVER ? { 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' } : {}) });
        expect(answer.status, `${what}`).toBe(401);
        expect(answer.headers.get('www-authenticate'), what).toMatch(/^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="/);
        expect(JSON.parse(answer.text).error).toBe('invalid_token');
        expect(answer.text + answer.headers.get('www-authenticate')).not.toContain(token);
      }
    }
    // A good token in the query string is refused too (it would end up in access logs).
    const inQuery = await post(INIT, {}, `/mcp?access_token=${encodeURIComponent(good)}`);
    expect(inQuery.status).toBe(401);
    expect(inQuery.headers.get('www-authenticate')).toContain('error="invalid_token"');
    // A token without any of the server's scopes: 403, naming the scope it needs.
    const noScope = await post(INIT, bearer(await as.sign({ scope: 'openid' }, { audience: publicUrl })));
    expect(noScope.status).toBe(403);
    expect(noScope.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", scope="probe:read"/);
  });

  it('serves a client that signs in with the SDK client OAuth support, in both eras', async () => {
    for (const pin of [LEGACY, MODERN]) {
      const provider = new ClientCredentialsProvider({ clientId: as.clients.writer!.clientId, clientSecret: as.clients.writer!.clientSecret, expectedIssuer: as.issuer, scope: 'probe:read probe:write' });
      const client = new Client({ name: 'oauth-test', version: '0' }, { versionNegotiation: { mode: pin === MODERN ? { pin } : 'legacy' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(publicUrl), { authProvider: provider }));
      try {
        const who = await client.callTool({ name: 'whoami', arguments: {} });
        // The 401 asked for the read scope only: the least that gets in.
        expect(who.content).toEqual([{ type: 'text', text: `client=${as.clients.writer!.clientId} scopes=probe:read` }]);
        // The write is answered 403 naming probe:write; the client steps up, and the retry writes once.
        const written = await client.callTool({ name: 'write_note', arguments: { text: `by writer in ${pin}` } });
        expect(written.isError).toBeFalsy();
        expect(notes.filter((n) => n === `by writer in ${pin}`)).toHaveLength(1);
        const after = await client.callTool({ name: 'whoami', arguments: {} });
        expect(JSON.stringify(after.content)).toContain('probe:write');
      } finally {
        await client.close();
      }
    }
  });

  it('answers a write with a read-only token 403 insufficient_scope before anything runs, in both eras', async () => {
    const token = await as.clientCredentialsToken('reader', publicUrl, 'probe:read');
    const before = notes.length;
    // 2025-11-25: a session, then the call.
    const opened = await post(INIT, bearer(token));
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    const legacyHeaders = { ...bearer(token), 'mcp-session-id': session, 'mcp-protocol-version': LEGACY };
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, legacyHeaders);
    const legacy = await post({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'write_note', arguments: { text: 'must not happen' } } }, legacyHeaders);
    const modern = modernCall('write_note', { text: 'must not happen' });
    const stateless = await post(modern.body, { ...bearer(token), ...modern.headers });
    for (const answer of [legacy, stateless]) {
      expect(answer.status).toBe(403);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", scope="probe:write", resource_metadata="[^"]+\/.well-known\/oauth-protected-resource\/mcp"/);
      expect(JSON.parse(answer.text).error).toBe('insufficient_scope');
    }
    expect(notes.length).toBe(before);
    // Reading still works with the same token.
    const whoami = await post({ jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, legacyHeaders);
    expect(whoami.status).toBe(200);
    expect(whoami.text).toContain(`client=${as.clients.reader!.clientId}`);
  });

  it('binds a 2025 session to the principal: a refreshed token keeps it, another client gets nothing', async () => {
    const first = await as.clientCredentialsToken('writer', publicUrl, 'probe:read probe:write');
    const refreshed = await as.clientCredentialsToken('writer', publicUrl, 'probe:read probe:write');
    const other = await as.clientCredentialsToken('other', publicUrl, 'probe:read probe:write');
    expect(refreshed).not.toBe(first);
    const opened = await post(INIT, bearer(first));
    const session = opened.headers.get('mcp-session-id')!;
    const call = (token: string): Promise<{ status: number; text: string }> =>
      post({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'whoami', arguments: {} } }, { ...bearer(token), 'mcp-session-id': session, 'mcp-protocol-version': LEGACY });
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { ...bearer(first), 'mcp-session-id': session, 'mcp-protocol-version': LEGACY });
    expect((await call(refreshed)).status).toBe(200);
    expect((await call(other)).status).toBe(404);
  });

  it('binds a 2026 requestState to the principal: a refreshed token may finish the round trip, another client may not', async () => {
    const first = await as.clientCredentialsToken('writer', publicUrl, 'probe:read');
    const refreshed = await as.clientCredentialsToken('writer', publicUrl, 'probe:read');
    const other = await as.clientCredentialsToken('other', publicUrl, 'probe:read');
    const round = modernCall('ask', { q: 'x' });
    const opened = JSON.parse((await post(round.body, { ...bearer(first), ...round.headers })).text) as { result: { resultType: string; requestState: string } };
    expect(opened.result.resultType).toBe('input_required');
    const answers = { requestState: opened.result.requestState, inputResponses: { sampling: { role: 'assistant', model: 'm', content: { type: 'text', text: 'answer' } } } };
    const retry = modernCall('ask', { q: 'x' }, answers);
    expect((await post(retry.body, { ...bearer(refreshed), ...retry.headers })).text).toContain('"text":"answer"');
    expect((await post(retry.body, { ...bearer(other), ...retry.headers })).text).toMatch(/Invalid or expired requestState/);
  });

  it('refuses a batch that holds one write whole, and a write over the legacy SSE transport', async () => {
    const token = await as.clientCredentialsToken('reader', publicUrl, 'probe:read');
    const before = notes.length;
    const opened = await post(INIT, bearer(token));
    const session = opened.headers.get('mcp-session-id')!;
    const headers = { ...bearer(token), 'mcp-session-id': session, 'mcp-protocol-version': LEGACY };
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
    const batch = await post(
      [
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
        { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_note', arguments: { text: 'in a batch' } } },
      ],
      headers,
    );
    expect(batch.status).toBe(403);
    // Legacy HTTP+SSE: the stream names the endpoint; a write posted there gets the same 403.
    const controller = new AbortController();
    const stream = await fetch(new URL('/sse', publicUrl), { headers: bearer(token), signal: controller.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!/sessionId=[\w-]+/.test(text)) text += new TextDecoder().decode((await reader.read()).value);
    const endpoint = /(\/messages\?sessionId=[\w-]+)/.exec(text)![1]!;
    const write = await post({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'write_note', arguments: { text: 'over sse' } } }, bearer(token), endpoint);
    expect(write.status).toBe(403);
    controller.abort();
    expect(notes.length).toBe(before);
  });

  it('never writes a token or a JWT into a log line', () => {
    // The refusals above were logged (with their reason, for the operator), and sessions opened and closed.
    expect(lines.join('')).toContain('OAuth: 401 invalid_token: The access token has expired.');
    for (const line of lines) expect(line).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });
});

describe('OAuth mode start-up checks', () => {
  let as: TestAuthorizationServer;
  beforeAll(async () => {
    as = await startAuthorizationServer({ clients: {}, scopes: ['probe:read'] });
  });
  afterAll(async () => as?.close());

  it('refuses an issuer the authorization server does not call itself', async () => {
    await expect(ProtectedResource.start({ issuer: `${as.issuer}/`, publicUrl: 'http://127.0.0.1:9/mcp', scopes: serverScopes('probe', false) })).rejects.toThrow(AuthorizationServerError);
    await expect(ProtectedResource.start({ issuer: `${as.issuer}/`, publicUrl: 'http://127.0.0.1:9/mcp', scopes: serverScopes('probe', false) })).rejects.toThrow(/says its issuer is/);
  });

  it('refuses an authorization server without PKCE S256, and a public URL that is not https', async () => {
    const fake = http.createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, code_challenge_methods_supported: ['plain'] }));
    });
    await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
    try {
      const issuer = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
      await expect(ProtectedResource.start({ issuer, publicUrl: 'http://127.0.0.1:9/mcp', scopes: serverScopes('probe', false) })).rejects.toThrow(/PKCE with S256/);
    } finally {
      fake.close();
    }
    await expect(ProtectedResource.start({ issuer: as.issuer, publicUrl: 'http://mcp.example.com/mcp', scopes: serverScopes('probe', false) })).rejects.toThrow(/must use https/);
  });

  it('checks opaque tokens by introspection (RFC 7662) when configured: audience, activity, scopes', async () => {
    const opaque = await startAuthorizationServer({ clients: { rs: 'probe:read', user: 'probe:read', other: 'probe:read' }, scopes: ['probe:read', 'probe:write'], opaqueTokens: true });
    try {
      const publicUrl = 'http://127.0.0.1:9/mcp';
      const resource = await ProtectedResource.start({ issuer: opaque.issuer, publicUrl, scopes: serverScopes('probe', true), introspection: opaque.clients.rs! });
      const url = new URL(publicUrl);
      const token = await opaque.clientCredentialsToken('user', publicUrl, 'probe:read');
      expect(token).not.toMatch(/\./);
      const outcome = await resource.authenticate(`Bearer ${token}`, url);
      expect('auth' in outcome && outcome.auth.clientId).toBe(opaque.clients.user!.clientId);
      expect('auth' in outcome && oauthGrantOf(outcome.auth)?.canWrite).toBe(false);
      const elsewhere = await opaque.clientCredentialsToken('other', 'http://127.0.0.1:9/other', 'probe:read');
      for (const bad of [elsewhere, 'not-a-real-token']) {
        const refused = await resource.authenticate(`Bearer ${bad}`, url);
        expect('refuse' in refused && refused.refuse.status).toBe(401);
      }
    } finally {
      await opaque.close();
    }
  });

  it('answers 503 with Retry-After, not 500 or 401, when the authorization server cannot be reached to check a token', async () => {
    const gone = await startAuthorizationServer({ clients: {}, scopes: ['probe:read'] });
    const publicUrl = 'http://127.0.0.1:9/mcp';
    const resource = await ProtectedResource.start({ issuer: gone.issuer, publicUrl, scopes: serverScopes('probe', false) });
    const token = await gone.sign({}, { audience: publicUrl });
    await gone.close();
    const outcome = await resource.authenticate(`Bearer ${token}`, new URL(publicUrl));
    expect('refuse' in outcome && outcome.refuse.status).toBe(503);
    expect('refuse' in outcome && outcome.refuse.headers['Retry-After']).toBeDefined();
  });
});

describe('OAuth mode across replicas sharing sessions through Redis', () => {
  it('continues a 2025 session on another replica with a refreshed token, and never for another client', async () => {
    const as = await startAuthorizationServer({ clients: { writer: 'probe:read probe:write', other: 'probe:read' }, scopes: ['probe:read', 'probe:write'] });
    const prefix = `suite-test-oauth-${randomUUID()}:`;
    const publicUrl = 'http://127.0.0.1:9/mcp';
    const closers: (() => Promise<unknown>)[] = [() => as.close()];
    try {
      const replicas: RunningHttp[] = [];
      for (let i = 0; i < 2; i++) {
        const log = new Logger(`oauth-replica-${i}`);
        const link = new RedisLink('redis://127.0.0.1:6379', log, { prefix });
        const oauth = await ProtectedResource.start({ issuer: as.issuer, publicUrl, scopes: serverScopes('probe', true) });
        const running = await serveHttp((session) => probe(session), { port: 0, host: '127.0.0.1', oauth, log, replicas: new RedisSessionDirectory(link, 60_000) });
        closers.push(() => running.close(), () => link.close());
        replicas.push(running);
      }
      const send = async (to: RunningHttp, token: string, body: unknown, session?: string): Promise<Response> =>
        fetch(to.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': LEGACY } : {}) },
          body: JSON.stringify(body),
        });
      const first = await as.clientCredentialsToken('writer', publicUrl, 'probe:read');
      const refreshed = await as.clientCredentialsToken('writer', publicUrl, 'probe:read');
      const other = await as.clientCredentialsToken('other', publicUrl, 'probe:read');
      const opened = await send(replicas[0]!, first, INIT);
      const session = opened.headers.get('mcp-session-id')!;
      await opened.text();
      expect((await send(replicas[0]!, first, { jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status).toBe(202);
      const whoami = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } };
      // Another client first, on the replica that has no copy yet: it must not take the session up.
      expect((await send(replicas[1]!, other, whoami, session)).status).toBe(404);
      const elsewhere = await send(replicas[1]!, refreshed, whoami, session);
      expect(elsewhere.status).toBe(200);
      expect(await elsewhere.text()).toContain(`client=${as.clients.writer!.clientId}`);
      expect((await send(replicas[1]!, other, whoami, session)).status).toBe(404);
      expect((await send(replicas[0]!, other, whoami, session)).status).toBe(404);
    } finally {
      for (const close of closers.reverse()) await close().catch(() => undefined);
      const redis = new Redis('redis://127.0.0.1:6379');
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  }, 30_000);
});

describe('OAuth mode under a read-only ceiling', () => {
  it('offers no write scope, and no scope brings a write tool back', async () => {
    const as = await startAuthorizationServer({ clients: { writer: 'probe:read probe:write' }, scopes: ['probe:read', 'probe:write'] });
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}/mcp`;
    const oauth = await ProtectedResource.start({ issuer: as.issuer, publicUrl, scopes: serverScopes('probe', false) });
    const running = await serveHttp((session) => probe(session, true), { port, host: '127.0.0.1', oauth, log: new Logger('oauth-ceiling') });
    try {
      const metadata = (await (await fetch(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`)).json()) as { scopes_supported: string[] };
      expect(metadata.scopes_supported).toEqual(['probe:read']);
      const token = await as.sign({ scope: 'probe:read probe:write' }, { audience: publicUrl });
      const call = modernCall('write_note', { text: 'past the ceiling' });
      const answer = await fetch(publicUrl, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, ...call.headers }, body: JSON.stringify(call.body) });
      const text = await answer.text();
      expect(text).toContain('Unknown tool: write_note');
      expect(notes).not.toContain('past the ceiling');
    } finally {
      await running.close();
      await as.close();
    }
  });
});
