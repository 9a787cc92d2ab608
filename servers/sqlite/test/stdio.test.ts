import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type SpawnedSession } from '@suite/test-kit';
import { BIN, LONG_QUERY, makeDatabaseFile, snapshotTree, waitUntil } from './helpers.js';

/** Pids whose parent is `parent`, read from /proc (Linux). */
function childrenOf(parent: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === parent) out.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

describe('the built bin over stdio', () => {
  let dir: string;
  let file: string;
  let cleanup: () => Promise<void>;
  let session: SpawnedSession | undefined;
  beforeAll(async () => {
    ({ dir, file, cleanup } = await makeDatabaseFile());
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('serves a database read-only by default and leaves it untouched', async () => {
    const before = await snapshotTree(dir);
    session = await spawnServer(BIN, [file]);
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['append_insight', 'describe_table', 'explain_query', 'list_tables', 'read_query', 'recommend_indexes']);
    const out = await session.callTool('read_query', { sql: 'SELECT name FROM people WHERE id = ?', params: [2] });
    expect(out.structured).toEqual({ columns: ['name'], rows: [['Grace']], rowCount: 1, truncated: false });
    const write = await session.callTool('read_query', { sql: 'DELETE FROM people' });
    expect(write.isError).toBe(true);
    await session.close();
    session = undefined;
    expect(await snapshotTree(dir)).toEqual(before);
  });

  it('applies --timeout and --max-rows, and answers a ping during a long query', async () => {
    session = await spawnServer(BIN, ['--timeout', '2', '--max-rows', '2', file]);
    let settled = false;
    const long = session.callTool('read_query', { sql: LONG_QUERY }).finally(() => {
      settled = true;
    });
    await new Promise((r) => setTimeout(r, 200));
    await session.client.ping();
    expect(settled).toBe(false);
    const out = await long;
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/stopped after 2 s/);
    const capped = await session.callTool('read_query', { sql: 'SELECT id FROM people' });
    expect(capped.structured).toMatchObject({ rowCount: 2, truncated: true });
  });

  it('cancels a running query over stdio and keeps serving', async () => {
    session = await spawnServer(BIN, [file]);
    const controller = new AbortController();
    const long = session.callTool('read_query', { sql: LONG_QUERY }, { signal: controller.signal });
    await new Promise((r) => setTimeout(r, 200));
    controller.abort();
    await expect(long).rejects.toThrow();
    const next = await session.callTool('read_query', { sql: 'SELECT count(*) FROM teams' });
    expect(next.structured).toMatchObject({ rows: [[2]] });
    expect(session.stderr()).not.toMatch(/\n\s+at /);
  });

  it('registers the write tools with --allow-write', async () => {
    session = await spawnServer(BIN, ['--allow-write', file]);
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['write_query', 'create_table']));
    const out = await session.callTool('write_query', { sql: 'UPDATE teams SET name = upper(name) WHERE id = ?', params: [2] });
    expect(out.structured).toMatchObject({ changes: 1 });
  });

  it('serves the demo database with --demo', async () => {
    session = await spawnServer(BIN, ['--demo']);
    const out = await session.callTool('read_query', { sql: 'SELECT count(*) AS n FROM customers' });
    expect(out.structured).toMatchObject({ rows: [[5]] });
  });

  it('leaves no query process behind, not even a zombie, when the client closes stdin', async () => {
    const child = spawn(process.execPath, [BIN, file], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const send = (m: unknown): boolean => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_query', arguments: { sql: 'SELECT 1' } } });
    await waitUntil(() => out.includes('"id":2'), { what: 'the query answer' });
    const queryProcesses = childrenOf(child.pid!);
    expect(queryProcesses.length).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.stdin.end();
    expect(await exited).toBe(0);
    // Reaped by the server itself before it exited: no /proc entry left for init to collect.
    expect(queryProcesses.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
  });

  it('keeps the secrets of the server out of the query processes, which see a scrubbed environment', async () => {
    const env = { ...process.env, GITHUB_TOKEN: 'ghp_not-for-query-processes', PGPASSWORD: 'pg-not-for-query-processes', SQLITE_TMPDIR: dir };
    const child = spawn(process.execPath, [BIN, file], { stdio: ['pipe', 'pipe', 'ignore'], env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const send = (m: unknown): boolean => child.stdin.write(`${JSON.stringify(m)}\n`);
    send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'read_query', arguments: { sql: 'SELECT 1' } } });
    try {
      await waitUntil(() => out.includes('"id":2'), { what: 'the query answer' });
      // The query process, not the watchdog (a shell) that the shared layer starts beside it.
      const [queryProcess] = childrenOf(child.pid!).filter((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('query-process'));
      expect(queryProcess).toBeDefined();
      const environ = readFileSync(`/proc/${queryProcess}/environ`, 'utf8').split('\0');
      expect(environ.join('\n')).not.toMatch(/GITHUB_TOKEN|PGPASSWORD|not-for-query-processes/);
      expect(environ).toContain(`SQLITE_TMPDIR=${dir}`);
      expect(environ).toContain(`PATH=${process.env.PATH}`);
    } finally {
      const exited = new Promise((resolve) => child.on('exit', resolve));
      child.stdin.end();
      await exited;
    }
  });

  it('exits with a clear message for a missing file and for flags that need --allow-write', () => {
    const missing = path.join(dir, 'typo.db');
    const run = spawnSync(process.execPath, [BIN, missing], { encoding: 'utf8', input: '' });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain('Database file not found');
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(missing)).toBe(false);
    const flag = spawnSync(process.execPath, [BIN, '--allow-attach', file], { encoding: 'utf8', input: '' });
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(/--allow-attach only applies with --allow-write/);
    const none = spawnSync(process.execPath, [BIN], { encoding: 'utf8', input: '' });
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/--demo/);
  });
});
