import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWithOAuth, freePort, startAuthorizationServer, type TestAuthorizationServer } from '@suite/test-kit/oauth';
import { requestStateKeyFile, startHaproxy, startPrivateRedis, startReplicas, type LoadBalancer, type PrivateRedis } from '@suite/test-kit/replicas';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

/** Runs the bin to its exit (a start-up refusal) and returns its exit code and stderr. */
function runToExit(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('OAuth mode of the built bin (--http --auth-issuer --public-url)', () => {
  let as: TestAuthorizationServer;
  let child: ChildProcessWithoutNullStreams;
  let stderr = '';
  let dir: string;
  let url: string;

  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing (npx -y pnpm@10 --filter @suite/server-filesystem build).`);
    dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'fs-oauth-')));
    writeFileSync(path.join(dir, 'hello.txt'), 'hello\n');
    as = await startAuthorizationServer({
      clients: { reader: 'filesystem:read', writer: 'filesystem:read filesystem:write' },
      scopes: ['filesystem:read', 'filesystem:write'],
    });
    const port = await freePort();
    url = `http://127.0.0.1:${port}/mcp`;
    child = spawn(process.execPath, [bin, '--http', '--port', String(port), '--drain-seconds', '0', '--auth-issuer', as.issuer, '--public-url', url, '--log-level', 'debug', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.on('data', (c) => (stderr += c));
    const deadline = Date.now() + 20_000;
    while (!stderr.includes('listening on')) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server did not start:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }, 30_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await as?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('lets a client that signs in with the write scope read and write, in both eras', async () => {
    for (const era of ['2025-11-25', '2026-07-28'] as const) {
      const client = await connectWithOAuth(url, as, 'writer', 'filesystem:read filesystem:write', era);
      try {
        const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'hello.txt') } });
        expect(JSON.stringify(read.content)).toContain('hello');
        const written = await client.callTool({ name: 'write_file', arguments: { path: path.join(dir, `by-${era}.txt`), content: era } });
        expect(written.isError).toBeFalsy();
        expect(readFileSync(path.join(dir, `by-${era}.txt`), 'utf8')).toBe(era);
      } finally {
        await client.close();
      }
    }
  });

  it('lets a read-only token read, and refuses its write before the file is touched, in both eras', async () => {
    for (const era of ['2025-11-25', '2026-07-28'] as const) {
      const client = await connectWithOAuth(url, as, 'reader', 'filesystem:read', era);
      try {
        const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'hello.txt') } });
        expect(JSON.stringify(read.content)).toContain('hello');
        // The 403 names filesystem:write; the SDK client asks for it, and this client may not have it.
        await expect(client.callTool({ name: 'write_file', arguments: { path: path.join(dir, `reader-${era}.txt`), content: 'x' } })).rejects.toThrow();
        expect(existsSync(path.join(dir, `reader-${era}.txt`))).toBe(false);
      } finally {
        await client.close();
      }
    }
  });

  it('answers without a token 401 with its metadata URL, and never logs a token', async () => {
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${new URL(url).origin}/.well-known/oauth-protected-resource/mcp", scope="filesystem:read"`);
    expect(stderr).toContain('OAuth mode');
    expect(stderr).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}/);
  });

  it('refuses to start when OAuth mode is misconfigured', async () => {
    // Side by side: each is a process start-up.
    const [noPublicUrl, mismatch, stdio, both] = await Promise.all([
      runToExit(['--http', '--auth-issuer', as.issuer, dir]),
      runToExit(['--http', '--port', '0', '--auth-issuer', `${as.issuer}/`, '--public-url', 'http://127.0.0.1:1/mcp', dir]),
      runToExit(['--auth-issuer', as.issuer, dir]),
      runToExit(['--http', '--port', '0', '--auth-token', 'x'.repeat(32), '--auth-issuer', as.issuer, '--public-url', 'http://127.0.0.1:1/mcp', dir]),
    ]);
    expect(noPublicUrl.code).toBe(2);
    expect(noPublicUrl.stderr).toMatch(/--auth-issuer needs --public-url/);
    expect(mismatch.code).toBe(2);
    expect(mismatch.stderr).toMatch(/says its issuer is/);
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toMatch(/applies only with --http/);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/exclude each other/);
  });
});

describe('OAuth mode behind haproxy: two replicas of the built bin on Redis (deploy/haproxy.cfg.template)', () => {
  it('signs in, steps up to write and keeps its 2025 session across replicas with the refreshed token, in both eras', async () => {
    const as = await startAuthorizationServer({ clients: { writer: 'filesystem:read filesystem:write' }, scopes: ['filesystem:read', 'filesystem:write'] });
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'fs-oauth-lb-')));
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}/mcp`;
    let replicas: Awaited<ReturnType<typeof startReplicas>> = [];
    let lb: LoadBalancer | undefined;
    // A Redis of the test's own: nothing is left behind in the machine's.
    let redis: PrivateRedis | undefined;
    try {
      redis = await startPrivateRedis();
      const args = ['--auth-issuer', as.issuer, '--public-url', publicUrl, '--redis-url', redis.url, '--request-state-key-file', await requestStateKeyFile(dir), dir];
      replicas = await startReplicas(bin, args, 2);
      lb = await startHaproxy(replicas, dir, port);
      expect(lb.url).toBe(publicUrl);
      for (const era of ['2025-11-25', '2026-07-28'] as const) {
        const client = await connectWithOAuth(publicUrl, as, 'writer', 'filesystem:read filesystem:write', era);
        try {
          // Requests alternate between the replicas; the write steps the token up mid-session.
          for (let i = 0; i < 3; i++) {
            const written = await client.callTool({ name: 'write_file', arguments: { path: path.join(dir, `lb-${era}-${i}.txt`), content: String(i) } });
            expect(written.isError, JSON.stringify(written.content)).toBeFalsy();
            const read = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, `lb-${era}-${i}.txt`) } });
            expect(JSON.stringify(read.content)).toContain(String(i));
          }
        } finally {
          await client.close();
        }
      }
      const served = await lb.served();
      expect(served.every((n) => n > 0)).toBe(true);
    } finally {
      await lb?.stop();
      await Promise.all(replicas.map((r) => r.server.stop()));
      await redis?.stop();
      await as.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
