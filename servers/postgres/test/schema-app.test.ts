import { afterEach, describe, expect, it } from 'vitest';
import { connectInProcess, waitUntil } from '@suite/test-kit';
import { bridgeToApp, callToolForApp, expectSchemaReadToEnd, startAppServer, type AppHost } from '@suite/test-kit/apps';
import { HostConnection } from '@suite/shared/app-kit/rpc';
import { SchemaController, foreignKeyLinks } from '@suite/shared/app-kit/schema-model';
import { buildServer } from '../src/server.js';
import { SCHEMA_TABLES, schemaDatabase } from './schema-fixture.js';

// The app's own page arguments (app/schema.ts): one table for describe_table, pages for list_tables.
const pageArgs = (args: Record<string, unknown>, offset: number): Record<string, unknown> => {
  const schema = typeof args.schema === 'string' ? { schema: args.schema } : {};
  return typeof args.table === 'string' ? { ...schema, table: args.table } : { ...schema, offset };
};

describe('the schema view app against the ext-apps AppBridge and the real server (PostgreSQL)', () => {
  let fx: Awaited<ReturnType<typeof schemaDatabase>> | undefined;
  let host: AppHost | undefined;
  afterEach(async () => {
    await host?.close();
    await fx?.close();
    host = fx = undefined;
  });

  async function open(era: 'legacy' | 'modern', options: Parameters<typeof schemaDatabase>[0] = {}): Promise<{ schema: SchemaController; show(tool: string, args: Record<string, unknown>): Promise<unknown> }> {
    fx = await schemaDatabase(options);
    const config = fx.config;
    host = await startAppServer(() => buildServer(config), era);
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
    it(`${era}: list_tables shows every table of every schema with its columns and foreign keys, as the database has them`, async () => {
      const { schema, show } = await open(era);
      const result = (await show('list_tables', {})) as { structuredContent: { tables: { schema: string; name: string }[] } };
      expect(schema.state.error).toBeUndefined();
      expect(schema.state.tables).toEqual(SCHEMA_TABLES);
      expect(schema.state.tables.map((t) => [t.schema, t.name])).toEqual(result.structuredContent.tables.map((t) => [t.schema, t.name]));
      expect(foreignKeyLinks(schema.state.tables).map((l) => `${l.from.schema}.${l.from.name}(${l.key.columns}) -> ${l.key.schema}.${l.key.table}(${l.key.references})`)).toEqual([
        'audit.events(order_id) -> public.orders(id)',
        'public.<img src=x onerror=alert(1)>(<svg onload=alert(3)>) -> public.customers(id)',
        'public.order_items(order_id) -> public.orders(id)',
        'public.orders(customer_id) -> public.customers(id)',
      ]);
    });
  }

  it('list_tables of one schema shows that schema; describe_table its one table; an unknown table is the tool\'s error', async () => {
    const { schema, show } = await open('modern');
    await show('list_tables', { schema: 'audit' });
    expect(schema.state.tables).toEqual([SCHEMA_TABLES[0]]);
    await show('describe_table', { table: 'order_items' });
    expect(schema.state.tables).toEqual([SCHEMA_TABLES[4]]);
    const missing = (await show('describe_table', { table: 'nope' })) as { isError?: boolean; content: { text: string }[] };
    expect(missing.isError).toBe(true);
    expect(schema.state.tables).toEqual([]);
    expect(schema.state.error).toBe(missing.content[0]!.text);
  });

  it('pages within the byte cap: a small maxBytes cuts pages, and loading the rest gives every table once', async () => {
    const { schema, show } = await open('modern', { limits: { maxBytes: 400 } });
    await show('list_tables', {});
    await expectSchemaReadToEnd(schema, SCHEMA_TABLES);
  });

  it('schema_read_page keeps the tools\' limits: a page past the table cap is refused, an unknown table is a not-found message', async () => {
    await open('modern');
    expect((await host!.client.callTool({ name: 'schema_read_page', arguments: { limit: 201 } })).isError).toBe(true);
    const unknown = await host!.client.callTool({ name: 'schema_read_page', arguments: { table: 'nope' } });
    expect(unknown.isError).toBe(true);
    expect((unknown.content as { text: string }[])[0]!.text).toMatch(/^No table, view or materialized view named "nope"/);
    const last = await host!.client.callTool({ name: 'schema_read_page', arguments: { offset: 5, limit: 1 } });
    expect(last.structuredContent).toEqual({ tables: [SCHEMA_TABLES[5]], offset: 5, truncated: false });
  });

  it('a text-only client sees neither schema_read_page nor the view\'s resource (read-only and with --allow-write); the schema tools carry _meta.ui', async () => {
    for (const allowWrite of [false, true]) {
      fx = await schemaDatabase({ allowWrite });
      const plain = await connectInProcess(buildServer(fx.config));
      try {
        const tools = (await plain.client.listTools()).tools;
        expect(tools.map((t) => t.name)).not.toContain('schema_read_page');
        for (const name of ['list_tables', 'describe_table']) expect(tools.find((t) => t.name === name)?._meta).toMatchObject({ ui: { resourceUri: 'ui://postgres/schema.html' } });
        expect((await plain.client.listResources()).resources.map((r) => r.uri)).not.toContain('ui://postgres/schema.html');
      } finally {
        await plain.close();
        await fx.close();
        fx = undefined;
      }
    }
  });
});
