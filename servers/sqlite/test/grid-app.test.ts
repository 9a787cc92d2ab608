import { afterEach, describe, expect, it } from 'vitest';
import { connectInProcess, waitUntil } from '@suite/test-kit';
import { bridgeToApp, startAppServer, type AppHost } from '@suite/test-kit/apps';
import { HostConnection } from '@suite/shared/app-kit/rpc';
import { GridController, cellView } from '@suite/shared/app-kit/grid-model';
import { buildServer } from '../src/server.js';
import { HOSTILE, gridDatabase } from './grid-fixture.js';

const QUERY = 'SELECT id, customer_id, total, big, note, meta, photo FROM orders ORDER BY id';

describe('the result grid app against the ext-apps AppBridge and the real server', () => {
  let db: Awaited<ReturnType<typeof gridDatabase>> | undefined;
  let host: AppHost | undefined;
  afterEach(async () => {
    await host?.close();
    await db?.close();
    host = db = undefined;
  });

  async function open(era: 'legacy' | 'modern', args: Record<string, unknown>): Promise<{ grid: GridController; host: AppHost; result: { structuredContent?: unknown } }> {
    db = await gridDatabase(1200);
    const database = db.database;
    host = await startAppServer(() => buildServer({ database }), era);
    const { bridge, port } = await bridgeToApp(host.client);
    const app = new HostConnection(port);
    const grid = new GridController(app, {
      pageTool: 'grid_read_page',
      pageArgs: (a, offset, limit) => ({ query: a.query, offset, limit }),
    });
    expect((await app.initialize({ name: 'grid-test', version: '1' })).theme).toBe('dark');
    const result = await host.client.callTool({ name: 'read_query', arguments: args });
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result as never);
    await waitUntil(() => grid.state.rows.length > 0 || grid.state.error !== undefined, { what: 'the rows' });
    return { grid, host, result };
  }

  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: shows read_query's rows, then pages through the rest with grid_read_page up to the last row`, async () => {
      const { grid, host, result } = await open(era, { query: QUERY });
      const first = result.structuredContent as { rows: unknown[][]; truncated: boolean };
      expect(grid.state.rows).toEqual(first.rows);
      expect(first.rows).toHaveLength(500);
      expect(grid.state.more).toBe(true);
      while (grid.state.more) await grid.loadMore();
      expect(grid.state.error).toBeUndefined();
      const all = (await host.client.callTool({ name: 'read_query', arguments: { query: QUERY, maxRows: 10_000 } })).structuredContent as { rows: unknown[][] };
      expect(all.rows).toHaveLength(1200 + HOSTILE.length);
      expect(grid.state.rows).toEqual(all.rows);
    });
  }

  it('paging keeps the server\'s limits: a write is refused by the read-only query process, a bad page is an isError message', async () => {
    const { grid, host } = await open('modern', { query: QUERY });
    const refused = await host.client.callTool({ name: 'grid_read_page', arguments: { query: 'DELETE FROM orders', offset: 0, limit: 10 } });
    expect(refused.isError).toBe(true);
    expect((await host.client.callTool({ name: 'read_query', arguments: { query: 'SELECT count(*) AS n FROM orders' } })).structuredContent).toMatchObject({ rows: [[1204]] });
    const tooMany = await host.client.callTool({ name: 'grid_read_page', arguments: { query: QUERY, offset: 0, limit: 10_001 } });
    expect(tooMany.isError).toBe(true);
    expect(JSON.stringify(tooMany.content)).toMatch(/limit/);
    const comment = await host.client.callTool({ name: 'grid_read_page', arguments: { query: 'SELECT id FROM orders ORDER BY id -- the last ones', offset: 1200, limit: 2 } });
    expect(comment.structuredContent).toMatchObject({ rows: [[1201], [1202]], offset: 1200 });
    grid.sortBy(2);
    expect(grid.state.sort).toEqual({ column: 2, descending: false });
  });

  it('cells read as what they are: NULL, BLOB sizes, JSON, long text, big integers; hostile text stays text', () => {
    expect(cellView(null)).toEqual({ kind: 'null', text: 'NULL' });
    expect(cellView({ $blob: Buffer.alloc(17).toString('base64') })).toEqual({ kind: 'blob', text: 'BLOB 17 bytes' });
    expect(cellView('9007199254740993')).toEqual({ kind: 'number', text: '9007199254740993' });
    expect(cellView('{"a":1}').kind).toBe('json');
    expect(cellView('x'.repeat(300))).toMatchObject({ kind: 'long', full: 'x'.repeat(300) });
    expect(cellView('NULL')).toEqual({ kind: 'text', text: 'NULL' });
    for (const payload of HOSTILE.slice(0, 3)) expect(cellView(payload)).toMatchObject({ text: payload.length > 120 ? expect.any(String) : payload });
  });

  it('a text-only client sees neither the page tool nor the grid resource; read_query carries _meta.ui for everyone', async () => {
    db = await gridDatabase(3);
    const plain = await connectInProcess(buildServer({ database: db.database }));
    try {
      const tools = (await plain.client.listTools()).tools;
      expect(tools.map((t) => t.name)).not.toContain('grid_read_page');
      expect(tools.find((t) => t.name === 'read_query')?._meta).toMatchObject({ ui: { resourceUri: 'ui://sqlite/grid.html' } });
      expect((await plain.client.listResources()).resources.map((r) => r.uri)).not.toContain('ui://sqlite/grid.html');
    } finally {
      await plain.close();
    }
  });
});
