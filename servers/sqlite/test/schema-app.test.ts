import { afterEach, describe, expect, it } from 'vitest';
import { connectInProcess, waitUntil } from '@suite/test-kit';
import { bridgeToApp, callToolForApp, expectSchemaReadToEnd, startAppServer, type AppHost } from '@suite/test-kit/apps';
import { HostConnection } from '@suite/shared/app-kit/rpc';
import { SchemaController, foreignKeyLinks } from '@suite/shared/app-kit/schema-model';
import { buildServer } from '../src/server.js';
import { SCHEMA_TABLES, schemaDatabase } from './schema-fixture.js';

// The app's own page arguments (app/schema.ts): one table for describe_table, pages for list_tables.
const pageArgs = (args: Record<string, unknown>, offset: number): Record<string, unknown> =>
  typeof args.table_name === 'string' ? { table_name: args.table_name } : { offset };

describe('the schema view app against the ext-apps AppBridge and the real server', () => {
  let db: Awaited<ReturnType<typeof schemaDatabase>> | undefined;
  let host: AppHost | undefined;
  afterEach(async () => {
    await host?.close();
    await db?.close();
    host = db = undefined;
  });

  async function open(era: 'legacy' | 'modern', options: Parameters<typeof schemaDatabase>[0] = {}): Promise<{ schema: SchemaController; show(tool: string, args: Record<string, unknown>): Promise<unknown> }> {
    db = await schemaDatabase(options);
    const database = db.database;
    host = await startAppServer(() => buildServer({ database }), era);
    const client = host.client;
    const { bridge, port } = await bridgeToApp(client);
    const app = new HostConnection(port);
    const schema = new SchemaController(app, { pageTool: 'schema_read_page', pageArgs });
    let changes = 0;
    schema.onChange(() => changes++);
    await app.initialize({ name: 'schema-test', version: '1' });
    return {
      schema,
      async show(tool, args) {
        const before = changes;
        const result = await callToolForApp(client, bridge, tool, args);
        await waitUntil(() => changes > before && !schema.state.loading, { what: 'the schema' });
        return result;
      },
    };
  }

  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: list_tables shows every table with its columns and foreign keys, as the database has them`, async () => {
      const { schema, show } = await open(era);
      const result = (await show('list_tables', {})) as { structuredContent: { tables: { name: string }[] } };
      expect(schema.state.error).toBeUndefined();
      expect(schema.state.tables).toEqual(SCHEMA_TABLES);
      expect(schema.state.tables.map((t) => t.name)).toEqual(result.structuredContent.tables.map((t) => t.name));
      expect(foreignKeyLinks(schema.state.tables).map((l) => `${l.from.name}(${l.key.columns}) -> ${l.key.table}(${l.key.references})`)).toEqual([
        '<img src=x onerror=alert(1)>(<svg onload=alert(3)>) -> customers(id)',
        'order_items(order_id) -> orders(id)',
        'orders(customer_id) -> customers(id)',
      ]);
    });
  }

  it('describe_table shows the one table; an unknown table is the tool\'s error, as the text answer says it', async () => {
    const { schema, show } = await open('modern');
    await show('describe_table', { table_name: 'ORDER_ITEMS' });
    expect(schema.state.tables).toEqual([SCHEMA_TABLES[3]]);
    const missing = (await show('describe_table', { table_name: 'nope' })) as { isError?: boolean; content: { text: string }[] };
    expect(missing.isError).toBe(true);
    expect(schema.state.tables).toEqual([]);
    expect(schema.state.error).toBe(missing.content[0]!.text);
  });

  it('pages within the byte budget: a small maxBytes cuts pages, and loading the rest gives every table once', async () => {
    const { schema, show } = await open('modern', { limits: { maxBytes: 400 } });
    await show('list_tables', {});
    await expectSchemaReadToEnd(schema, SCHEMA_TABLES);
  });

  it('schema_read_page keeps the tools\' limits: a page past the table cap is refused, an unknown table is a not-found message', async () => {
    await open('modern');
    const tooMany = await host!.client.callTool({ name: 'schema_read_page', arguments: { limit: 201 } });
    expect(tooMany.isError).toBe(true);
    const unknown = await host!.client.callTool({ name: 'schema_read_page', arguments: { table_name: 'nope' } });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as { text: string }[])[0]!.text).toMatch(/^No table or view named "nope"\./);
    const last = await host!.client.callTool({ name: 'schema_read_page', arguments: { offset: 4, limit: 1 } });
    expect(last.structuredContent).toEqual({ tables: [SCHEMA_TABLES[4]], offset: 4, truncated: false });
  });

  it('a text-only client sees neither schema_read_page nor the view\'s resource; list_tables and describe_table answer as before, with _meta.ui', async () => {
    for (const allowWrite of [false, true]) {
      db = await schemaDatabase({ allowWrite });
      const plain = await connectInProcess(buildServer({ database: db.database }));
      try {
        const tools = (await plain.client.listTools()).tools;
        expect(tools.map((t) => t.name)).not.toContain('schema_read_page');
        for (const name of ['list_tables', 'describe_table']) expect(tools.find((t) => t.name === name)?._meta).toMatchObject({ ui: { resourceUri: 'ui://sqlite/schema.html' } });
        expect((await plain.client.listResources()).resources.map((r) => r.uri)).not.toContain('ui://sqlite/schema.html');
        expect((await plain.client.callTool({ name: 'list_tables', arguments: {} })).content).toEqual([
          { type: 'text', text: ['<img src=x onerror=alert(1)>', 'big_orders (view)', 'customers', 'order_items', 'orders'].join('\n') },
        ]);
      } finally {
        await plain.close();
        await db.close();
        db = undefined;
      }
    }
  });

  it('in write mode too, the app reads the schema through the read-only catalog', async () => {
    const { schema, show } = await open('modern', { allowWrite: true });
    await show('list_tables', {});
    expect(schema.state.tables).toEqual(SCHEMA_TABLES);
  });
});
