import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectHttp, makeTempDir, protocolError, spawnServer, type TestSession } from '@suite/test-kit';
import { BIN, isoAgo, lines } from './helpers.js';

const WAIT = { timeoutMs: 8000 };

let session: TestSession | undefined;
let child: ChildProcess | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await session?.close().catch(() => undefined);
  session = undefined;
  child?.kill('SIGTERM');
  child = undefined;
  await cleanup?.();
  cleanup = undefined;
});

async function logsDir(): Promise<string> {
  const made = await makeTempDir('suite-logs-bin-');
  cleanup = made.cleanup;
  await writeFile(path.join(made.dir, 'app.log'), lines(`${isoAgo(30)} INFO started`, `${isoAgo(20)} ERROR payment 12 declined`, '  at pay (pay.js:3)', `${isoAgo(10)} INFO ok`));
  await writeFile(path.join(made.dir, 'app.log.1'), lines(`${isoAgo(90)} ERROR payment 7 declined`));
  await writeFile(path.join(made.dir, 'secret.log'), lines('token=abc'));
  return made.dir;
}

describe('mcp-server-logs over stdio (the built bin)', () => {
  it('tails, searches rotated copies, reads resources and prompts', async () => {
    const dir = await logsDir();
    session = await spawnServer(BIN, [dir]);
    const tail = await session.callTool('tail_log', { path: path.join(dir, 'app.log'), lines: 2 });
    expect(tail.text).toMatch(/at pay \(pay\.js:3\)\n.*INFO ok$/);
    const search = await session.callTool('search_logs', { pattern: 'payment \\d+ declined' });
    expect((search.structured as { matches: { file: string }[] }).matches.map((m) => path.basename(m.file))).toEqual(['app.log', 'app.log.1']);
    const stats = await session.callTool('log_stats', {});
    expect(stats.structured).toMatchObject({ entries: 5, topErrors: [{ pattern: 'payment <n> declined', count: 2 }] });
    expect((await session.readResource(`logs://file${dir}/app.log?level=error`)).text).toMatch(/ERROR payment 12 declined\n {2}at pay/);
    const prompt = await session.getPrompt('debug-error', { error: 'payment 12 declined' });
    expect(prompt.resources.map((r) => r.uri)).toEqual([`logs://file${dir}/app.log?grep=payment%2012%20declined`]);
    expect((await session.callTool('tail_log', { path: '/etc/hostname' })).isError).toBe(true);
  });

  it('a subscription fires on an append, and again after a rotation', async () => {
    const dir = await logsDir();
    session = await spawnServer(BIN, [dir]);
    const log = path.join(dir, 'app.log');
    const uri = `logs://file${log}`;
    await session.client.subscribeResource({ uri });
    let mark = session.mark();
    await appendFile(log, lines(`${isoAgo(0)} ERROR over stdio`));
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { ...WAIT, after: mark });
    mark = session.mark();
    await rename(log, `${log}.2`);
    await writeFile(log, lines(`${isoAgo(0)} INFO fresh file`));
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { ...WAIT, after: mark });
    expect((await session.readResource(uri)).text).toMatch(/INFO fresh file$/);
  });

  it('serves a file named on the command line with its rotations only', async () => {
    const dir = await logsDir();
    session = await spawnServer(BIN, [path.join(dir, 'app.log')]);
    const list = await session.callTool('list_logs', {});
    expect((list.structured as { logs: { path: string }[] }).logs.map((l) => path.basename(l.path))).toEqual(['app.log', 'app.log.1']);
    expect((await session.callTool('tail_log', { path: path.join(dir, 'secret.log') })).isError).toBe(true);
    expect(await protocolError(session.readResource(`logs://file${dir}/secret.log`))).toMatchObject({ code: -32003 });
  });

  it('prints help, and refuses a path that does not exist with a usage error', () => {
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/mcp-server-logs \[options\] \[DIR_OR_FILE\.\.\.\]/);
    expect(help.stdout).toMatch(/--json-level-field/);
    expect(help.stdout).toMatch(/--entry-pattern/);
    const missing = spawnSync(process.execPath, [BIN, '/no/such/dir'], { encoding: 'utf8' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/Not found: \/no\/such\/dir/);
    const pattern = spawnSync(process.execPath, [BIN, '--entry-pattern', '(', '/tmp'], { encoding: 'utf8' });
    expect(pattern.status).toBe(2);
    expect(pattern.stderr).toMatch(/--entry-pattern is not a valid regular expression/);
  });
});

describe('mcp-server-logs over Streamable HTTP (--http)', () => {
  it('lists, tails, searches, reads resources and delivers a subscription', async () => {
    const dir = await logsDir();
    child = spawn(process.execPath, [BIN, '--http', '--port', '0', '--drain-seconds', '0', '--log-level', 'info', dir], { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let stderr = '';
      const timer = setTimeout(() => reject(new Error(`no listening line in: ${stderr}`)), 15_000);
      child!.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const m = /listening on (http:\/\/\S+\/mcp)/.exec(stderr);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      });
    });
    session = await connectHttp(url);
    expect(await session.toolNames()).toEqual(['list_logs', 'tail_log', 'read_log_range', 'search_logs', 'log_stats', 'read_new_lines']);
    const tail = await session.callTool('tail_log', { path: path.join(dir, 'app.log'), lines: 1 });
    expect(tail.text).toMatch(/INFO ok$/);
    const search = await session.callTool('search_logs', { level: 'error' });
    expect((search.structured as { matches: unknown[] }).matches).toHaveLength(2);
    const { resources } = await session.client.listResources();
    expect(resources.map((r) => r.name)).toEqual(['recent', 'app.log', 'app.log.1', 'secret.log']);
    const uri = `logs://file${dir}/app.log`;
    await session.client.subscribeResource({ uri });
    const mark = session.mark();
    await appendFile(path.join(dir, 'app.log'), lines(`${isoAgo(0)} WARN over http`));
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { ...WAIT, after: mark });
    expect((await session.readResource(uri)).text).toMatch(/WARN over http$/);
  });
});
