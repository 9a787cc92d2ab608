import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer } from '@suite/test-kit';
import { DEFAULT_LIMITS } from '../src/config.js';
import { Database } from '../src/database.js';
import { inspectRole, privilegeProblem } from '../src/privileges.js';
import { ADMIN_URL, BIN, createTestDatabase, urlFor, withClient, type TestDatabase } from './helpers.js';

let db: TestDatabase;
/** A role that may read server files: read-only mode must refuse it. */
let fileRole: string;

beforeAll(async () => {
  db = await createTestDatabase();
  fileRole = `${db.role}_files`;
  await withClient(db.adminUrl, async (c) => {
    await c.query(`CREATE ROLE ${fileRole} LOGIN PASSWORD '${db.rolePassword}' IN ROLE pg_read_server_files`);
    await c.query(`GRANT CONNECT ON DATABASE ${db.name} TO ${fileRole}`);
  });
}, 60_000);

afterAll(async () => {
  await withClient(ADMIN_URL, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`);
    await c.query(`DROP ROLE IF EXISTS ${fileRole}`);
    await c.query(`DROP ROLE IF EXISTS ${fileRole}_via_admin`);
    await c.query(`DROP ROLE IF EXISTS ${fileRole}_admin`);
  }).catch(() => undefined);
  await db?.drop();
});

/** Runs the bin to completion (for start-up failures) and returns its exit code and stderr. */
function runBin(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env, SUITE_LOG_LEVEL: 'info' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
    // A server that did start waits on stdin; closing it ends the process.
    setTimeout(() => child.stdin.end(), 3000);
  });
}

/** A superuser URL carrying a password (trust auth ignores it), to prove it is never printed. */
function superuserUrlWithPassword(): { url: string; password: string } {
  const url = new URL(db.adminUrl);
  if (!url.password) url.password = 'sup3r-s3cret-pw';
  return { url: url.toString(), password: decodeURIComponent(url.password) };
}

describe('start-up without a database', () => {
  it('asks for a URL when neither an argument nor the environment names a database', async () => {
    const none = { DATABASE_URL: '', PGHOST: '', PGHOSTADDR: '', PGPORT: '', PGDATABASE: '', PGUSER: '', PGSERVICE: '' };
    const result = await runBin([], none);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'mcp-server-postgres: Missing DATABASE_URL: give a postgresql:// URL, e.g. postgresql://mcp_readonly@localhost:5432/shop (or set DATABASE_URL, or PGHOST, PGDATABASE and PGUSER, or give --database NAME=URL).\n' +
        "Run 'mcp-server-postgres --help' for usage.\n",
    );
  });

  it('names the server it cannot reach in one line', async () => {
    const result = await runBin(['postgresql://nobody@127.0.0.1:1/nothing']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^mcp-server-postgres: cannot connect to 127\.0\.0\.1:1\/nothing: .*ECONNREFUSED.*\n$/);
  });
});

describe('start-up privilege check', () => {
  it('refuses read-only mode as a superuser, with the SQL for a least-privilege role, and never prints the password', async () => {
    const { url, password } = superuserUrlWithPassword();
    const result = await runBin([url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Refusing to start in read-only mode: role "\w+" is a superuser/);
    expect(result.stderr).toContain('CREATE ROLE "mcp_readonly" LOGIN PASSWORD');
    expect(result.stderr).toContain(`GRANT CONNECT ON DATABASE "${db.name}" TO "mcp_readonly";`);
    expect(result.stderr).toContain('GRANT pg_read_all_data TO "mcp_readonly";');
    expect(result.stderr).toContain('--unsafe-allow-privileged-role');
    expect(result.stderr).toContain(`postgresql://mcp_readonly@<host>/${db.name} with the password in PGPASSWORD`);
    expect(result.stderr).not.toContain(password);
  });

  it('refuses a member of pg_read_server_files', async () => {
    const result = await runBin([urlFor(db.name, fileRole, db.rolePassword)]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/is a member of pg_read_server_files/);
  });

  it('counts membership in a superuser role (SET ROLE would reach it) as privileged; the plain role is fine', async () => {
    const admin = `${fileRole}_admin`;
    const user = `${fileRole}_via_admin`;
    await withClient(db.adminUrl, async (c) => {
      await c.query(`CREATE ROLE ${admin} SUPERUSER NOLOGIN`);
      await c.query(`CREATE ROLE ${user} LOGIN PASSWORD '${db.rolePassword}' IN ROLE ${admin}`);
      await c.query(`GRANT CONNECT ON DATABASE ${db.name} TO ${user}`);
    });
    const check = async (url: string): Promise<string | undefined> => {
      const database = new Database({ connectionString: url, readOnlySessions: true, limits: DEFAULT_LIMITS });
      try {
        return privilegeProblem(await inspectRole(database));
      } finally {
        await database.close();
      }
    };
    expect(await check(urlFor(db.name, user, db.rolePassword))).toMatch(new RegExp(`member of the superuser role\\(s\\) "${admin}"`));
    expect(await check(db.roleUrl)).toBeUndefined();
  });

  it('starts anyway with --unsafe-allow-privileged-role, loudly', async () => {
    const session = await spawnServer(BIN, ['--unsafe-allow-privileged-role', urlFor(db.name, fileRole, db.rolePassword)], { env: { SUITE_LOG_LEVEL: 'warning' } });
    try {
      const r = await session.callTool('query', { sql: 'SELECT count(*) AS n FROM pg_catalog.pg_class WHERE false' });
      expect(r.isError).toBe(false);
      expect(session.stderr()).toMatch(/UNSAFE: running read-only as a privileged role/);
      const drop = await session.callTool('query', { sql: 'COMMIT; DROP TABLE victims' });
      expect(drop.isError).toBe(true);
    } finally {
      await session.close();
    }
  });

  it('write mode does not refuse a superuser', async () => {
    const session = await spawnServer(BIN, ['--allow-write', db.adminUrl], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    try {
      expect((await session.client.listTools()).tools.map((t) => t.name)).toContain('execute');
    } finally {
      await session.close();
    }
  });

  it('reports an unreachable server without the password', async () => {
    const result = await runBin(['postgresql://someone:hunter2-secret@127.0.0.1:1/nowhere']);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/cannot connect to 127\.0\.0\.1:1\/nowhere/);
    expect(result.stderr).not.toContain('hunter2-secret');
  });

  it('rejects a URL that is not postgres:// with a usage error', async () => {
    const result = await runBin(['mysql://root:pw-in-url@localhost/db']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/must start with postgresql:\/\//);
    expect(result.stderr).not.toContain('pw-in-url');
  });
});

describe('over stdio as a least-privilege role', () => {
  it('serves tools and resources, and keeps read-only', async () => {
    const session = await spawnServer(BIN, ['--max-rows', '5', db.roleUrl], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    try {
      const tools = (await session.client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('query');
      expect(tools).not.toContain('execute');
      const r = await session.callTool('query', { sql: 'SELECT n FROM many WHERE n > $1 ORDER BY n', params: [10] });
      expect(r.structured).toMatchObject({ rowCount: 5, truncated: true, rows: [[11], [12], [13], [14], [15]] });
      const drop = await session.callTool('query', { sql: 'COMMIT; DROP TABLE victims' });
      expect(drop.isError).toBe(true);
      const { resources } = await session.client.listResources();
      expect(resources.some((res) => res.uri.endsWith('/tables/public/victims/schema'))).toBe(true);
      expect(session.stderr()).not.toContain(db.rolePassword);
    } finally {
      await session.close();
    }
  });

  it('notifications/cancelled over stdio stops the query on the server', async () => {
    const session = await spawnServer(BIN, [db.roleUrl], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    const marker = `stdio_cancel_${Date.now()}`;
    const active = (): Promise<number> =>
      withClient(db.adminUrl, async (c) => {
        const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%' || $1 || '%' AND pid <> pg_backend_pid()", [marker]);
        return rows[0].n as number;
      });
    const waitFor = async (want: number): Promise<void> => {
      for (let i = 0; i < 300 && (await active()) !== want; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await active()).toBe(want);
    };
    try {
      const controller = new AbortController();
      const call = session.callTool('query', { sql: `SELECT pg_sleep(60), '${marker}'` }, { signal: controller.signal }).catch((error: Error) => error);
      await waitFor(1);
      controller.abort();
      expect(await call).toBeInstanceOf(Error);
      await waitFor(0);
    } finally {
      await session.close();
    }
  });

  it('takes the connection from DATABASE_URL or PG* variables', async () => {
    const viaUrl = await spawnServer(BIN, [], { env: { DATABASE_URL: db.roleUrl, SUITE_LOG_LEVEL: 'emergency' } });
    try {
      const r = await viaUrl.callTool('query', { sql: 'SELECT current_user AS u' });
      expect(r.structured!.rows).toEqual([[db.role]]);
    } finally {
      await viaUrl.close();
    }
    const url = new URL(db.roleUrl);
    const viaPg = await spawnServer(BIN, [], {
      env: { DATABASE_URL: '', PGHOST: url.hostname, PGPORT: url.port || '5432', PGDATABASE: db.name, PGUSER: db.role, PGPASSWORD: db.rolePassword, SUITE_LOG_LEVEL: 'emergency' },
    });
    try {
      const r = await viaPg.callTool('query', { sql: 'SELECT current_database() AS d' });
      expect(r.structured!.rows).toEqual([[db.name]]);
    } finally {
      await viaPg.close();
    }
  });
});
