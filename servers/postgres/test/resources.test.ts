import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, protocolError, type TestSession } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import type { PostgresConfig } from '../src/config.js';
import { createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

let db: TestDatabase;
let session: TestSession;
let config: PostgresConfig;
let closeConfig: () => Promise<void>;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  const made = makeConfig(db.roleUrl);
  config = made.config;
  closeConfig = made.close;
  session = await connectInProcess(buildServer(made.config, { changes: made.changes }));
  const url = new URL(db.roleUrl);
  base = `postgres://${url.hostname}:${url.port || 5432}/${db.name}`;
}, 60_000);

afterAll(async () => {
  await session?.close();
  await closeConfig?.();
  await db?.drop();
});

describe('table schema resources', () => {
  it('lists every table and view with percent-encoded URIs and no user name', async () => {
    const { resources } = await session.client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toContain(`${base}/tables/public/customers/schema`);
    expect(uris).toContain(`${base}/tables/public/big_orders/schema`);
    expect(uris).toContain(`${base}/tables/Sales%20Data/Q1%2FResults/schema`);
    for (const uri of uris) {
      expect(uri).not.toContain(db.role);
      expect(uri).not.toContain(db.rolePassword);
    }
    const { resourceTemplates } = await session.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([`${base}/tables/{schema}/{table}/schema`, `${base}/channel/{name}`]);
  });

  it('reads a table schema as JSON, including odd names', async () => {
    const read = await session.readResource(`${base}/tables/Sales%20Data/Q1%2FResults/schema`);
    expect(read.contents).toHaveLength(1);
    expect(read.contents[0]!.mimeType).toBe('application/json');
    const body = JSON.parse(read.text);
    expect(body).toMatchObject({ schema: 'Sales Data', name: 'Q1/Results' });
    expect(body.columns.map((c: { name: string }) => c.name)).toEqual(['region', 'amount']);
  });

  it('answers a missing table with resource-not-found', async () => {
    expect(await protocolError(session.readResource(`${base}/tables/public/nope/schema`))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/^No table/),
      data: { kind: 'not_found' },
    });
  });

  it('completes schema names and table names within a schema', async () => {
    const ref = { template: `${base}/tables/{schema}/{table}/schema` };
    expect((await session.complete(ref, 'schema', 'Sa')).values).toEqual(['Sales Data']);
    expect((await session.complete(ref, 'table', 'ord', { schema: 'public' })).values.sort()).toEqual(['order_totals', 'orders']);
  });
});

describe('LISTEN channel resources', () => {
  it('a NOTIFY from another connection delivers notifications/resources/updated; unsubscribing UNLISTENs', async () => {
    const channel = 'Orders "Q1"; DROP TABLE victims';
    const uri = `${base}/channel/${encodeURIComponent(channel)}`;
    await session.client.subscribeResource({ uri });
    expect(config.listener.isListening(channel)).toBe(true);
    const updated = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 10_000);
    await withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, 'order 42 paid']));
    await updated;
    const body = JSON.parse((await session.readResource(uri)).text);
    expect(body).toMatchObject({ channel, listening: true, notifications: [expect.objectContaining({ payload: 'order 42 paid' })] });

    // The listener's session really LISTENs on exactly that (quoted) channel, and stops on unsubscribe.
    const listening = async (): Promise<number> =>
      withClient(db.adminUrl, async (c) => {
        const { rows } = await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = 'mcp-server-postgres' AND datname = $1 AND query = $2", [
          db.name,
          `LISTEN "Orders ""Q1""; DROP TABLE victims"`,
        ]);
        return rows[0].n;
      });
    expect(await listening()).toBe(1);
    await session.client.unsubscribeResource({ uri });
    expect(config.listener.isListening(channel)).toBe(false);
    const victims = await withClient(db.adminUrl, async (c) => (await c.query('SELECT count(*)::int AS n FROM victims')).rows[0].n);
    expect(victims).toBe(1);
  });

  it('re-LISTENs after the listening connection is killed', async () => {
    const channel = 'survivor';
    const uri = `${base}/channel/${channel}`;
    await session.client.subscribeResource({ uri });
    try {
      const killed = await withClient(db.adminUrl, async (c) => {
        const { rows } = await c.query(
          "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = 'mcp-server-postgres' AND datname = $1 AND query LIKE 'LISTEN%'",
          [db.name],
        );
        return rows.length;
      });
      expect(killed).toBe(1);
      const updated = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 15_000);
      let delivered = false;
      void updated.then(() => (delivered = true), () => undefined);
      // Keep notifying until the listener is back (it reconnects after about a second).
      for (let attempt = 0; attempt < 60 && !delivered; attempt++) {
        await withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, `attempt ${attempt}`]));
        await new Promise((r) => setTimeout(r, 250));
      }
      await updated;
    } finally {
      await session.client.unsubscribeResource({ uri });
    }
  });

  it('refuses channel names PostgreSQL would silently truncate', async () => {
    const uri = `${base}/channel/${'x'.repeat(64)}`;
    expect(await protocolError(session.client.subscribeResource({ uri }))).toMatchObject({
      code: -32602,
      message: expect.stringMatching(/1 to 63 bytes/),
      data: { kind: 'invalid_argument' },
    });
  });
});
