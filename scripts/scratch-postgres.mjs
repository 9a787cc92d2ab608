// A throwaway database on the real PostgreSQL for the scripts that run the postgres server against it
// (benchmarks, the packed smoke test, the bundle check), with a least-privilege role: the server's
// read-only mode refuses a superuser. TEST_DATABASE_URL (or the local default) is the admin connection.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The pg driver the postgres server itself uses (the root package does not depend on it). */
export const pg = createRequire(path.join(root, 'servers', 'postgres', 'package.json'))('pg');
export const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** Runs SQL (one or more statements) on a connection of its own; resolves with the last result. */
export async function runSql(url, sql) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

function urlFor(database, user, password) {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  if (user) {
    url.username = user;
    url.password = password;
  }
  return url.toString();
}

/**
 * Creates `<prefix>_<hex>`, runs `setupSql` in it as the admin, and creates a role that can log in
 * with a password, connect to it and read everything (pg_read_all_data), and nothing else.
 * `drop()` removes both, also after a failed set-up.
 */
export async function createScratchDatabase({ prefix, setupSql }) {
  const suffix = randomBytes(4).toString('hex');
  const name = `${prefix}_${suffix}`;
  const role = `${prefix}_ro_${suffix}`;
  const password = randomBytes(12).toString('hex');
  const drop = async () => {
    await runSql(ADMIN_URL, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await runSql(ADMIN_URL, `DROP ROLE IF EXISTS ${role}`);
  };
  await runSql(ADMIN_URL, `CREATE DATABASE ${name}`);
  try {
    await runSql(ADMIN_URL, `CREATE ROLE ${role} LOGIN PASSWORD '${password}'; GRANT CONNECT ON DATABASE ${name} TO ${role}; GRANT pg_read_all_data TO ${role}`);
    if (setupSql) await runSql(urlFor(name), setupSql);
  } catch (error) {
    await drop();
    throw error;
  }
  return { name, role, adminUrl: urlFor(name), roleUrl: urlFor(name, role, password), drop };
}
