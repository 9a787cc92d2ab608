import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, spawnServer, type TestSession } from '@suite/test-kit';
import Database from '../src/sqlite-addon.js';
import { SqliteDatabase, buildServer, type SqliteConfig } from '../src/server.js';
import { BIN, makeDatabaseFile } from './helpers.js';

/** Several SQLite files in one server: sales (writable) and hr (read-only). */
const marker = (name: string): string => `CREATE TABLE whoami (name TEXT); INSERT INTO whoami VALUES ('${name}'); CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);`;

let files: { file: string; cleanup: () => Promise<void> }[];
let databases: SqliteDatabase[];
let session: TestSession;

beforeAll(async () => {
  files = await Promise.all([makeDatabaseFile(marker('sales'), 'sales.db'), makeDatabaseFile(marker('hr'), 'hr.db')]);
  databases = [
    await SqliteDatabase.open({ file: files[0]!.file, name: 'sales', allowWrite: true, workers: 1 }),
    await SqliteDatabase.open({ file: files[1]!.file, name: 'hr', workers: 1 }),
  ];
  const configs = new Map<string, SqliteConfig>([
    ['sales', { database: databases[0]! }],
    ['hr', { database: databases[1]! }],
  ]);
  for (const config of configs.values()) config.databases = configs;
  session = await connectInProcess(buildServer(configs.get('sales')!));
}, 30_000);

afterAll(async () => {
  await session?.close();
  for (const db of databases ?? []) await db.close();
  for (const f of files ?? []) await f.cleanup();
});

async function whoami(s: TestSession, database?: string): Promise<string> {
  const r = await s.callTool('read_query', { query: 'SELECT name FROM whoami', ...(database ? { database } : {}) });
  expect(r.isError, r.text).toBe(false);
  return (r.structured as { rows: string[][] }).rows[0]![0]!;
}

function count(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM notes').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('several SQLite databases', () => {
  it('every tool takes database; interleaved calls answer from the database they name', async () => {
    const { tools } = await session.client.listTools();
    for (const tool of tools) expect(((tool.inputSchema.properties ?? {}).database as { enum?: string[] } | undefined)?.enum, tool.name).toEqual(['sales', 'hr']);
    const order = ['hr', 'sales', undefined, 'hr', 'hr', 'sales'];
    expect(await Promise.all(order.map((name) => whoami(session, name)))).toEqual(order.map((name) => name ?? 'sales'));
    const plan = await session.callTool('recommend_indexes', { query: 'SELECT * FROM notes WHERE body = ?', params: ['x'], database: 'hr' });
    expect(plan.isError, plan.text).toBe(false);
  });

  it('the writable database accepts a write; the read-only one refuses it', async () => {
    const written = await session.callTool('write_query', { query: "INSERT INTO notes (body) VALUES ('kept')", database: 'sales' });
    expect(written.isError, written.text).toBe(false);
    const refused = await session.callTool('write_query', { query: "INSERT INTO notes (body) VALUES ('lost')", database: 'hr' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/write_query is not available for the database hr \(it is available for: sales\)/);
    const sneaky = await session.callTool('read_query', { query: "INSERT INTO notes (body) VALUES ('lost')", database: 'hr' });
    expect(sneaky.isError).toBe(true);
    expect([count(files[0]!.file), count(files[1]!.file)]).toEqual([1, 0]);
  });

  it('a name that is not configured is a clear error; resources carry the database name', async () => {
    const r = await session.callTool('list_tables', { database: 'payroll' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/database: .*"sales"\|"hr"/);
    const { resources } = await session.client.listResources();
    expect(resources.map((x) => x.uri)).toEqual(expect.arrayContaining(['sqlite://sales/schema', 'sqlite://hr/schema']));
    const hr = await session.client.readResource({ uri: 'sqlite://hr/schema' });
    expect(JSON.stringify(hr.contents)).toMatch(/whoami/);
  });

  it('start-up refuses a malformed --database, a name given twice and an unknown --read-only-database', () => {
    const run = (args: string[]): { status: number | null; stderr: string } => {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '', timeout: 30_000 });
      return { status: r.status, stderr: r.stderr };
    };
    expect(run(['--database', files[0]!.file])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--database takes NAME=PATH/) });
    expect(run(['--database', `a=${files[0]!.file}`, '--database', `a=${files[1]!.file}`])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--database a: the name is given twice/) });
    expect(run(['--database', `a=${files[0]!.file}`, '--read-only-database', 'b'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--read-only-database b: no database has that name \(configured: a\)/) });
  });

  it('over stdio of the built bin: --database NAME=PATH and --read-only-database', async () => {
    const spawned = await spawnServer(BIN, ['--allow-write', '--database', `sales=${files[0]!.file}`, '--database', `hr=${files[1]!.file}`, '--read-only-database', 'hr'], {
      env: { SUITE_LOG_LEVEL: 'emergency' },
    });
    try {
      expect(await Promise.all(['hr', 'sales', undefined].map((name) => whoami(spawned, name)))).toEqual(['hr', 'sales', 'sales']);
      expect((await spawned.callTool('write_query', { query: "INSERT INTO notes (body) VALUES ('stdio')", database: 'sales' })).isError).toBe(false);
      expect((await spawned.callTool('write_query', { query: "INSERT INTO notes (body) VALUES ('stdio')", database: 'hr' })).isError).toBe(true);
      expect([count(files[0]!.file), count(files[1]!.file)]).toEqual([2, 0]);
    } finally {
      await spawned.close();
    }
  });
});
