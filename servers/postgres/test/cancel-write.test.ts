import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, waitUntil } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** Backends (other than the caller) currently running a statement that contains marker. */
async function runningWith(marker: string): Promise<number> {
  return withClient(db.adminUrl, async (c) => {
    const { rows } = await c.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND query LIKE '%' || $1 || '%'",
      [marker],
    );
    return rows[0].n as number;
  });
}

describe('cancellation and timeouts stop the query on the server', () => {
  it('notifications/cancelled cancels the backend query (gone from pg_stat_activity)', async () => {
    const made = makeConfig(db.roleUrl);
    const session = await connectInProcess(buildServer(made.config));
    try {
      const marker = `cancel_me_${Date.now()}`;
      const controller = new AbortController();
      const call = session.callTool('query', { sql: `SELECT pg_sleep(60), '${marker}'` }, { signal: controller.signal });
      const settled = call.then(
        () => 'resolved',
        () => 'rejected',
      );
      await waitUntil(async () => (await runningWith(marker)) === 1, { what: 'the query to start', timeoutMs: 15_000 });
      controller.abort();
      expect(await settled).toBe('rejected');
      await waitUntil(async () => (await runningWith(marker)) === 0, { what: 'the backend query to be cancelled', timeoutMs: 15_000 });
      // The pool still works afterwards.
      const ok = await session.callTool('query', { sql: 'SELECT 1 AS one' });
      expect(ok.structured!.rows).toEqual([[1]]);
    } finally {
      await session.close();
      await made.close();
    }
  });

  it('statement_timeout cancels on the server and says so', async () => {
    const made = makeConfig(db.roleUrl, { limits: { statementTimeoutMs: 300 } });
    const session = await connectInProcess(buildServer(made.config));
    try {
      const marker = `slow_${Date.now()}`;
      const r = await session.callTool('query', { sql: `SELECT pg_sleep(30), '${marker}'` });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/cancelled on the server after the statement timeout \(300 ms\)/);
      expect(await runningWith(marker)).toBe(0);
    } finally {
      await session.close();
      await made.close();
    }
  });

  it('a user cannot lift the statement timeout for the statement itself', async () => {
    const made = makeConfig(db.roleUrl, { limits: { statementTimeoutMs: 300 } });
    const session = await connectInProcess(buildServer(made.config));
    try {
      const r = await session.callTool('query', { sql: "SELECT set_config('statement_timeout', '0', false), pg_sleep(5)" });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/statement timeout/);
    } finally {
      await session.close();
      await made.close();
    }
  });

  it('lock_timeout stops waiting on a lock', async () => {
    const made = makeConfig(db.roleUrl, { limits: { lockTimeoutMs: 200 } });
    const session = await connectInProcess(buildServer(made.config));
    const holder = await import('pg').then(({ default: pg }) => new pg.Client({ connectionString: db.adminUrl }));
    await holder.connect();
    try {
      await holder.query('BEGIN; LOCK TABLE customers IN ACCESS EXCLUSIVE MODE');
      const r = await session.callTool('query', { sql: 'SELECT count(*) FROM customers' });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/lock timeout/);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await session.close();
      await made.close();
    }
  });
});

describe('--allow-write: execute', () => {
  it('is registered only with allowWrite, with destructive annotations', async () => {
    const readOnly = makeConfig(db.roleUrl);
    const ro = await connectInProcess(buildServer(readOnly.config));
    expect((await ro.client.listTools()).tools.map((t) => t.name)).not.toContain('execute');
    await ro.close();
    await readOnly.close();

    const writable = makeConfig(db.adminUrl, { allowWrite: true });
    const rw = await connectInProcess(buildServer(writable.config));
    const execute = (await rw.client.listTools()).tools.find((t) => t.name === 'execute');
    expect(execute?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    await rw.close();
    await writable.close();
  });

  it('runs one statement in its own transaction; failures roll back; query stays read-only', async () => {
    const made = makeConfig(db.adminUrl, { allowWrite: true, poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      const created = await s.callTool('execute', { sql: 'CREATE TABLE notes (id int PRIMARY KEY, body text)' });
      expect(created.isError).toBe(false);
      expect(created.text).toMatch(/CREATE/);
      const inserted = await s.callTool('execute', { sql: 'INSERT INTO notes VALUES ($1, $2), (2, $3) RETURNING id', params: [1, 'one', 'two'] });
      expect(inserted.structured).toMatchObject({ rows: [[1], [2]], command: 'INSERT' });
      const updated = await s.callTool('execute', { sql: "UPDATE notes SET body = 'x'" });
      expect(updated.text).toMatch(/UPDATE \(2 rows affected\)/);
      expect(updated.structured!.rowCount).toBe(2);

      const two = await s.callTool('execute', { sql: 'DELETE FROM notes; DROP TABLE notes' });
      expect(two.isError).toBe(true);
      expect(two.text).toMatch(/multiple commands/);
      const failing = await s.callTool('execute', { sql: 'INSERT INTO notes VALUES (3, $1), (1, $1)', params: ['dup'] });
      expect(failing.isError).toBe(true);
      expect(failing.text).toMatch(/duplicate key value violates unique constraint "notes_pkey"/);
      expect(failing.text).toMatch(/DETAIL: Key \(id\)=\(1\) already exists/);
      const rows = await withClient(db.adminUrl, async (c) => (await c.query('SELECT id FROM notes ORDER BY id')).rows.map((r) => r.id));
      expect(rows).toEqual([1, 2]);

      const viaQuery = await s.callTool('query', { sql: 'DELETE FROM notes' });
      expect(viaQuery.isError).toBe(true);
      expect(viaQuery.text).toMatch(/read-only transaction/);

      // A committed SET would change the pooled session: such connections are not reused.
      expect((await s.callTool('execute', { sql: "SET search_path TO 'nowhere'" })).isError).toBe(false);
      const path = await s.callTool('query', { sql: 'SHOW search_path' });
      expect(path.structured!.rows).toEqual([['"$user", public']]);
      await s.callTool('execute', { sql: 'DROP TABLE notes' });
    } finally {
      await s.close();
      await made.close();
    }
  });

  it('execute caps the returned rows but completes the whole write', async () => {
    const made = makeConfig(db.adminUrl, { allowWrite: true, limits: { maxRows: 10 } });
    const s = await connectInProcess(buildServer(made.config));
    try {
      await s.callTool('execute', { sql: 'CREATE TABLE bulk (n int)' });
      const r = await s.callTool('execute', { sql: 'INSERT INTO bulk SELECT generate_series(1, 500) RETURNING n' });
      expect(r.isError).toBe(false);
      expect(r.structured!.truncated).toBe(true);
      expect(r.structured!.rowCount).toBe(10);
      const n = await withClient(db.adminUrl, async (c) => (await c.query('SELECT count(*)::int AS n FROM bulk')).rows[0].n);
      expect(n).toBe(500);
      await s.callTool('execute', { sql: 'DROP TABLE bulk' });
    } finally {
      await s.close();
      await made.close();
    }
  });

  it('execute leaves no session-level advisory lock on the pooled connection', async () => {
    const made = makeConfig(db.adminUrl, { allowWrite: true, poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      const r = await s.callTool('execute', { sql: 'SELECT pg_advisory_lock(535353)' });
      expect(r.isError, r.text).toBe(false);
      // The next call on the same single pooled connection must not still hold it.
      await s.callTool('execute', { sql: 'SELECT 1' });
      const held = await withClient(db.adminUrl, async (c) => (await c.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 535353")).rows[0].n);
      expect(held).toBe(0);
    } finally {
      await s.close();
      await made.close();
    }
  });
});
