/**
 * Real databases for the tests: each test file gets its own database and least-privilege role
 * on the PostgreSQL at TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test),
 * dropped again afterwards.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ChangeHub, Logger } from '@suite/shared';
import { DEFAULT_LIMITS, type PostgresConfig, type PostgresLimits } from '../src/config.js';
import { Database } from '../src/database.js';
import { ChannelListener, type ListenRetry } from '../src/listener.js';
import { buildServer } from '../src/server.js';

export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';
export const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/index.js');

export function urlFor(database: string, user?: string, password?: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${encodeURIComponent(database)}`;
  if (user !== undefined) {
    url.username = encodeURIComponent(user);
    url.password = password ? encodeURIComponent(password) : '';
  }
  return url.toString();
}

export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export interface TestDatabase {
  name: string;
  /** Superuser URL to the test database (the admin's credentials). */
  adminUrl: string;
  /** A least-privilege role: LOGIN, CONNECT, pg_read_all_data. */
  role: string;
  rolePassword: string;
  roleUrl: string;
  drop(): Promise<void>;
}

/** Creates a database with a small fixture schema and a least-privilege role. */
export async function createTestDatabase(fixture = FIXTURE_SQL): Promise<TestDatabase> {
  const suffix = randomBytes(5).toString('hex');
  const name = `suite_pg_${suffix}`;
  const role = `suite_pg_ro_${suffix}`;
  const rolePassword = `pw-${randomBytes(8).toString('hex')}`;
  await withClient(ADMIN_URL, async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    await c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${rolePassword}'`);
    await c.query(`GRANT CONNECT ON DATABASE ${name} TO ${role}`);
    await c.query(`GRANT pg_read_all_data TO ${role}`);
  });
  const adminUrl = urlFor(name);
  await withClient(adminUrl, (c) => c.query(fixture));
  return {
    name,
    adminUrl,
    role,
    rolePassword,
    roleUrl: urlFor(name, role, rolePassword),
    async drop() {
      await withClient(ADMIN_URL, async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS ${role}`);
      });
    },
  };
}

export const FIXTURE_SQL = `
CREATE TABLE customers (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email text NOT NULL UNIQUE,
  name text,
  created_at timestamptz NOT NULL DEFAULT '2024-01-02 03:04:05.678+00'
);
COMMENT ON TABLE customers IS 'People who buy things';
COMMENT ON COLUMN customers.email IS 'Login address';
CREATE TABLE orders (
  id serial PRIMARY KEY,
  customer_id bigint NOT NULL REFERENCES customers(id),
  total numeric(12,2) NOT NULL CHECK (total >= 0),
  note text
);
CREATE INDEX orders_customer_idx ON orders (customer_id);
CREATE VIEW big_orders AS SELECT * FROM orders WHERE total > 100;
CREATE MATERIALIZED VIEW order_totals AS SELECT customer_id, sum(total) AS total FROM orders GROUP BY customer_id;
CREATE SCHEMA "Sales Data";
CREATE TABLE "Sales Data"."Q1/Results" (region text, amount int);
INSERT INTO customers (email, name) VALUES ('a@example.com', 'Ann'), ('b@example.com', 'Bob');
INSERT INTO orders (customer_id, total, note) VALUES (1, 10.50, 'first'), (1, 250.00, NULL), (2, 99.99, 'x|y');
CREATE TABLE many AS SELECT g AS n FROM generate_series(1, 5000) g;
CREATE TABLE victims (id int PRIMARY KEY, label text);
INSERT INTO victims VALUES (1, 'keep me');
CREATE PROCEDURE drop_victims() LANGUAGE plpgsql AS $$ BEGIN DROP TABLE victims; COMMIT; END $$;
ANALYZE;
`;

export interface TestServerHandle {
  config: PostgresConfig;
  server: ReturnType<typeof buildServer>;
  close(): Promise<void>;
}

/** A config (pool, hub, listener) for in-process servers; one per test file or per scenario. */
export function makeConfig(
  url: string,
  options: { allowWrite?: boolean; limits?: Partial<PostgresLimits>; poolSize?: number; listenRetry?: ListenRetry } = {},
): { config: PostgresConfig; changes: ChangeHub; close(): Promise<void> } {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const database = new Database({ connectionString: url, readOnlySessions: !options.allowWrite, limits, ...(options.poolSize ? { poolSize: options.poolSize } : {}) });
  const changes = new ChangeHub({ debounceMs: 20, maxWaitMs: 200 });
  const listener = new ChannelListener(database, new Logger('listen'), options.listenRetry);
  const config: PostgresConfig = { database, allowWrite: options.allowWrite === true, limits, listener };
  return {
    config,
    changes,
    async close() {
      await changes.close();
      await listener.close();
      await database.close();
    },
  };
}
