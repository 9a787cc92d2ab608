import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, spawnServer, type TestSession } from '@suite/test-kit';
import type { PostgresConfig } from '../src/config.js';
import { buildServer } from '../src/server.js';
import { BIN, createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

/**
 * Several databases in one server: alpha (writable) and beta (read-only, a least-privilege role),
 * each with a table that says which database it is.
 */
const marker = (name: string): string => `CREATE TABLE whoami (name text); INSERT INTO whoami VALUES ('${name}'); CREATE TABLE notes (id serial PRIMARY KEY, body text);`;

let alpha: TestDatabase;
let beta: TestDatabase;
let session: TestSession;
let configs: Map<string, PostgresConfig>;
let closeAll: () => Promise<void>;

beforeAll(async () => {
  [alpha, beta] = await Promise.all([createTestDatabase(marker('alpha')), createTestDatabase(marker('beta'))]);
  const a = makeConfig(alpha.adminUrl, { allowWrite: true });
  const b = makeConfig(beta.roleUrl);
  const databases = (configs = new Map<string, PostgresConfig>([
    ['alpha', a.config],
    ['beta', b.config],
  ]));
  for (const [name, config] of databases) Object.assign(config, { name, databases });
  session = await connectInProcess(buildServer(a.config, { changes: a.changes }));
  closeAll = async () => {
    await a.close();
    await b.close();
  };
}, 60_000);

afterAll(async () => {
  await session?.close();
  await closeAll?.();
  await Promise.all([alpha?.drop(), beta?.drop()]);
});

async function whoami(s: TestSession, database?: string): Promise<string> {
  const r = await s.callTool('query', { sql: 'SELECT name FROM whoami', ...(database ? { database } : {}) });
  expect(r.isError, r.text).toBe(false);
  return (r.structured as { rows: string[][] }).rows[0]![0]!;
}

describe('several PostgreSQL databases', () => {
  it('every tool takes database, with the configured names as its choices', async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toContain('execute');
    for (const tool of tools) {
      const property = (tool.inputSchema.properties ?? {}).database as { enum?: string[] } | undefined;
      expect(property?.enum, tool.name).toEqual(['alpha', 'beta']);
    }
  });

  it('interleaved calls each answer from the database they name (alpha by default)', async () => {
    const order = ['alpha', 'beta', undefined, 'beta', 'alpha', 'beta', undefined, 'alpha'];
    const answers = await Promise.all(order.map((name) => whoami(session, name)));
    expect(answers).toEqual(order.map((name) => name ?? 'alpha'));
    const tables = await session.callTool('describe_table', { table: 'whoami', database: 'beta' });
    expect(tables.isError, tables.text).toBe(false);
  });

  it('the writable database accepts a write; the read-only one refuses it, whichever tool is used', async () => {
    const written = await session.callTool('execute', { sql: "INSERT INTO notes (body) VALUES ('kept') RETURNING id", database: 'alpha' });
    expect(written.isError, written.text).toBe(false);
    const refused = await session.callTool('execute', { sql: "INSERT INTO notes (body) VALUES ('lost')", database: 'beta' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/execute is not available for the database beta \(it is available for: alpha\)/);
    const sneaky = await session.callTool('query', { sql: "INSERT INTO notes (body) VALUES ('lost')", database: 'beta' });
    expect(sneaky.isError).toBe(true);
    expect(sneaky.text).toMatch(/read-only transaction/);
    const counts = await Promise.all([alpha, beta].map((db) => withClient(db.adminUrl, async (c) => (await c.query('SELECT count(*)::int AS n FROM notes')).rows[0].n as number)));
    expect(counts).toEqual([1, 0]);
  });

  it('a name that is not configured is a clear error', async () => {
    const r = await session.callTool('query', { sql: 'SELECT 1', database: 'gamma' });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/database: .*"alpha"\|"beta"/);
  });

  it('resources carry each database in their URIs', async () => {
    const { resourceTemplates } = await session.client.listResourceTemplates();
    const uris = resourceTemplates.map((t) => t.uriTemplate);
    for (const db of [alpha, beta]) {
      expect(uris.some((u) => u.includes(`/${db.name}/tables/`))).toBe(true);
      expect(uris.some((u) => u.includes(`/${db.name}/channel/`))).toBe(true);
    }
    const read = await session.client.readResource({ uri: `postgres://127.0.0.1:5432/${beta.name}/tables/public/whoami/schema` });
    expect(JSON.stringify(read.contents)).toMatch(/whoami/);
  });

  it('each database LISTENs on its own connection: a NOTIFY in one reaches only its channel resource', async () => {
    const uri = (db: TestDatabase): string => `postgres://127.0.0.1:5432/${db.name}/channel/events`;
    await session.client.subscribeResource({ uri: uri(beta) });
    expect(configs.get('beta')!.listener.isListening('events')).toBe(true);
    expect(configs.get('alpha')!.listener.isListening('events')).toBe(false);
    const updated = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri(beta), 10_000);
    await withClient(alpha.adminUrl, (c) => c.query("SELECT pg_notify('events', 'from alpha')"));
    await withClient(beta.adminUrl, (c) => c.query("SELECT pg_notify('events', 'from beta')"));
    await updated;
    const body = JSON.parse((await session.readResource(uri(beta))).text) as { notifications: { payload: string }[] };
    expect(body.notifications.map((n) => n.payload)).toEqual(['from beta']);
    await session.client.unsubscribeResource({ uri: uri(beta) });
  });

  it('start-up refuses a malformed --database, an unknown --read-only-database and one database under two names', () => {
    const run = (args: string[]): { status: number | null; stderr: string } => {
      const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '', timeout: 30_000, env: { ...process.env, DATABASE_URL: '' } });
      return { status: r.status, stderr: r.stderr };
    };
    expect(run(['--database', 'no-equals-sign'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--database takes NAME=URL/) });
    expect(run(['--database', `a=${beta.roleUrl}`, '--read-only-database', 'b'])).toMatchObject({ status: 2, stderr: expect.stringMatching(/--read-only-database b: no database has that name \(configured: a\)/) });
    const twice = run(['--database', `a=${beta.roleUrl}`, '--database', `b=${beta.roleUrl}`]);
    expect(twice.status).not.toBe(0);
    expect(twice.stderr).toMatch(/--database b and a are the same database/);
    expect(twice.stderr).not.toContain(beta.rolePassword);
  });

  it('over stdio of the built bin: --database NAME=URL and --read-only-database', async () => {
    const spawned = await spawnServer(BIN, ['--allow-write', '--database', `alpha=${alpha.adminUrl}`, '--database', `beta=${beta.roleUrl}`, '--read-only-database', 'beta'], {
      env: { SUITE_LOG_LEVEL: 'emergency' },
    });
    try {
      const order = ['beta', 'alpha', 'beta', undefined];
      expect(await Promise.all(order.map((name) => whoami(spawned, name)))).toEqual(['beta', 'alpha', 'beta', 'alpha']);
      expect((await spawned.callTool('execute', { sql: "INSERT INTO notes (body) VALUES ('stdio')", database: 'alpha' })).isError).toBe(false);
      const refused = await spawned.callTool('execute', { sql: "INSERT INTO notes (body) VALUES ('stdio')", database: 'beta' });
      expect(refused.isError).toBe(true);
      const unknown = await spawned.callTool('list_tables', { database: 'nope' });
      expect(unknown.isError).toBe(true);
      expect(unknown.text).toMatch(/alpha/);
    } finally {
      await spawned.close();
    }
  });
});
