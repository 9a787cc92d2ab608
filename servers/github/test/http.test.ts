import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp } from '@suite/test-kit';
import { startFakeGithub, tokenOf, type FakeGithub } from './fake-github/index.js';
import { BIN, TOKENS, seed, serveHttp } from './helpers.js';

let fake: FakeGithub;
const children: ChildProcess[] = [];

/** Starts the bin with --http on a free port; resolves with its URL and its stderr so far. */
async function serve(args: string[] = []): Promise<{ url: string; stderr: () => string }> {
  const server = await serveHttp(['--log-level', 'debug', ...args], { GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: TOKENS.alice, GITHUB_TOKEN: '' });
  children.push(server.child);
  return server;
}

beforeAll(async () => {
  fake = await startFakeGithub();
  seed(fake);
});
afterAll(async () => {
  for (const child of children) child.kill('SIGTERM');
  await fake.close();
});

describe('Streamable HTTP with a token per session', () => {
  it('serves two sessions with different tokens side by side, each request with its own session\'s token only', async () => {
    const server = await serve();
    const bob = await connectHttp(server.url, { token: TOKENS.bob });
    const carol = await connectHttp(server.url, { token: TOKENS.carol });
    try {
      const before = fake.requests.length;
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? bob : carol).callTool('get_me')));
      answers.forEach((a, i) => expect(a.text, `call ${i}`).toMatch(i % 2 === 0 ? /^@bob · Bob/ : /^@carol · Carol/));
      const tokens = fake.requests.slice(before).map(tokenOf);
      expect(tokens.filter((t) => t === TOKENS.bob)).toHaveLength(3);
      expect(tokens.filter((t) => t === TOKENS.carol)).toHaveLength(3);
      expect(tokens).toHaveLength(6);

      // Each session acts with its own permissions: carol's token may not write, bob's may.
      const denied = await carol.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'by carol' });
      expect(denied.text).toMatch(/^GitHub denied access to acme\/widgets \(403: /);
      const created = await bob.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'by bob' });
      expect(created.isError).toBe(false);
      expect(fake.state.repo('acme', 'widgets')!.issues.at(-1)).toMatchObject({ title: 'by bob', author: 'bob' });

      // The operator's token was never used, and no token reached the log.
      expect(fake.tokensSeen()).not.toContain(TOKENS.alice);
      for (const token of Object.values(TOKENS)) expect(server.stderr()).not.toContain(token);
    } finally {
      await bob.close();
      await carol.close();
    }
  });

  it("refuses another token on a session it did not open (404), and a request without a token (401)", async () => {
    const server = await serve();
    const bob = await connectHttp(server.url, { token: TOKENS.bob });
    try {
      const hijack = await fetch(server.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKENS.carol}`, 'mcp-session-id': bob.sessionId()! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_me', arguments: {} } }),
      });
      expect(hijack.status).toBe(404);
      await expect(connectHttp(server.url)).rejects.toThrow(/Unauthorized: a valid bearer token is required/);
      expect((await bob.callTool('get_me')).text).toMatch(/^@bob/);
    } finally {
      await bob.close();
    }
  });

  it('lets a session without a token use the environment token only with --allow-env-token-fallback', async () => {
    const server = await serve(['--allow-env-token-fallback']);
    const anonymous = await connectHttp(server.url);
    const bob = await connectHttp(server.url, { token: TOKENS.bob });
    try {
      expect((await anonymous.callTool('get_me')).text).toMatch(/^@alice/);
      expect((await bob.callTool('get_me')).text).toMatch(/^@bob/);
      expect(server.stderr()).not.toContain(TOKENS.alice);
    } finally {
      await anonymous.close();
      await bob.close();
    }
  });

  it('shares a rate limit GitHub announced among the sessions of one token, and only theirs', async () => {
    const server = await serve();
    fake.state.addToken('http-limit-token-0123456789', 'bob');
    const first = await connectHttp(server.url, { token: 'http-limit-token-0123456789' });
    const second = await connectHttp(server.url, { token: 'http-limit-token-0123456789' });
    const other = await connectHttp(server.url, { token: TOKENS.carol });
    try {
      const before = fake.requests.length;
      fake.upstream.fault({ path: '/user', response: { status: 429, headers: { 'retry-after': '60' }, json: { message: 'Too Many Requests' } } });
      expect((await first.callTool('get_me')).text).toMatch(/^GitHub rate limit reached .*Retry in 60 seconds/);
      // Another session of the same token sends nothing and says when to retry; another token is not held back.
      expect((await second.callTool('get_me')).text).toMatch(/^GitHub rate limit reached \(secondary rate limit: too many requests in a short time; nothing was sent\)\. Retry in (59|60) seconds/);
      expect((await other.callTool('get_me')).text).toMatch(/^@carol/);
      expect(fake.requests.slice(before).map(tokenOf)).toEqual(['http-limit-token-0123456789', TOKENS.carol]);
    } finally {
      await Promise.all([first.close(), second.close(), other.close()]);
    }
  });

  it('lets a client narrow its session\'s tools by header (X-MCP-Toolsets, X-MCP-Tools, X-MCP-Readonly), never widen them', async () => {
    const server = await serve(['--toolsets', 'issues,context']);
    const sessions = await Promise.all([
      connectHttp(server.url, { token: TOKENS.bob, headers: { 'X-MCP-Toolsets': 'issues' } }),
      connectHttp(server.url, { token: TOKENS.bob, headers: { 'X-MCP-Tools': 'get_me,get_issue,list_workflow_runs', 'X-MCP-Readonly': 'true' } }),
      connectHttp(server.url, { token: TOKENS.bob, headers: { 'X-MCP-Toolsets': 'all', 'X-MCP-Readonly': '1' } }),
      connectHttp(server.url, { token: TOKENS.bob }),
    ]);
    try {
      const [issuesOnly, picked, allReadOnly, plain] = await Promise.all(sessions.map((s) => s.toolNames()));
      expect(issuesOnly).toContain('create_issue');
      expect(issuesOnly).not.toContain('get_me');
      // list_workflow_runs is in no toolset the operator enabled: a header cannot add it.
      expect(picked!.sort()).toEqual(['get_issue', 'get_me']);
      expect(allReadOnly).toContain('get_issue');
      expect(allReadOnly).not.toContain('create_issue');
      expect(allReadOnly).not.toContain('get_pull_request');
      expect(plain).toContain('create_issue');
      expect(plain).toContain('get_me');
      // A tool the header left out is unknown to that session.
      await expect(sessions[1]!.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'x' })).rejects.toThrow(/Unknown tool: create_issue/);
    } finally {
      await Promise.all(sessions.map((s) => s.close()));
    }
  });

  it('keeps the Host and Origin checks and the usage rules of the shared transport', async () => {
    const server = await serve();
    const url = new URL(server.url);
    const init = (headers: Record<string, string>) => ({
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${TOKENS.bob}`, ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } }),
    });
    expect((await fetch(server.url, init({ origin: 'https://evil.example' }))).status).toBe(403);
    const badHost = await new Promise<number>((resolve) => {
      const req = http.request({ host: url.hostname, port: url.port, path: '/mcp', method: 'POST', headers: { host: 'evil.example', 'content-type': 'application/json', authorization: `Bearer ${TOKENS.bob}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.end('{}');
    });
    expect(badHost).toBe(403);
    const gate = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [BIN, '--http', '--port', '0', '--drain-seconds', '0', '--auth-token', 'a-shared-gate-token'], { env: { ...process.env, GITHUB_API_URL: fake.apiUrl } });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('exit', (code) => resolve({ code, stderr }));
    });
    expect(gate.code).toBe(2);
    expect(gate.stderr).toContain('does not apply to this server: each HTTP session brings its own token');
  });
});
