import { afterEach, describe, expect, it } from 'vitest';
import { connectModernStdio, erasSuite, untilListenUpdate } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';
import { BIN, createTestDatabase, withClient } from './helpers.js';

erasSuite(target, { follows: true });

describe('postgres in the 2026-07-28 era (the built bin over stdio)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it('a listen stream naming a LISTEN/NOTIFY channel hears every NOTIFY, and lets the channel go when the stream closes', async () => {
    const db = await createTestDatabase();
    closers.push(() => db.drop());
    const client = await connectModernStdio(BIN, [db.roleUrl]);
    closers.push(() => client.close());
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toContainEqual(expect.stringMatching(/\/channel\/\{name\}$/));
    const { resources } = await client.listResources();
    const base = /^(postgres:\/\/[^/]+\/[^/]+)\//.exec(resources[0]!.uri)![1];
    const channel = `eras_${Date.now()}`;
    const uri = `${base}/channel/${channel}`;
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    await untilListenUpdate(client, uri, (i) => withClient(db.adminUrl, (c) => c.query('SELECT pg_notify($1, $2)', [channel, `payload ${i}`])).then(() => undefined));
    const read = await client.readResource({ uri });
    expect((read.contents[0] as { text: string }).text).toMatch(/payload \d+/);
    await subscription.close();
    // The server's LISTEN connection lets the channel go with the last follower.
    await expect
      .poll(async () => withClient(db.adminUrl, async (c) => (await c.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'", [db.name])).rows[0].n as number), { timeout: 10_000 })
      .toBe(0);
  });
});
