import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, type TestSession } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

/**
 * The read-only guarantee, attack by attack, as a least-privilege role. Each case checks what
 * the server answered AND, from a separate superuser connection, that nothing changed.
 */
let db: TestDatabase;
let session: TestSession;
let closeConfig: () => Promise<void>;

/** Everything an attack might have touched, read from outside. */
async function fingerprint(): Promise<string> {
  return withClient(db.adminUrl, async (c) => {
    const { rows } = await c.query(`
      SELECT (SELECT string_agg(n.nspname || '.' || c.relname, ',' ORDER BY 1) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
               WHERE n.nspname NOT IN ('pg_catalog','information_schema','pg_toast')) AS relations,
             (SELECT string_agg(id || ':' || label, ',' ORDER BY id) FROM victims) AS victims,
             (SELECT count(*) FROM pg_largeobject_metadata) AS large_objects,
             (SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE pronamespace = 'public'::regnamespace) AS functions,
             pg_conf_load_time()::text AS conf_loaded,
             (SELECT coalesce(stats_reset::text, 'never') FROM pg_stat_database WHERE datname = current_database()) AS stats_reset`);
    return JSON.stringify(rows[0]);
  });
}

async function expectUnchanged(sql: string, expectError: RegExp | null): Promise<string> {
  const before = await fingerprint();
  const outcome = await session.callTool('query', { sql });
  if (expectError) {
    expect(outcome.isError, `expected ${JSON.stringify(sql)} to fail, got: ${outcome.text}`).toBe(true);
    expect(outcome.text).toMatch(expectError);
  }
  expect(await fingerprint()).toBe(before);
  // The same payload through explain_query with a hypothetical index (hypopg in the caller's
  // session): planned or refused, it changes nothing either.
  const explained = await session.callTool('explain_query', { sql, hypothetical_indexes: ['CREATE INDEX ON victims (label)'] });
  expect(explained.text).not.toMatch(/hypopg extension/);
  expect(await fingerprint()).toBe(before);
  payloads.push(sql);
  return outcome.text;
}

/** Every payload the cases below tried, tried again inside a hypothetical index's statement at the end. */
const payloads: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await withClient(db.adminUrl, (c) => c.query('CREATE EXTENSION hypopg'));
  const made = makeConfig(db.roleUrl);
  closeConfig = made.close;
  session = await connectInProcess(buildServer(made.config));
}, 60_000);

afterAll(async () => {
  await session?.close();
  await closeConfig?.();
  await db?.drop();
});

describe('read-only mode cannot be escaped', () => {
  it('runs exactly one statement: COMMIT; DROP TABLE is refused by PostgreSQL', async () => {
    await expectUnchanged('COMMIT; DROP TABLE victims', /cannot insert multiple commands into a prepared statement/);
    await expectUnchanged('SELECT 1; SELECT 2', /multiple commands/);
  });

  it('refuses ROLLBACK; ... chains', async () => {
    await expectUnchanged('ROLLBACK; DROP TABLE victims', /multiple commands/);
    await expectUnchanged('ROLLBACK; BEGIN; DELETE FROM victims; COMMIT', /multiple commands/);
  });

  it('refuses SET TRANSACTION READ WRITE (a snapshot is already taken)', async () => {
    await expectUnchanged('SET TRANSACTION READ WRITE', /read-write mode must be set before any query/);
  });

  it('refuses BEGIN READ WRITE inside our transaction; the next statement is still read-only', async () => {
    await expectUnchanged('BEGIN READ WRITE', /read-write mode must be set before any query/);
    const text = await expectUnchanged('BEGIN', null);
    expect(text).toMatch(/WARNING: there is already a transaction in progress/);
    await expectUnchanged('DROP TABLE victims', /read-only transaction/);
  });

  it('refuses data-modifying CTEs', async () => {
    await expectUnchanged('WITH gone AS (DELETE FROM victims RETURNING *) SELECT * FROM gone', /read-only transaction/);
    await expectUnchanged("WITH x AS (INSERT INTO victims VALUES (2, 'new') RETURNING id) SELECT * FROM x", /read-only transaction/);
  });

  it('is not fooled by leading comments', async () => {
    await expectUnchanged('/* harmless */ -- really\nDROP TABLE victims', /read-only transaction/);
    await expectUnchanged('-- comment\nCOMMIT; DROP TABLE victims', /multiple commands/);
    await expectUnchanged('/* COMMIT; */ SELECT 1; DROP TABLE victims', /multiple commands/);
  });

  it('refuses DO blocks and CALL of procedures that write or commit', async () => {
    await expectUnchanged('DO $$ BEGIN DROP TABLE victims; END $$', /read-only transaction/);
    await expectUnchanged("DO $$ BEGIN EXECUTE 'DELETE FROM victims'; END $$", /read-only transaction/);
    await expectUnchanged('CALL drop_victims()', /read-only transaction|permission denied/);
  });

  it('refuses COPY ... TO PROGRAM and COPY ... TO a server file', async () => {
    const marker = path.join(os.tmpdir(), `suite-pg-copy-${randomBytes(4).toString('hex')}`);
    await expectUnchanged(`COPY victims TO PROGRAM 'touch ${marker}'`, /permission denied|must be superuser|privileges of the pg_execute_server_program/);
    await expectUnchanged(`COPY victims TO '${marker}.csv'`, /permission denied|must be superuser|privileges of the pg_write_server_files/);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(`${marker}.csv`)).toBe(false);
  });

  it('refuses pg_read_file', async () => {
    const text = await expectUnchanged("SELECT pg_read_file('/etc/passwd')", /permission denied/);
    expect(text).not.toMatch(/root:/);
  });

  it('refuses lo_import; lo_from_bytea runs but is rolled back', async () => {
    await expectUnchanged("SELECT lo_import('/etc/hostname')", /permission denied|must be superuser|read-only/);
    // PostgreSQL lets lo_from_bytea run in a read-only transaction: the ROLLBACK is what saves us.
    const text = await expectUnchanged("SELECT lo_from_bytea(0, '\\x41'::bytea) AS oid", null);
    const oid = /\n(\d+)\n/.exec(text)?.[1];
    expect(oid).toBeDefined();
    const exists = await withClient(db.adminUrl, async (c) => (await c.query('SELECT count(*)::int AS n FROM pg_largeobject_metadata WHERE oid = $1', [oid])).rows[0].n);
    expect(exists).toBe(0);
  });

  it('refuses pg_reload_conf (configuration load time unchanged)', async () => {
    await expectUnchanged('SELECT pg_reload_conf()', /permission denied/);
  });

  it('refuses pg_stat_reset (statistics reset time and counters unchanged)', async () => {
    const commits = async (): Promise<number> =>
      withClient(db.adminUrl, async (c) => Number((await c.query('SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()')).rows[0].xact_commit));
    const before = await commits();
    await expectUnchanged('SELECT pg_stat_reset()', /permission denied/);
    expect(await commits()).toBeGreaterThanOrEqual(before);
  });

  it('refuses SELECT ... FOR UPDATE and leaves no row lock behind', async () => {
    await expectUnchanged('SELECT * FROM victims FOR UPDATE', /read-only transaction/);
    await withClient(db.adminUrl, async (c) => {
      await c.query('BEGIN');
      const locked = await c.query('SELECT * FROM victims FOR UPDATE NOWAIT');
      expect(locked.rowCount).toBe(1);
      await c.query('ROLLBACK');
    });
  });

  it('GRANT, CREATE and friends fail', async () => {
    await expectUnchanged('CREATE TABLE intruder (id int)', /read-only transaction/);
    await expectUnchanged('TRUNCATE victims', /read-only transaction/);
    await expectUnchanged('ALTER TABLE victims ADD COLUMN x int', /read-only transaction/);
  });
});

describe('hypothetical indexes cannot carry a payload', () => {
  it('every payload above, placed in a CREATE INDEX statement, is refused before anything reaches the database', async () => {
    expect(payloads.length).toBeGreaterThan(20);
    const before = await fingerprint();
    for (const payload of payloads) {
      for (const statement of [`CREATE INDEX ON victims (label) WHERE ${payload}`, `CREATE INDEX ON victims ((${payload}))`, `CREATE INDEX ON victims (label); ${payload}`]) {
        const r = await session.callTool('explain_query', { sql: 'SELECT * FROM victims', hypothetical_indexes: [statement] });
        expect(r.isError, `${statement} was accepted: ${r.text}`).toBe(true);
        expect(r.text).toMatch(/^Not a CREATE INDEX statement this tool accepts/);
      }
    }
    expect(await fingerprint()).toBe(before);
  });
});

describe('session state cannot leak into later calls', () => {
  it("set_config('default_transaction_read_only','off',false) is undone: a later call on the same connection is still read-only", async () => {
    const single = makeConfig(db.roleUrl, { poolSize: 1 });
    const s = await connectInProcess(buildServer(single.config));
    try {
      const first = await s.callTool('query', { sql: "SELECT pg_backend_pid() AS pid, set_config('default_transaction_read_only', 'off', false) AS v" });
      expect(first.isError).toBe(false);
      const pid = (first.structured!.rows as unknown[][])[0]![0];
      const later = await s.callTool('query', { sql: "SELECT pg_backend_pid() AS pid, current_setting('default_transaction_read_only') AS d, current_setting('transaction_read_only') AS t" });
      expect(later.structured!.rows).toEqual([[pid, 'on', 'on']]);
      const write = await s.callTool('query', { sql: 'DROP TABLE victims' });
      expect(write.isError).toBe(true);
      expect(write.text).toMatch(/read-only transaction/);
      expect(await fingerprint()).toContain('1:keep me');
    } finally {
      await s.close();
      await single.close();
    }
  });

  it('session-level advisory locks (which a ROLLBACK keeps) are released before the connection is reused', async () => {
    const single = makeConfig(db.roleUrl, { poolSize: 1 });
    const s = await connectInProcess(buildServer(single.config));
    try {
      const taken = await s.callTool('query', { sql: 'SELECT pg_backend_pid() AS pid, pg_advisory_lock(424242) AS locked' });
      expect(taken.isError, taken.text).toBe(false);
      const pid = (taken.structured!.rows as unknown[][])[0]![0];
      // The same pooled connection answers the next call, and nobody holds the lock any more.
      const later = await s.callTool('query', { sql: 'SELECT pg_backend_pid() AS pid' });
      expect(later.structured!.rows).toEqual([[pid]]);
      const held = await withClient(db.adminUrl, async (c) => (await c.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = 424242")).rows[0].n);
      expect(held).toBe(0);
    } finally {
      await s.close();
      await single.close();
    }
  });

  it('SET ROLE / SET SESSION CHARACTERISTICS are rolled back too', async () => {
    const single = makeConfig(db.roleUrl, { poolSize: 1 });
    const s = await connectInProcess(buildServer(single.config));
    try {
      const switched = await s.callTool('query', { sql: "SELECT pg_backend_pid(), set_config('role', 'pg_read_all_data', false), current_user::text" });
      expect((switched.structured!.rows as unknown[][])[0]![2]).toBe('pg_read_all_data');
      const pid = (switched.structured!.rows as unknown[][])[0]![0];
      const back = await s.callTool('query', { sql: 'SELECT pg_backend_pid(), current_user::text' });
      expect(back.structured!.rows).toEqual([[pid, db.role]]);
      expect((await s.callTool('query', { sql: 'SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE' })).isError).toBe(false);
      const after = await s.callTool('query', { sql: "SELECT current_setting('transaction_read_only') AS t" });
      expect(after.structured!.rows).toEqual([['on']]);
    } finally {
      await s.close();
      await single.close();
    }
  });
});

describe('every call ends its transaction', () => {
  /** Relation locks and open transactions the test role's sessions hold right now, seen from outside. */
  async function leftovers(): Promise<{ locks: number; openTransactions: number }> {
    return withClient(db.adminUrl, async (c) => {
      const { rows } = await c.query<{ locks: number; open: number }>(
        `SELECT (SELECT count(*)::int FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
                  WHERE a.usename = $1 AND l.locktype = 'relation' AND l.relation = 'victims'::regclass) AS locks,
                (SELECT count(*)::int FROM pg_stat_activity WHERE usename = $1 AND (state LIKE 'idle in transaction%' OR backend_xid IS NOT NULL OR backend_xmin IS NOT NULL)) AS open`,
        [db.role],
      );
      return { locks: rows[0]!.locks, openTransactions: rows[0]!.open };
    });
  }

  /** The ROLLBACK leaves with the answer and completes while it travels: give it a moment, not forever. */
  async function settledLeftovers(): Promise<{ locks: number; openTransactions: number }> {
    const until = Date.now() + 5_000;
    for (;;) {
      const seen = await leftovers();
      if ((seen.locks === 0 && seen.openTransactions === 0) || Date.now() > until) return seen;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('after a complete result, a result cut at the row cap, and an error: no lock or snapshot is left', async () => {
    const complete = await session.callTool('query', { sql: 'SELECT count(*) AS n FROM victims' });
    expect(complete.isError).toBe(false);
    expect(await settledLeftovers()).toEqual({ locks: 0, openTransactions: 0 });

    const capped = await session.callTool('query', { sql: 'SELECT v.id, g FROM victims v, generate_series(1, 5000) g' });
    expect(capped.structured).toMatchObject({ truncated: true });
    expect(await settledLeftovers()).toEqual({ locks: 0, openTransactions: 0 });

    const failed = await session.callTool('query', { sql: 'SELECT 1 / (id - id) FROM victims' });
    expect(failed.isError).toBe(true);
    expect(failed.text).toMatch(/division by zero/);
    expect(await settledLeftovers()).toEqual({ locks: 0, openTransactions: 0 });
  });

  it('a type-name lookup after the ROLLBACK runs in a read-only transaction of its own and ends too', async () => {
    const typeName = `suite_mood_${randomBytes(3).toString('hex')}`;
    await withClient(db.adminUrl, (c) => c.query(`CREATE TYPE ${typeName} AS ENUM ('ok', 'meh')`));
    const r = await session.callTool('query', { sql: `SELECT 'meh'::${typeName} AS mood, count(*)::int AS n FROM victims` });
    expect(r.isError).toBe(false);
    expect(r.structured).toMatchObject({ columns: [{ name: 'mood', type: typeName }, { name: 'n', type: 'integer' }], rows: [['meh', 1]] });
    expect(await settledLeftovers()).toEqual({ locks: 0, openTransactions: 0 });
  });
});
