import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '@suite/test-kit';

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
    for (const args of [['--no-such-flag'], ['--port', '3000'], ['--http', '--port', 'abc'], ['a', 'b', 'c', 'd'], ['--log-level', 'loud']]) {
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
    const child = spawn(process.execPath, [BIN, '--http', '--port', '0'], { stdio: ['pipe', 'pipe', 'pipe'] });
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
