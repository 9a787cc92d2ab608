import { afterEach, describe, expect, it } from 'vitest';
import { connectInProcess, waitUntil } from '@suite/test-kit';
import { bridgeToApp, startAppServer, type AppHost } from '@suite/test-kit/apps';
import { HostConnection } from '@suite/shared/app-kit/rpc';
import { GridController, cellView } from '@suite/shared/app-kit/grid-model';
import { buildServer } from '../src/server.js';
import { HOSTILE, gridDatabase } from './grid-fixture.js';

const SQL = 'SELECT id, total, big, paid, tags, meta, photo, at, note FROM orders ORDER BY id';

describe('the result grid app against the ext-apps AppBridge and the real server (PostgreSQL)', () => {
  let fx: Awaited<ReturnType<typeof gridDatabase>> | undefined;
  let host: AppHost | undefined;
  afterEach(async () => {
    await host?.close();
    await fx?.close();
    host = fx = undefined;
  });

  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: shows query's rows with their types, then pages through the rest with grid_read_page`, async () => {
      fx = await gridDatabase(1200);
      const config = fx.config;
      host = await startAppServer(() => buildServer(config), era);
      const { bridge, port } = await bridgeToApp(host.client);
      const app = new HostConnection(port);
      const grid = new GridController(app, { pageTool: 'grid_read_page', pageArgs: (a, offset, limit) => ({ sql: a.sql, offset, limit }) });
      await app.initialize({ name: 'grid-test', version: '1' });
      const args = { sql: SQL };
      const result = await host.client.callTool({ name: 'query', arguments: args });
      await bridge.sendToolInput({ arguments: args });
      await bridge.sendToolResult(result as never);
      await waitUntil(() => grid.state.rows.length > 0 || grid.state.error !== undefined, { what: 'the rows' });
      const first = result.structuredContent as { columns: { name: string; type: string }[]; rows: unknown[][] };
      expect(grid.state.columns).toEqual(first.columns);
      expect(grid.state.columns.map((c) => c.type)).toEqual(['integer', 'numeric', 'bigint', 'boolean', 'text[]', 'jsonb', 'bytea', 'timestamp with time zone', 'text']);
      expect(grid.state.rows).toEqual(first.rows);
      expect(grid.state.more).toBe(true);
      while (grid.state.more) await grid.loadMore();
      expect(grid.state.error).toBeUndefined();
      expect(grid.state.rows).toHaveLength(1200 + HOSTILE.length);
      expect(grid.state.rows.map((r) => r[0])).toEqual(Array.from({ length: 1200 + HOSTILE.length }, (_, i) => i + 1));
      const last = (await host.client.callTool({ name: 'query', arguments: { sql: `${SQL} OFFSET 1000` } })).structuredContent as { rows: unknown[][] };
      expect(grid.state.rows.slice(1000)).toEqual(last.rows);
    });
  }

  it('grid_read_page keeps query\'s rules: read-only, one statement, the row cap', async () => {
    fx = await gridDatabase(20);
    const config = fx.config;
    host = await startAppServer(() => buildServer(config));
    const write = await host.client.callTool({ name: 'grid_read_page', arguments: { sql: 'DELETE FROM orders RETURNING id', offset: 0, limit: 5 } });
    expect(write.isError).toBe(true);
    const injected = await host.client.callTool({ name: 'grid_read_page', arguments: { sql: 'SELECT 1) AS x; DELETE FROM orders; SELECT * FROM (SELECT 1', offset: 0, limit: 5 } });
    expect(injected.isError).toBe(true);
    expect((await host.client.callTool({ name: 'query', arguments: { sql: 'SELECT count(*)::int AS n FROM orders' } })).structuredContent).toMatchObject({ rows: [[23]] });
    expect((await host.client.callTool({ name: 'grid_read_page', arguments: { sql: SQL, offset: 0, limit: 1001 } })).isError).toBe(true);
    const page = await host.client.callTool({ name: 'grid_read_page', arguments: { sql: 'SELECT id FROM orders ORDER BY id -- a comment', params: [], offset: 20, limit: 2 } });
    expect(page.structuredContent).toMatchObject({ rows: [[21], [22]], offset: 20, truncated: true });
  });

  it('cells: bytea by size, JSON and arrays as JSON, booleans, bigint digits; a text-only client sees no page tool', async () => {
    expect(cellView('3q2+7w==', 'bytea')).toEqual({ kind: 'blob', text: 'BLOB 4 bytes' });
    expect(cellView({ items: 1 }, 'jsonb')).toEqual({ kind: 'json', text: '{"items":1}' });
    expect(cellView(['a', 'b'], 'text[]')).toEqual({ kind: 'json', text: '["a","b"]' });
    expect(cellView(true, 'bool')).toEqual({ kind: 'bool', text: 'true' });
    expect(cellView('12.50', 'numeric')).toEqual({ kind: 'number', text: '12.50' });
    fx = await gridDatabase(3);
    const plain = await connectInProcess(buildServer(fx.config));
    try {
      const tools = (await plain.client.listTools()).tools;
      expect(tools.map((t) => t.name)).not.toContain('grid_read_page');
      expect(tools.find((t) => t.name === 'query')?._meta).toMatchObject({ ui: { resourceUri: 'ui://postgres/grid.html' } });
    } finally {
      await plain.close();
    }
  });
});
