/**
 * Faults that happen to real users, through a TCP proxy between the server and PostgreSQL: every
 * connection cut at once (a restart, a failover), connections refused for a while (the database
 * coming back), a network that stops answering. The server answers every call (a clear isError
 * while the database is away), never crashes or hangs, and works again on the first call after.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, protocolError, spawnServer, waitUntil, type SpawnedSession, type TestSession } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import type { PostgresConfig } from '../src/config.js';
import { BIN, createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  await withClient(db.adminUrl, async (c) => {
    await c.query('CREATE TABLE ledger (id int PRIMARY KEY, note text)');
    await c.query(`GRANT INSERT, SELECT ON ledger TO ${db.role}`);
  });
}, 60_000);

afterAll(async () => {
  await db?.drop();
});

/** Waits until the server's backend runs `fragment` (so a cut lands mid-statement). */
async function waitForActive(fragment: string): Promise<void> {
  await waitUntil(
    () =>
      withClient(db.adminUrl, async (c) => {
        const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state = 'active' AND query LIKE $2", [db.name, `%${fragment}%`]);
        return rows[0].n > 0;
      }),
    { what: `a backend running ${fragment}`, timeoutMs: 15_000, intervalMs: 50 },
  );
}

async function count(session: TestSession): Promise<number> {
  const result = await session.callTool('query', { sql: 'SELECT count(*)::int AS n FROM many' });
  expect(result.isError, result.text).toBe(false);
  return (result.structured?.rows as number[][])[0]![0]!;
}

describe('in process, through a proxy', () => {
  let proxy: TcpProxy;
  let session: TestSession;
  let config: PostgresConfig;
  let closeConfig: () => Promise<void>;

  const start = async (options: Parameters<typeof makeConfig>[1] = {}): Promise<void> => {
    proxy = await startTcpProxy();
    const made = makeConfig(proxy.through(db.roleUrl), options);
    config = made.config;
    closeConfig = made.close;
    session = await connectInProcess(buildServer(config, { changes: made.changes }));
  };

  afterEach(async () => {
    await session?.close();
    await closeConfig?.();
    await proxy?.close();
    // A backend whose client was cut sleeps on until its statement ends: left alone, the next test's
    // wait for "a backend running pg_sleep" would find it instead of its own.
    await withClient(db.adminUrl, (c) => c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]));
  });

  it('after every connection is cut between calls, the next call reconnects and succeeds', async () => {
    await start();
    // Several pooled connections, all idle when the cut comes.
    await Promise.all([count(session), count(session), count(session)]);
    const before = proxy.accepted;
    proxy.cut();
    expect(await count(session)).toBe(5000);
    expect(await count(session)).toBe(5000);
    expect(proxy.accepted).toBeGreaterThan(before);
  });

  it('idle pooled connections that died silently (a forgotten flow) are replaced without the caller noticing', async () => {
    await start();
    await Promise.all([count(session), count(session), count(session)]);
    await waitUntil(() => config.database.pool.idleCount === 3, { what: 'three idle connections' });
    const before = proxy.accepted;
    proxy.forget();
    // Each call finds a dead connection at its BEGIN (a reset), before its own statement went out: repeated on another.
    expect(await count(session)).toBe(5000);
    expect(await count(session)).toBe(5000);
    expect(proxy.accepted).toBeGreaterThan(before);
  });

  it('a query in flight when the connection is cut gets a clear, retryable isError at once; the next call succeeds', async () => {
    await start();
    const started = Date.now();
    const pending = session.callTool('query', { sql: 'SELECT pg_sleep(20) AS slept' });
    await waitForActive('pg_sleep(20)');
    proxy.cut();
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/connection to the database was lost/i);
    expect(result.text).toMatch(/read-only: nothing was changed/i);
    expect(result.text).toMatch(/retry/i);
    expect(result.text).not.toContain(db.rolePassword);
    expect(result.text).not.toMatch(/failed unexpectedly|\n\s+at /);
    expect(await count(session)).toBe(5000);
  });

  it('a backend PostgreSQL terminates mid-query (a restart, pg_terminate_backend) is reported like a lost connection', async () => {
    await start();
    // A name of its own: the backend of the test before (its client cut, not it) may still be sleeping.
    const pending = session.callTool('query', { sql: 'SELECT pg_sleep(20) AS terminated_mid_query' });
    await waitForActive('terminated_mid_query');
    await withClient(db.adminUrl, (c) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE '%terminated_mid_query%' AND pid <> pg_backend_pid()", [db.name]));
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/connection to the database was lost during the call \(terminating connection due to administrator command\)/i);
    expect(result.text).toMatch(/nothing was changed.*retry/is);
    expect(await count(session)).toBe(5000);
  });

  it('a write in flight when the connection is cut says its outcome must be checked before retrying', async () => {
    await start({ allowWrite: true });
    const pending = session.callTool('execute', { sql: "INSERT INTO ledger SELECT 1, 'first' FROM pg_sleep(20)" });
    await waitForActive('pg_sleep(20)');
    proxy.cut();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/connection to the database was lost/i);
    expect(result.text).toMatch(/check .*before running it again/i);
    // The server goes on: the same write, once the connection is back, goes through.
    await withClient(db.adminUrl, (c) => c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query LIKE '%pg_sleep(20)%' AND pid <> pg_backend_pid()", [db.name]));
    const again = await session.callTool('execute', { sql: "INSERT INTO ledger VALUES (2, 'second') RETURNING id" });
    expect(again.isError, again.text).toBe(false);
  });

  it('while connections are refused, calls fail fast with a retryable isError; the first call after the outage succeeds', async () => {
    await start();
    expect(await count(session)).toBe(5000);
    await proxy.refuse();
    proxy.cut();
    for (let i = 0; i < 3; i++) {
      const started = Date.now();
      const result = await session.callTool('query', { sql: 'SELECT 1' });
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(/database is unreachable/i);
      expect(result.text).toMatch(/retry/i);
      expect(Date.now() - started).toBeLessThan(5_000);
    }
    await proxy.accept();
    expect(await count(session)).toBe(5000);
  });

  it('a network that stops answering ends a call in flight with a timeout isError, not a hang; calls work once it answers again', async () => {
    await start({ limits: { statementTimeoutMs: 1_000 } });
    expect(await count(session)).toBe(5000);
    // The next call gets this connection (back in the pool once its ROLLBACK was confirmed).
    await waitUntil(() => config.database.pool.idleCount === 1, { what: 'the connection back in the pool' });
    proxy.blackhole();
    const started = Date.now();
    const result = await session.callTool('query', { sql: 'SELECT 1 AS one' }, { timeout: 60_000 });
    const elapsed = Date.now() - started;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/did not answer within 6 s/i);
    expect(result.text).toMatch(/nothing was changed/i);
    // The server's own deadline (statement timeout + 5 s), far below the client's.
    expect(elapsed).toBeLessThan(20_000);
    proxy.resume();
    proxy.cut();
    expect(await count(session)).toBe(5000);
  }, 60_000);

  it('a LISTEN subscription survives a cut and an outage: LISTEN again with backoff, the subscriber told of the gap', async () => {
    await start({ listenRetry: { firstMs: 100, maxMs: 800 } });
    const channel = 'faults_channel';
    const uri = `postgres://127.0.0.1:${proxy.port}/${db.name}/channel/${channel}`;
    await session.client.subscribeResource({ uri });
    const first = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 10_000);
    await withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, 'before']));
    await first;

    // PostgreSQL goes away: every connection cut, new ones closed as soon as they arrive.
    proxy.slam();
    proxy.cut();
    // A subscription asked for during the outage is refused with the "unavailable" code, not an internal error.
    const refused = await protocolError(session.client.subscribeResource({ uri: `postgres://127.0.0.1:${proxy.port}/${db.name}/channel/other` }));
    expect(refused.code).toBe(-32030);
    expect(refused.message).toMatch(/database is unreachable.*retry/is);
    // Sent while nobody listens: lost, and the resource must say a gap happened.
    await withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, 'during']));
    const outageStart = Date.now();
    await new Promise((r) => setTimeout(r, 4_000));
    const outageMs = Date.now() - outageStart;
    expect(JSON.parse((await session.readResource(uri)).text)).toMatchObject({ listening: false });
    // Backoff: delays 100, 200, 400, 800, 800 ms...: a handful of attempts, not one every 100 ms.
    const attempts = proxy.slammed.filter((t) => t >= outageStart);
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.length).toBeLessThanOrEqual(Math.ceil(outageMs / 400) + 2);
    const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
    expect(Math.max(...gaps)).toBeGreaterThanOrEqual(700);

    const mark = session.mark();
    await proxy.accept();
    // Once LISTENing again, the subscriber gets an update (it may have missed notifications) ...
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { timeoutMs: 15_000, after: mark });
    const read = JSON.parse((await session.readResource(uri)).text) as { listening: boolean; notifications: { payload: string }[]; interruptions: { lostAt: string; resumedAt: string }[] };
    expect(read.listening).toBe(true);
    expect(read.notifications.map((n) => n.payload)).toEqual(['before']);
    expect(read.interruptions).toHaveLength(1);
    expect(Date.parse(read.interruptions[0]!.resumedAt) - Date.parse(read.interruptions[0]!.lostAt)).toBeGreaterThanOrEqual(3_500);

    // ... and later NOTIFYs arrive again.
    const after = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 10_000);
    await withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, 'after']));
    await after;
    const reread = JSON.parse((await session.readResource(uri)).text) as { notifications: { payload: string }[] };
    expect(reread.notifications.map((n) => n.payload)).toEqual(['before', 'after']);
    await session.client.unsubscribeResource({ uri });
  }, 60_000);
});

describe('the built bin over stdio, through a proxy', () => {
  let proxy: TcpProxy;
  let session: SpawnedSession;

  beforeAll(async () => {
    proxy = await startTcpProxy();
    session = await spawnServer(BIN, [proxy.through(db.roleUrl)], { env: { SUITE_LOG_LEVEL: 'info' } });
  }, 30_000);

  afterAll(async () => {
    await session?.close();
    await proxy?.close();
  });

  it('survives a cut between calls, a cut mid-statement and an outage, and answers again after each; LISTEN comes back', async () => {
    const channel = 'bin_channel';
    const uri = `postgres://127.0.0.1:${proxy.port}/${db.name}/channel/${channel}`;
    await session.client.subscribeResource({ uri });
    expect(await count(session)).toBe(5000);
    proxy.cut();
    expect(await count(session)).toBe(5000);

    const pending = session.callTool('query', { sql: 'SELECT pg_sleep(20) AS slept' });
    await waitForActive('pg_sleep(20)');
    proxy.cut();
    const lost = await pending;
    expect(lost.isError).toBe(true);
    expect(lost.text).toMatch(/connection to the database was lost/i);
    expect(await count(session)).toBe(5000);

    await proxy.refuse();
    proxy.cut();
    const refused = await session.callTool('query', { sql: 'SELECT 1' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/database is unreachable.*retry/is);
    await proxy.accept();
    expect(await count(session)).toBe(5000);

    // The LISTEN connection was cut three times; it comes back by itself (backoff from 250 ms) and tells of the gap.
    const mark = session.mark();
    const updated = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { timeoutMs: 30_000, after: mark });
    let delivered = false;
    void updated.then(() => (delivered = true), () => undefined);
    for (let attempt = 0; attempt < 100 && !delivered; attempt++) {
      await withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, `attempt ${attempt}`]));
      await new Promise((r) => setTimeout(r, 250));
    }
    await updated;
    const read = JSON.parse((await session.readResource(uri)).text) as { listening: boolean; interruptions: unknown[] };
    expect(read.listening).toBe(true);
    expect(read.interruptions.length).toBeGreaterThanOrEqual(1);
    expect(session.stderr()).toMatch(/LISTEN connection lost/);
    expect(session.stderr()).not.toMatch(/Uncaught|unhandled|failed unexpectedly|\n\s+at /i);
  }, 60_000);
});
