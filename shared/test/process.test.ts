import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHttp, spawnServer } from '@suite/test-kit';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'probe-bin.mjs');

function run(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '', timeout: 10_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const INIT = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });

describe('server process', () => {
  it('prints help and version on stdout and exits 0', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('Usage: mcp-server-probe [--shout] [DIR...]');
    expect(help.stdout).toContain('--http');
    expect(help.stdout).toContain('--shout');
    const version = run(['--version']);
    expect(version).toMatchObject({ status: 0, stdout: '9.9.9\n' });
  });

  it('exits 2 with a message on stderr, and nothing on stdout, for usage errors', () => {
    for (const args of [['--no-such-flag'], ['--port', '3000'], ['--http', '--port', 'abc'], ['a', 'b', 'c', 'd'], ['--log-level', 'loud'], ['--drain-seconds', '1'], ['--http', '--drain-seconds=-1'], ['--http', '--drain-seconds', '601']]) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^mcp-server-probe: .+\nRun 'mcp-server-probe --help' for usage\.\n$/);
    }
  });

  it('names an unknown option with balanced quotes', () => {
    for (const flag of ['--no-such-flag', '-z']) {
      expect(run([flag, 'dir']).stderr).toBe(
        `mcp-server-probe: Unknown option '${flag}' (a value that starts with '-' goes after '--').\nRun 'mcp-server-probe --help' for usage.\n`,
      );
    }
  });

  it('speaks MCP over stdio and keeps console output off stdout', async () => {
    const session = await spawnServer(BIN, ['--shout']);
    try {
      const out = await session.callTool('chatty');
      expect(out.text).toBe('HELLO');
      // stderr is another pipe: its bytes may arrive after the answer on stdout.
      await expect.poll(() => session.stderr(), { timeout: 5000 }).toContain('this line would corrupt the protocol stream');
    } finally {
      await session.close();
    }
  });

  it('exits within 1 s of stdin closing, even with a request in flight', async () => {
    const child = spawn(process.execPath, [BIN], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stdin.write(INIT + '\n');
    await expect.poll(() => stdout.includes('"id":1'), { timeout: 5000 }).toBe(true);
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hang', arguments: {} } }) + '\n');
    await new Promise((r) => setTimeout(r, 200));
    const closedAt = Date.now();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.end();
    const code = await exited;
    expect(Date.now() - closedAt).toBeLessThan(1000);
    expect(code).toBe(0);
    // Every line on stdout is a JSON-RPC message.
    for (const line of stdout.trim().split('\n')) expect(JSON.parse(line)).toHaveProperty('jsonrpc', '2.0');
  });

  it('shuts down on SIGTERM and SIGINT', async () => {
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      const child = spawn(process.execPath, [BIN], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.on('data', (c) => (stdout += c));
      child.stdin.write(INIT + '\n');
      await expect.poll(() => stdout.includes('"id":1'), { timeout: 5000 }).toBe(true);
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const sentAt = Date.now();
      child.kill(signal);
      expect(await exited).toBe(0);
      expect(Date.now() - sentAt).toBeLessThan(1000);
    }
  });

  it('serves HTTP with --http, announcing the URL on stderr only', async () => {
    const child = spawn(process.execPath, [BIN, '--http', '--port', '0', '--drain-seconds', '0'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c) => (stderr += c));
    child.stdout.on('data', (c) => (stdout += c));
    await expect.poll(() => /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.test(stderr), { timeout: 5000 }).toBe(true);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)![1]!;
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: INIT });
    expect(res.status).toBe(200);
    await res.body?.cancel();
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(stdout).toBe('');
  });
});

/** The probe bin over HTTP, its URL once it listens, and its exit (code and when). */
async function startHttpProbe(args: string[], env: Record<string, string> = {}): Promise<{ child: ChildProcess; base: string; url: string; stderr: () => string; exited: Promise<{ code: number | null; at: number }> }> {
  const child = spawn(process.execPath, [BIN, '--http', '--port', '0', ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })));
  await expect.poll(() => /listening on (http:\/\/\S+\/mcp)/.test(stderr), { timeout: 10_000 }).toBe(true);
  const url = /listening on (http:\/\/\S+\/mcp)/.exec(stderr)![1]!;
  return { child, base: new URL(url).origin, url, stderr: () => stderr, exited };
}

/** A GET through node:http (fetch hides the Connection header): status, body and whether the server closes the connection. */
function probe(base: string, pathname: string): Promise<{ status: number; body: string; closes: boolean }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${base}${pathname}`, { agent: new http.Agent({ keepAlive: true }) }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body, closes: res.headers.connection === 'close' }));
      })
      .on('error', reject);
  });
}

describe('draining over HTTP (SIGTERM, SIGINT)', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`on ${signal}: /readyz answers 503 and /healthz 200 for the grace period while calls (in flight, new, in a new session) are served; then it exits`, async () => {
      const server = await startHttpProbe(['--drain-seconds', '3']);
      children.push(server.child);
      const session = await connectHttp(server.url);
      try {
        expect(await probe(server.base, '/readyz')).toEqual({ status: 200, body: '{"status":"ok"}', closes: false });
        const inFlight = session.callTool('wait', { ms: 1500 });
        await new Promise((r) => setTimeout(r, 200));
        const signalledAt = Date.now();
        server.child.kill(signal);
        await expect.poll(() => server.stderr(), { timeout: 5_000 }).toMatch(new RegExp(`draining for 3 s .*; ${signal} again stops at once`));
        const ready = await probe(server.base, '/readyz');
        expect(ready.status).toBe(503);
        expect(JSON.parse(ready.body)).toEqual({ status: 'unavailable', reason: 'draining' });
        // Whatever the balancer still sends gets served, on connections that then close.
        expect(ready.closes).toBe(true);
        expect((await probe(server.base, '/healthz')).status).toBe(200);
        expect(await session.callTool('chatty')).toMatchObject({ isError: false, text: 'hello' });
        const late = await connectHttp(server.url);
        expect(await late.callTool('wait', { ms: 10 })).toMatchObject({ isError: false, text: 'waited 10 ms' });
        await late.close();
        expect(await inFlight).toMatchObject({ isError: false, text: 'waited 1500 ms' });
        expect(server.child.exitCode).toBeNull();
        const exit = await server.exited;
        expect(exit.code).toBe(0);
        // Not before the grace period is over (a timer does not fire early), and within its bound after.
        expect(exit.at - signalledAt).toBeGreaterThanOrEqual(3_000);
        expect(exit.at - signalledAt).toBeLessThan(3_000 + 5_000);
      } finally {
        await session.close().catch(() => undefined);
      }
    });
  }

  it('a second SIGTERM or SIGINT while draining stops at once: a call cut by it is told the server is shutting down', async () => {
    for (const second of ['SIGTERM', 'SIGINT'] as const) {
      // The default grace over HTTP (5 s), from no flag and no variable.
      const server = await startHttpProbe([], { MCP_DRAIN_SECONDS: '' });
      children.push(server.child);
      const session = await connectHttp(server.url);
      try {
        const hanging = session.callTool('hang').then(
          () => 'answered',
          (error: Error) => error.message,
        );
        await new Promise((r) => setTimeout(r, 200));
        server.child.kill('SIGTERM');
        await expect.poll(() => server.stderr(), { timeout: 5_000 }).toMatch(/draining for 5 s/);
        const secondAt = Date.now();
        server.child.kill(second);
        const exit = await server.exited;
        expect(exit.code).toBe(0);
        expect(exit.at - secondAt).toBeLessThan(2_000);
        expect(await hanging).toMatch(/shutting down/);
      } finally {
        await session.close().catch(() => undefined);
      }
    }
  });

  it('takes its grace from MCP_DRAIN_SECONDS, and 0 closes at once as before', async () => {
    const server = await startHttpProbe([], { MCP_DRAIN_SECONDS: '0' });
    children.push(server.child);
    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    expect(exit.at - signalledAt).toBeLessThan(2_000);
    expect(server.stderr()).not.toMatch(/draining/);
  });
});
