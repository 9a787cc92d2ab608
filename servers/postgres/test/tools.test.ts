import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeCursor } from '@suite/shared';
import { connectInProcess, type TestSession } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

let db: TestDatabase;
let session: TestSession;
let closeConfig: () => Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  const made = makeConfig(db.roleUrl, { limits: { maxRows: 100, maxBytes: 64 * 1024 } });
  closeConfig = made.close;
  session = await connectInProcess(buildServer(made.config));
}, 60_000);

afterAll(async () => {
  await session?.close();
  await closeConfig?.();
  await db?.drop();
});

describe('tools/list', () => {
  it('lists the read-only tools with truthful annotations and an output schema for query', async () => {
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['database_health', 'describe_table', 'explain_query', 'list_schemas', 'list_tables', 'query', 'recommend_indexes', 'top_queries']);
    for (const tool of tools) {
      expect(tool.annotations?.readOnlyHint).toBe(true);
      expect(tool.annotations?.destructiveHint).toBe(false);
    }
    const query = tools.find((t) => t.name === 'query')!;
    expect(Object.keys(query.inputSchema.properties ?? {})).toEqual(['sql', 'params']);
    expect(Object.keys(query.outputSchema?.properties ?? {})).toEqual(expect.arrayContaining(['columns', 'rows', 'rowCount', 'truncated']));
  });
});

describe('query', () => {
  it('returns typed values: bigint/numeric as strings, bytea base64, ISO timestamps, arrays and JSON preserved', async () => {
    const r = await session.callTool('query', {
      sql: `SELECT 9007199254740993::bigint AS big, 12.50::numeric AS num, 42 AS int, 1.5::float8 AS f, 'NaN'::float8 AS nan, true AS yes,
                   '\\x68656c6c6f'::bytea AS bin, '2024-01-02 03:04:05.678+00'::timestamptz AS tz, '2024-01-02 03:04:05'::timestamp AS ts,
                   '2024-02-29'::date AS d, ARRAY[1,2,NULL]::int[] AS ints, ARRAY['a b','c"d',NULL]::text[] AS texts, ARRAY[1::bigint] AS bigs,
                   '{"a":[1,{"b":null}]}'::jsonb AS doc, '[1,2]'::json AS arr, NULL::text AS nothing, ARRAY[[1,2],[3,4]] AS matrix,
                   gen_random_uuid() IS NOT NULL AS has_uuid, '1 day'::interval AS iv`,
    });
    expect(r.isError).toBe(false);
    const s = r.structured as { columns: { name: string; type: string }[]; rows: unknown[][]; rowCount: number; truncated: boolean };
    expect(s.rowCount).toBe(1);
    expect(s.truncated).toBe(false);
    const row = Object.fromEntries(s.columns.map((c, i) => [c.name, s.rows[0]![i]]));
    expect(row).toMatchObject({
      big: '9007199254740993',
      num: '12.50',
      int: 42,
      f: 1.5,
      nan: 'NaN',
      yes: true,
      bin: Buffer.from('hello').toString('base64'),
      tz: '2024-01-02T03:04:05.678Z',
      ts: '2024-01-02T03:04:05',
      d: '2024-02-29',
      ints: [1, 2, null],
      texts: ['a b', 'c"d', null],
      bigs: ['1'],
      doc: { a: [1, { b: null }] },
      arr: [1, 2],
      nothing: null,
      matrix: [
        [1, 2],
        [3, 4],
      ],
      has_uuid: true,
      iv: '1 day',
    });
    expect(Object.fromEntries(s.columns.map((c) => [c.name, c.type]))).toMatchObject({ big: 'bigint', num: 'numeric', bin: 'bytea', tz: 'timestamp with time zone', ints: 'integer[]', doc: 'jsonb' });
  });

  it('binds params over the extended protocol', async () => {
    const r = await session.callTool('query', { sql: 'SELECT email FROM customers WHERE id = $1 OR name = $2 ORDER BY id', params: [2, 'Ann'] });
    expect(r.structured!.rows).toEqual([['a@example.com'], ['b@example.com']]);
    const json = await session.callTool('query', { sql: "SELECT $1::jsonb -> 'k' AS v, $2::int[] AS a", params: [{ k: 'x' }, [1, 2]] });
    expect(json.structured!.rows).toEqual([['x', [1, 2]]]);
  });

  it('renders a text table and keeps duplicate column names', async () => {
    const r = await session.callTool('query', { sql: "SELECT 1 AS a, 2 AS a, note FROM orders WHERE note = 'x|y'" });
    expect(r.text).toContain('a | a | note');
    expect(r.text).toContain('1 | 2 | x\\|y');
    expect(r.text).toContain('(1 row)');
    expect((r.structured!.columns as unknown[]).length).toBe(3);
  });

  it('caps rows with an explicit truncated flag (the server stops sending)', async () => {
    const r = await session.callTool('query', { sql: 'SELECT n FROM many ORDER BY n' });
    expect(r.isError).toBe(false);
    expect(r.structured!.rowCount).toBe(100);
    expect(r.structured!.truncated).toBe(true);
    expect((r.structured!.rows as unknown[][]).at(-1)).toEqual([100]);
    expect(r.text).toMatch(/100-row cap/);
    const exact = await session.callTool('query', { sql: 'SELECT n FROM many ORDER BY n LIMIT 100' });
    expect(exact.structured!.truncated).toBe(false);
  });

  it('caps bytes', async () => {
    const r = await session.callTool('query', { sql: "SELECT n, repeat('x', 10000) AS pad FROM many ORDER BY n" });
    expect(r.structured!.truncated).toBe(true);
    expect(r.structured!.rowCount).toBeLessThan(10);
    expect(r.text).toMatch(/KiB size cap/);
    // Control characters cost six bytes each in JSON: the cap counts what is sent, not what was stored.
    const escaped = await session.callTool('query', { sql: "SELECT n, repeat(chr(1), 3000) AS ctl, repeat('|', 190) AS bars FROM many ORDER BY n" });
    expect(escaped.structured!.truncated).toBe(true);
    const sent = Buffer.byteLength(JSON.stringify(escaped.content)) + Buffer.byteLength(JSON.stringify(escaped.structured));
    expect(sent).toBeLessThan(2.2 * 64 * 1024);
    expect((escaped.structured!.rows as unknown[][]).length).toBeGreaterThan(0);
  });

  it("reports PostgreSQL's message, position and hint as an isError result", async () => {
    const syntax = await session.callTool('query', { sql: 'SELECT *\nFROM customers\nWHER id = 1' });
    expect(syntax.isError).toBe(true);
    expect(syntax.text).toMatch(/syntax error at or near "id"/);
    expect(syntax.text).toMatch(/SQLSTATE 42601/);
    expect(syntax.text).toMatch(/LINE 3: WHER id = 1\n\s+\^/);
    expect(syntax.text).toMatch(/POSITION: \d+/);
    const hint = await session.callTool('query', { sql: 'SELECT emial FROM customers' });
    expect(hint.isError).toBe(true);
    expect(hint.text).toMatch(/column "emial" does not exist/);
    expect(hint.text).toMatch(/HINT: Perhaps you meant to reference the column "customers.email"/);
    expect(hint.text).not.toContain(db.rolePassword);
  });

  it('keeps working after errors (the pooled connection is cleaned up)', async () => {
    for (let i = 0; i < 6; i++) expect((await session.callTool('query', { sql: 'SELECT 1/0' })).isError).toBe(true);
    const ok = await session.callTool('query', { sql: 'SELECT count(*) AS n FROM customers' });
    expect(ok.structured!.rows).toEqual([['2']]);
  });

  it('rejects invalid arguments', async () => {
    expect((await session.callTool('query', { sql: '' })).isError).toBe(true);
    expect((await session.callTool('query', { sql: 'SELECT 1', params: 'x' })).isError).toBe(true);
  });
});

describe('introspection', () => {
  it('list_schemas hides system schemas unless asked', async () => {
    const r = await session.callTool('list_schemas', {});
    const names = (r.structured!.schemas as { name: string }[]).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['public', 'Sales Data']));
    expect(names).not.toContain('pg_catalog');
    const all = await session.callTool('list_schemas', { include_system: true });
    expect((all.structured!.schemas as { name: string }[]).map((s) => s.name)).toContain('pg_catalog');
  });

  it('list_tables covers every schema with kinds, estimates and comments', async () => {
    const r = await session.callTool('list_tables', {});
    const tables = r.structured!.tables as { schema: string; name: string; kind: string; rowEstimate: number | null; comment: string | null }[];
    const byName = Object.fromEntries(tables.map((t) => [`${t.schema}.${t.name}`, t]));
    expect(byName['public.customers']).toMatchObject({ kind: 'table', rowEstimate: 2, comment: 'People who buy things' });
    expect(byName['public.big_orders']?.kind).toBe('view');
    expect(byName['public.order_totals']?.kind).toBe('materialized view');
    expect(byName['Sales Data.Q1/Results']?.kind).toBe('table');
    const one = await session.callTool('list_tables', { schema: 'Sales Data' });
    expect((one.structured!.tables as unknown[]).length).toBe(1);
  });

  it('list_tables answers a cursor it did not issue with an isError saying so (found by the fuzzer)', async () => {
    for (const cursor of ['customers', encodeCursor('other-list', { offset: 1 }), encodeCursor('tables', { offset: -5 })]) {
      const r = await session.callTool('list_tables', { cursor });
      expect(r, cursor).toMatchObject({ isError: true, text: expect.stringMatching(/^Invalid cursor: /) });
    }
  });

  it('describe_table gives columns, keys, indexes, constraints and comments', async () => {
    const r = await session.callTool('describe_table', { table: 'orders' });
    expect(r.isError).toBe(false);
    const d = r.structured as Record<string, unknown> & { columns: { name: string; type: string; nullable: boolean; default: string | null }[] };
    expect(d.primaryKey).toEqual(['id']);
    expect(d.columns.find((c) => c.name === 'total')).toMatchObject({ type: 'numeric(12,2)', nullable: false });
    expect(d.columns.find((c) => c.name === 'id')!.default).toMatch(/nextval/);
    expect(d.foreignKeys).toEqual([expect.objectContaining({ columns: ['customer_id'], references: 'customers' })]);
    expect(JSON.stringify(d.indexes)).toContain('orders_customer_idx');
    expect(JSON.stringify(d.constraints)).toContain('CHECK (total >= 0');
    expect(r.text).toContain('foreign keys:');
    const c = await session.callTool('describe_table', { schema: 'public', table: 'customers' });
    expect(c.text).toContain('-- Login address');
    expect(c.text).toContain('GENERATED ALWAYS AS IDENTITY');
  });

  it('describe_table binds identifiers, so odd names work and injection is inert', async () => {
    const odd = await session.callTool('describe_table', { schema: 'Sales Data', table: 'Q1/Results' });
    expect(odd.isError).toBe(false);
    expect(odd.structured!.name).toBe('Q1/Results');
    const inject = await session.callTool('describe_table', { table: "x'; DROP TABLE victims; --" });
    expect(inject.isError).toBe(true);
    expect(inject.text).toMatch(/No table, view or materialized view named/);
  });

  it('explain_query renders the JSON plan as a tree; ANALYZE runs inside the rolled-back read-only transaction', async () => {
    const plain = await session.callTool('explain_query', { sql: 'SELECT * FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > $1', params: [5] });
    expect(plain.isError).toBe(false);
    expect(plain.text).toMatch(/(Join|Nested Loop).*\(cost=\d+\.\d+\.\.\d+\.\d+ rows=\d+ width=\d+\)/);
    expect(plain.text).toMatch(/\n {2}-> {2}Seq Scan on orders o/);
    expect(plain.structured!.analyzed).toBe(false);
    const analyzed = await session.callTool('explain_query', { sql: 'SELECT count(*) FROM many', analyze: true });
    expect(analyzed.text).toMatch(/actual time=/);
    expect(analyzed.text).toMatch(/Execution Time: /);
    const write = await session.callTool('explain_query', { sql: 'DELETE FROM victims', analyze: true });
    expect(write.isError).toBe(true);
    expect(write.text).toMatch(/read-only transaction/);
    const count = await withClient(db.adminUrl, async (c) => (await c.query('SELECT count(*)::int AS n FROM victims')).rows[0].n);
    expect(count).toBe(1);
  });

  it('database_health reports connections, cache, vacuum, wraparound, indexes and sequences', async () => {
    await withClient(db.adminUrl, async (c) => {
      await c.query('CREATE INDEX dup_a ON orders (total); CREATE INDEX dup_b ON orders (total)');
      await c.query("CREATE SEQUENCE nearly_done MAXVALUE 100; SELECT setval('nearly_done', 90)");
      // A failed CREATE INDEX CONCURRENTLY leaves an invalid index behind.
      await c.query('CREATE TABLE dupes (x int); INSERT INTO dupes VALUES (1), (1)');
      await c.query('CREATE UNIQUE INDEX CONCURRENTLY dupes_x ON dupes (x)').catch(() => undefined);
      await c.query('CREATE TABLE churn (n int) WITH (autovacuum_enabled = false); INSERT INTO churn SELECT generate_series(1, 2000); DELETE FROM churn');
      await c.query('SELECT pg_stat_force_next_flush()');
    });
    // Table statistics reach the shared stats asynchronously: ask until they show.
    let churned = false;
    for (let attempt = 0; attempt < 50 && !churned; attempt++) {
      const r = await session.callTool('database_health', {});
      churned = JSON.stringify(r.structured?.tablesNeedingVacuum ?? []).includes('public.churn');
      if (!churned) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(churned).toBe(true);
    const r = await session.callTool('database_health', {});
    expect(r.isError).toBe(false);
    const h = r.structured as { connections: { total: number; max: number }; duplicateIndexes: { indexes: string[] }[]; transactionIdWraparound: { database: string }[] };
    expect(h.connections.max).toBeGreaterThan(0);
    expect(h.connections.total).toBeGreaterThan(0);
    expect(h.duplicateIndexes.map((d) => d.indexes.sort())).toContainEqual(['dup_a', 'dup_b']);
    expect(h.transactionIdWraparound.map((w) => w.database)).toContain(db.name);
    expect(r.text).toMatch(/cache hit ratio/);
    expect(r.text).toMatch(/duplicate indexes: .*dup_a = dup_b/);
    expect(r.structured!.invalidIndexes).toContainEqual({ index: 'dupes_x', table: 'dupes' });
    expect(r.structured!.sequencesNearLimit).toContainEqual({ sequence: 'public.nearly_done', percentUsed: 89.9 });
    expect((r.structured!.warnings as string[]).join('\n')).toMatch(/invalid index/);
  });

  it('top_queries explains how to enable pg_stat_statements when it is missing or not loaded', async () => {
    const missing = await session.callTool('top_queries', {});
    expect(missing.isError).toBe(false);
    expect(missing.structured).toEqual({ available: false, queries: [] });
    expect(missing.text).toMatch(/not installed.*shared_preload_libraries.*CREATE EXTENSION pg_stat_statements/s);
    await withClient(db.adminUrl, (c) => c.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements'));
    const notLoaded = await session.callTool('top_queries', { order_by: 'calls', limit: 5 });
    const loaded = await withClient(db.adminUrl, async (c) => (await c.query("SELECT current_setting('shared_preload_libraries') AS l")).rows[0].l as string);
    if (loaded.includes('pg_stat_statements')) {
      expect(notLoaded.structured!.available).toBe(true);
    } else {
      expect(notLoaded.text).toMatch(/installed but not loaded/);
    }
  });
});

describe('chunked fetching through the open portal', () => {
  it('fetches across chunks up to the cap, finishes short results, and survives an error mid-stream', async () => {
    const made = makeConfig(db.roleUrl, { limits: { maxRows: 1000 }, poolSize: 1 });
    const s = await connectInProcess(buildServer(made.config));
    try {
      const capped = await s.callTool('query', { sql: 'SELECT n FROM many ORDER BY n' });
      expect(capped.structured).toMatchObject({ rowCount: 1000, truncated: true });
      expect((capped.structured!.rows as number[][]).map((r) => r[0])).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
      const short = await s.callTool('query', { sql: 'SELECT n FROM many WHERE n <= 250 ORDER BY n' });
      expect(short.structured).toMatchObject({ rowCount: 250, truncated: false, command: 'SELECT' });
      const exact = await s.callTool('query', { sql: 'SELECT n FROM many WHERE n <= 1000' });
      expect(exact.structured).toMatchObject({ rowCount: 1000, truncated: false });
      const failing = await s.callTool('query', { sql: 'SELECT 1 / (n - 400) FROM many ORDER BY n' });
      expect(failing.isError).toBe(true);
      expect(failing.text).toMatch(/division by zero/);
      const after = await s.callTool('query', { sql: 'SELECT count(*) AS n FROM many' });
      expect(after.structured!.rows).toEqual([['5000']]);
    } finally {
      await s.close();
      await made.close();
    }
  });
});
