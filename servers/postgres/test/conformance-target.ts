import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { ConformanceTarget } from '@suite/test-kit/abuse';
import { waitUntil } from '@suite/test-kit';
import { ADMIN_URL, BIN, createTestDatabase, urlFor, withClient } from './helpers.js';

const ROWS_PER_INSERT = 200_000;

/**
 * The PostgreSQL server with --allow-write on a database of its own (created here, dropped after),
 * connected as a role that may write inside that database and nothing more: what the fuzzer writes
 * cannot reach other databases, roles or the server's files.
 */
export const target: ConformanceTarget = {
  name: 'postgres',
  bin: BIN,
  async prepare() {
    const db = await createTestDatabase();
    const writer = `${db.role}_rw`;
    const password = `pw-${randomBytes(8).toString('hex')}`;
    await withClient(ADMIN_URL, async (c) => {
      await c.query(`CREATE ROLE ${writer} LOGIN PASSWORD '${password}'`);
      await c.query(`GRANT CONNECT, TEMP ON DATABASE ${db.name} TO ${writer}`);
    });
    await withClient(db.adminUrl, async (c) => {
      await c.query('CREATE TABLE bulk (n int, pad text)');
      // explain_query's hypothetical_indexes and recommend_indexes get fuzzed too, not only their missing-extension error.
      await c.query('CREATE EXTENSION hypopg');
      for (const schema of ['public', '"Sales Data"']) {
        await c.query(`GRANT USAGE, CREATE ON SCHEMA ${schema} TO ${writer}`);
        await c.query(`GRANT ALL ON ALL TABLES IN SCHEMA ${schema} TO ${writer}`);
        await c.query(`GRANT ALL ON ALL SEQUENCES IN SCHEMA ${schema} TO ${writer}`);
      }
    });
    const url = urlFor(db.name, writer, password);
    const server = new URL(url);
    const base = `postgres://${server.hostname}:${server.port || 5432}/${encodeURIComponent(db.name)}`;
    const backends = async (): Promise<number> =>
      withClient(ADMIN_URL, async (c) => Number((await c.query('SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1', [writer])).rows[0].n));
    return {
      args: ['--allow-write', url],
      env: { DATABASE_URL: undefined, PGPASSWORD: undefined },
      cheapCall: { name: 'query', arguments: { sql: 'SELECT 1 AS one' } },
      followed: {
        uri: `${base}/channel/eras_followed`,
        // Another session NOTIFYs, as an application beside the server would.
        change: (round) => withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', ['eras_followed', `round ${round}`])).then(() => undefined),
        refused: [`${base}/channel/${'x'.repeat(70)}`, `${base}/tables/public/bulk/schema`, 'nothing://at/all'],
      },
      allowedPaths: [],
      secrets: [password],
      samples: [
        'customers', 'orders', 'Sales Data', 'Q1/Results', 'big_orders', 'order_totals', 'many', 'victims', 'bulk', 'public', 'pg_catalog',
        'SELECT * FROM customers', 'SELECT * FROM many', 'SELECT $1::text AS x', 'SELECT $1::int + $2::int', 'SELECT * FROM orders WHERE customer_id = $1',
        'INSERT INTO victims VALUES ($1, $2)', "UPDATE orders SET note = 'x' WHERE id = $1", 'DELETE FROM bulk', 'CALL drop_victims()', 'DROP TABLE victims',
        'CREATE TABLE fuzz_t (a int)', 'BEGIN', 'COMMIT', 'ROLLBACK', 'SET statement_timeout = 0', 'SET ROLE postgres', 'RESET ALL', 'LISTEN fuzz', 'NOTIFY fuzz',
        'COPY customers TO STDOUT', "COPY customers TO '/tmp/suite-fuzz-copy'", "SELECT pg_read_file('/etc/passwd')", "SELECT repeat('x', 5000000)",
        'SELECT pg_sleep(0.05)', 'SELECT 1; SELECT 2', 'EXPLAIN ANALYZE DELETE FROM victims', 'WITH d AS (DELETE FROM victims RETURNING *) SELECT * FROM d',
      ],
      namedSamples: {
        table: ['customers', 'orders', 'Q1/Results', 'big_orders', 'order_totals', 'many', 'victims'],
        schema: ['public', 'Sales Data', 'pg_catalog', 'information_schema'],
        sql: ['SELECT * FROM customers WHERE id = $1', 'SELECT $1::text', 'SELECT * FROM many', 'INSERT INTO victims VALUES ($1, $2)', 'UPDATE orders SET note = $1', 'SELECT * FROM orders WHERE total > $1'],
        params: [[1], ['x'], [1, 'label'], [], [null]],
      },
      inFlight: {
        // Statements of their own: whatever the signal interrupts, the table holds whole inserts only.
        calls: Array.from({ length: 6 }, () => ({ name: 'execute', arguments: { sql: `INSERT INTO bulk SELECT g, md5(g::text) FROM generate_series(1, ${ROWS_PER_INSERT}) g` } })),
        directories: [],
        async check(answered) {
          // No session of the server is left behind (a statement it started may still finish first).
          await waitUntil(async () => (await backends()) === 0, { what: 'the server’s connections to close', timeoutMs: 30_000 });
          const n = await withClient(db.adminUrl, async (c) => Number((await c.query('SELECT count(*) AS n FROM bulk')).rows[0].n));
          expect(n % ROWS_PER_INSERT).toBe(0);
          expect(n).toBeGreaterThanOrEqual(answered.filter((a) => a?.result && a.result.isError !== true).length * ROWS_PER_INSERT);
        },
      },
      fuzz: { numRuns: 300 },
      async cleanup() {
        await db.drop();
        await withClient(ADMIN_URL, (c) => c.query(`DROP ROLE IF EXISTS ${writer}`));
      },
    };
  },
};
