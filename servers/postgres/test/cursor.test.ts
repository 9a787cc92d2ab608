import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

describe('rows come from a pg-cursor portal, read only as far as the caps allow', () => {
  it('stops the server computing rows at the cap: 100 rows of a million that each take 2 ms cost about 0.2 s, not half an hour', async () => {
    const made = makeConfig(db.roleUrl, { limits: { maxRows: 100 }, poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      const started = Date.now();
      const r = await s.callTool('query', { sql: 'SELECT n, pg_sleep(0.002)::text AS slept FROM generate_series(1, 1000000) AS n' });
      expect(r.isError).toBe(false);
      expect(r.structured).toMatchObject({ rowCount: 100, truncated: true });
      expect(Date.now() - started).toBeLessThan(5_000);
      // The closed portal leaves the connection clean: the next call on it works and sees no open transaction.
      const next = await s.callTool('query', { sql: "SELECT count(*)::int AS open FROM pg_stat_activity WHERE pid = pg_backend_pid() AND state = 'idle in transaction'" });
      expect(next.structured!.rows).toEqual([[0]]);
    } finally {
      await s.close();
      await made.close();
    }
  }, 30_000);

  it('answers COPY ... TO STDOUT without crashing pg (the data is not a result set) and keeps serving', async () => {
    const made = makeConfig(db.roleUrl, { poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      const r = await s.callTool('query', { sql: 'COPY (SELECT generate_series(1, 3)) TO STDOUT' });
      expect(r.isError).toBe(false);
      expect(r.text).toMatch(/COPY \(3 rows affected\)/);
      expect((await s.callTool('query', { sql: 'SELECT 1 AS one' })).structured!.rows).toEqual([[1]]);
    } finally {
      await s.close();
      await made.close();
    }
  });

  it('refuses COPY ... FROM STDIN in write mode with a clear error, writes nothing and keeps serving', async () => {
    await withClient(db.adminUrl, (c) => c.query('CREATE TABLE copy_target (n int)'));
    const made = makeConfig(db.adminUrl, { allowWrite: true, poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      const r = await s.callTool('execute', { sql: 'COPY copy_target FROM STDIN' });
      expect(r.isError).toBe(true);
      expect(r.text).toBe('COPY ... FROM STDIN is not supported: a tool call cannot stream data to the server. Use INSERT ... VALUES with params instead.');
      expect((await s.callTool('execute', { sql: 'INSERT INTO copy_target VALUES (1)' })).isError).toBe(false);
      const n = await withClient(db.adminUrl, async (c) => (await c.query('SELECT count(*)::int AS n FROM copy_target')).rows[0].n);
      expect(n).toBe(1);
    } finally {
      await s.close();
      await made.close();
      await withClient(db.adminUrl, (c) => c.query('DROP TABLE copy_target'));
    }
  });

  it('keeps the full command tag of DDL (CREATE TABLE, not CREATE) and the counts of DML', async () => {
    const made = makeConfig(db.adminUrl, { allowWrite: true, poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      expect((await s.callTool('execute', { sql: 'CREATE TABLE tagged (n int)' })).structured).toMatchObject({ command: 'CREATE TABLE' });
      expect((await s.callTool('execute', { sql: 'INSERT INTO tagged SELECT generate_series(1, 7)' })).structured).toMatchObject({ command: 'INSERT', rowCount: 7 });
      expect((await s.callTool('execute', { sql: 'DROP TABLE tagged' })).structured).toMatchObject({ command: 'DROP TABLE' });
      // An empty statement is not an error and not truncated.
      expect((await s.callTool('query', { sql: '  ' })).structured).toMatchObject({ truncated: false });
    } finally {
      await s.close();
      await made.close();
    }
  });
});
