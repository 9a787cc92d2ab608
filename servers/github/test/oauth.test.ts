import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { freePort, startAuthorizationServer, type TestAuthorizationServer } from '@suite/test-kit/oauth';
import { requestStateKeyFile, startHaproxy, startPrivateRedis, startReplicas, type LoadBalancer, type PrivateRedis } from '@suite/test-kit/replicas';
import { startFakeGithub, tokenOf, type FakeGithub } from './fake-github/index.js';
import { BIN, seed } from './helpers.js';
import { webUrlOf } from '../src/github-oauth.js';

/**
 * OAuth mode without token passthrough: the MCP client signs in at a real authorization server
 * (oidc-provider); the server, as GitHub's OAuth client, asks each principal to authorize GitHub
 * once (URL-mode elicitation, input_required in 2026-07-28), takes GitHub's callback on its own
 * HTTP server, and acts with the stored token. The fake GitHub's authorize page approves at once.
 */
const APP = { clientId: 'Iv1.testapp0001', clientSecret: 'app-secret-7d1e0c95b2a84f63' };
const SCOPE = 'github:read github:write';
const ERAS = ['2025-11-25', '2026-07-28'] as const;

let fake: FakeGithub;
let as: TestAuthorizationServer;
let child: ChildProcess;
let stderr = '';
let url: string;

async function connect(clientName: string, era: (typeof ERAS)[number], capabilities: Record<string, unknown>): Promise<Client> {
  const { clientId, clientSecret } = as.clients[clientName]!;
  const client = new Client({ name: 'github-oauth-test', version: '0' }, { capabilities, versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: as.issuer, scope: SCOPE }) }));
  return client;
}

/** What a user's browser does with the link: follows GitHub's redirect to our callback, and reads the page. */
async function visit(link: string): Promise<{ status: number; page: string; at: string }> {
  const response = await fetch(link);
  return { status: response.status, page: await response.text(), at: response.url };
}

function textOf(result: Awaited<ReturnType<Client['callTool']>>): string {
  return (result.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
}

beforeAll(async () => {
  fake = await startFakeGithub();
  seed(fake);
  as = await startAuthorizationServer({ clients: { alice: SCOPE, bob: SCOPE, carol: SCOPE, dave: SCOPE, erin: SCOPE, frank: SCOPE, grace: SCOPE }, scopes: ['github:read', 'github:write'] });
  const port = await freePort();
  url = `http://127.0.0.1:${port}/mcp`;
  fake.oauth.register({ ...APP, callbackUrl: `http://127.0.0.1:${port}/oauth/callback/github` });
  const env = { ...process.env, GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: '', GITHUB_TOKEN: '', GITHUB_OAUTH_CLIENT_ID: APP.clientId, GITHUB_OAUTH_CLIENT_SECRET: APP.clientSecret, SUITE_GITHUB_TEST_SIGN_IN_WAIT_MS: '10000' };
  child = spawn(process.execPath, [BIN, '--http', '--port', String(port), '--drain-seconds', '0', '--auth-issuer', as.issuer, '--public-url', url, '--log-level', 'debug'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const deadline = Date.now() + 20_000;
  while (!stderr.includes('listening on')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}, 30_000);

afterAll(async () => {
  child?.kill('SIGTERM');
  await as?.close();
  await fake?.close();
});

describe('github in OAuth mode: the server is GitHub\'s OAuth client, no token passthrough', () => {
  it('asks each principal to authorize GitHub once through a URL elicitation, then acts as that user, in both eras', async () => {
    // Each era signs in as its own principal (another OAuth client), so each starts unauthorized.
    for (const [era, who, login] of [
      ['2025-11-25', 'alice', 'alice'],
      ['2026-07-28', 'bob', 'bob'],
    ] as const) {
      fake.oauth.signedInAs = login;
      const client = await connect(who, era, { elicitation: { url: {} } });
      const asked: { mode?: string; url?: string; message?: string }[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        const params = request.params as { mode?: string; url?: string; message?: string };
        asked.push(params);
        const visited = await visit(params.url!);
        expect(visited.status, visited.page).toBe(200);
        expect(visited.page).toContain('GitHub is connected');
        return { action: 'accept' };
      });
      try {
        const issuedBefore = fake.oauth.issued.length;
        const first = await client.callTool({ name: 'get_me', arguments: {} });
        expect(first.isError, textOf(first)).toBeFalsy();
        expect(textOf(first)).toContain(`@${login}`);
        expect(asked).toHaveLength(1);
        const link = new URL(asked[0]!.url!);
        expect(asked[0]!.mode ?? 'url').toBe('url');
        expect(link.origin + link.pathname).toBe(`${fake.url}/login/oauth/authorize`);
        expect(link.searchParams.get('client_id')).toBe(APP.clientId);
        expect(link.searchParams.get('code_challenge_method')).toBe('S256');
        expect(link.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{40,}$/);
        // The GitHub calls carried the token GitHub issued for this user, never the MCP access token.
        expect(fake.oauth.issued.length).toBe(issuedBefore + 1);
        const issued = fake.oauth.issued.at(-1)!;
        const seen = fake.requests.filter((r) => r.path === '/user').map(tokenOf);
        expect(seen.at(-1)).toBe(issued);

        // Authorized now: the next call asks nothing.
        const second = await client.callTool({ name: 'get_me', arguments: {} });
        expect(textOf(second)).toContain(`@${login}`);
        expect(asked).toHaveLength(1);
        // A replayed callback (the same link again) finds its state used.
        const replay = await visit(link.toString());
        expect(replay.status).toBe(400);
        expect(replay.page).toMatch(/expired or was already used/);
        expect(fake.oauth.issued.length).toBe(issuedBefore + 1);
      } finally {
        await client.close();
      }
    }
  });

  it('gives a client without URL elicitation an error result with the link and what to do; after the visit the call works', async () => {
    fake.oauth.signedInAs = 'carol';
    for (const era of ERAS) {
      // One principal for both eras: once carol has authorized (in the first era), the second asks nothing.
      const client = await connect('carol', era, {});
      try {
        const first = await client.callTool({ name: 'get_me', arguments: {} });
        if (era === '2025-11-25') {
          expect(first.isError).toBe(true);
          const text = textOf(first);
          expect(text).toMatch(/Open this link in a browser, sign in to GitHub and approve the app/);
          expect(text).toMatch(/then call the tool again/);
          const link = /(http:\/\/\S+\/login\/oauth\/authorize\S+)/.exec(text)![1]!;
          const visited = await visit(link);
          expect(visited.page).toContain('GitHub is connected');
          const again = await client.callTool({ name: 'get_me', arguments: {} });
          expect(textOf(again)).toContain('@carol');
        } else {
          expect(first.isError, textOf(first)).toBeFalsy();
          expect(textOf(first)).toContain('@carol');
        }
      } finally {
        await client.close();
      }
    }
  });

  it('forgets an authorization GitHub no longer accepts (revoked), and asks again on the next call', async () => {
    const carols = fake.oauth.issued.filter((t) => fake.state.tokens.get(t)?.login === 'carol');
    expect(carols).toHaveLength(1);
    fake.state.tokens.delete(carols[0]!);
    const client = await connect('carol', '2025-11-25', {});
    try {
      const refused = await client.callTool({ name: 'get_me', arguments: {} });
      expect(refused.isError).toBe(true);
      expect(textOf(refused)).toMatch(/GitHub no longer accepts your authorization of this server \(revoked or expired\)\. Call the tool again/);
      expect(textOf(refused)).not.toContain(carols[0]!);
      const again = await client.callTool({ name: 'get_me', arguments: {} });
      expect(again.isError).toBe(true);
      expect(textOf(again)).toMatch(/Open this link in a browser/);
    } finally {
      await client.close();
    }
  });

  it('reports a declined GitHub authorization as an error result, and stores nothing', async () => {
    fake.oauth.signedInAs = 'mallory';
    fake.oauth.decline = true;
    const client = await connect('dave', '2025-11-25', { elicitation: { url: {} } });
    let page = '';
    client.setRequestHandler('elicitation/create', async (request) => {
      page = (await visit((request.params as { url: string }).url)).page;
      return { action: 'decline' };
    });
    try {
      const result = await client.callTool({ name: 'get_me', arguments: {} });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/GitHub authorization was declined/);
      expect(page).toMatch(/did not authorize/);
    } finally {
      fake.oauth.decline = false;
      await client.close();
    }
  });

  it('sends the app secret and the PKCE verifier to GitHub\'s token endpoint only: a redirect there is not followed, and nothing is stored', async () => {
    fake.oauth.signedInAs = 'mallory';
    fake.upstream.fault({ method: 'POST', path: '/login/oauth/access_token', response: { status: 307, headers: { location: `${fake.storage.url}/steal` } } });
    const client = await connect('frank', '2025-11-25', {});
    try {
      const first = await client.callTool({ name: 'get_me', arguments: {} });
      const link = /(http:\/\/\S+\/login\/oauth\/authorize\S+)/.exec(textOf(first))![1]!;
      const visited = await visit(link);
      expect(visited.status).toBe(400);
      expect(visited.page).toMatch(/GitHub could not be reached to finish the sign-in/);
      expect(fake.storage.requests.filter((r) => r.path === '/steal')).toHaveLength(0);
      // Nothing was stored: the next call asks again.
      expect(textOf(await client.callTool({ name: 'get_me', arguments: {} }))).toMatch(/Open this link in a browser/);
    } finally {
      await client.close();
    }
  });

  it('answers a resource read of a principal without GitHub authorization with the link, in both eras', async () => {
    for (const era of ERAS) {
      const client = await connect('grace', era, { elicitation: { url: {} } });
      client.setRequestHandler('elicitation/create', async () => ({ action: 'cancel' }));
      try {
        const failure = await client.readResource({ uri: 'repo://acme/widgets/contents/README.md' }).then(
          (r) => JSON.stringify(r),
          (e: Error) => e.message,
        );
        expect(failure).toMatch(/\/login\/oauth\/authorize\?|GitHub authorization was cancelled/);
      } finally {
        await client.close();
      }
    }
  });

  it('refuses forged, unknown and malformed callbacks without echoing them', async () => {
    const callback = new URL('/oauth/callback/github', url);
    for (const query of ['', '?code=abc', '?code=abc&state=not-a-state-we-made-0123456789', '?state=<script>alert(1)</script>&code=x']) {
      const response = await fetch(callback + query);
      const page = await response.text();
      expect(response.status).toBe(400);
      expect(page).not.toContain('<script>');
      expect(page).not.toContain('abc');
    }
    // No forged callback reached GitHub's token endpoint (the redirected exchange of the test before never got there either).
    expect(fake.oauth.exchanges.every((e) => e.ok)).toBe(true);
  });

  it('never writes a GitHub token, the app secret or an MCP access token to its log', () => {
    expect(fake.oauth.issued.length).toBeGreaterThanOrEqual(3);
    for (const token of fake.oauth.issued) expect(stderr).not.toContain(token);
    expect(stderr).not.toContain(APP.clientSecret);
    expect(stderr).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/);
    expect(stderr).toMatch(/GitHub authorization stored/);
  });
});

describe('github in OAuth mode on two replicas sharing Redis', () => {
  it('keeps the authorization sealed in Redis, where every replica finds it: one sign-in, calls served by both', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gh-oauth-replicas-'));
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}/mcp`;
    const app = { clientId: 'Iv1.replicas0002', clientSecret: 'replica-app-secret-91c0d2' };
    fake.oauth.register({ ...app, callbackUrl: `http://127.0.0.1:${port}/oauth/callback/github` });
    fake.oauth.signedInAs = 'alice';
    let replicas: Awaited<ReturnType<typeof startReplicas>> = [];
    let lb: LoadBalancer | undefined;
    // A Redis of the test's own: nothing is left behind in the machine's, whatever else runs.
    let redis: PrivateRedis | undefined;
    try {
      redis = await startPrivateRedis();
      const args = ['--auth-issuer', as.issuer, '--public-url', publicUrl, '--redis-url', redis.url, '--request-state-key-file', await requestStateKeyFile(dir)];
      const env = { GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: '', GITHUB_TOKEN: '', GITHUB_OAUTH_CLIENT_ID: app.clientId, GITHUB_OAUTH_CLIENT_SECRET: app.clientSecret, GITHUB_TOKEN_ENCRYPTION_KEY: 'a shared sealing key of at least thirty-two bytes' };
      replicas = await startReplicas(BIN, args, 2, env);
      lb = await startHaproxy(replicas, dir, port);
      const { clientId, clientSecret } = as.clients.erin!;
      const signIn = (era: (typeof ERAS)[number]): Promise<Client> => {
        const client = new Client({ name: 'replicas', version: '0' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
        return client.connect(new StreamableHTTPClientTransport(new URL(publicUrl), { authProvider: new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: as.issuer, scope: SCOPE }) })).then(() => client);
      };
      let asked = 0;
      const first = await signIn('2025-11-25');
      first.setRequestHandler('elicitation/create', async (request) => {
        asked += 1;
        // The callback reaches whichever replica haproxy picks; the pending sign-in is in Redis.
        expect((await visit((request.params as { url: string }).url)).page).toContain('GitHub is connected');
        return { action: 'accept' };
      });
      expect(textOf(await first.callTool({ name: 'get_me', arguments: {} }))).toContain('@alice');
      await first.close();
      expect(asked).toBe(1);
      const issued = fake.oauth.issued.at(-1)!;
      // 2026-07-28 requests are stateless: haproxy spreads them over both replicas, and each finds the authorization.
      const later = await signIn('2026-07-28');
      later.setRequestHandler('elicitation/create', async () => {
        asked += 1;
        return { action: 'decline' };
      });
      try {
        for (let i = 0; i < 4; i++) expect(textOf(await later.callTool({ name: 'get_me', arguments: {} }))).toContain('@alice');
      } finally {
        await later.close();
      }
      expect(asked).toBe(1);
      expect((await lb.served()).every((n) => n > 0)).toBe(true);
      // At rest in Redis: one sealed record, the token nowhere in the clear.
      const cli = (...command: string[]): string => spawnSync('redis-cli', ['-u', redis!.url, ...command], { encoding: 'utf8' }).stdout.trim();
      const keys = cli('--scan', '--pattern', '*secrets:github-oauth:token:*').split('\n').filter(Boolean);
      expect(keys).toHaveLength(1);
      const sealed = cli('GET', keys[0]!);
      expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(sealed).not.toContain(issued);
      expect(keys[0]).not.toContain(issued);
    } finally {
      await lb?.stop();
      await Promise.all(replicas.map((r) => r.server.stop()));
      await redis?.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('where GitHub\'s sign-in lives', () => {
  it('is the web origin of the API: github.com, a GHE.com tenant, an Enterprise Server host', () => {
    expect(webUrlOf('https://api.github.com')).toBe('https://github.com');
    expect(webUrlOf('https://api.acme.ghe.com')).toBe('https://acme.ghe.com');
    expect(webUrlOf('https://ghe.example.com/api/v3')).toBe('https://ghe.example.com');
    expect(webUrlOf('http://127.0.0.1:4000/api/v3')).toBe('http://127.0.0.1:4000');
  });
});
