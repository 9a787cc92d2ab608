import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, spawnServer, type TestSession } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { parseIndexStatement } from '../src/hypothetical.js';
import { planShape, type PlanNode } from '../src/index-advisor.js';
import { BIN, createTestDatabase, makeConfig, withClient, type TestDatabase } from './helpers.js';

/**
 * Hypothetical indexes (explain_query's hypothetical_indexes) and recommend_indexes, on the real
 * PostgreSQL with hypopg, as the least-privilege read-only role. The million-row table is made once
 * for the file (one generate_series statement, then ANALYZE).
 */
const BIG_TABLE = `
CREATE TABLE events AS
  SELECT g AS id, g % 200000 AS account_id, (g % 97)::int AS kind, timestamptz '2024-01-01' + g * interval '1 second' AS at, md5(g::text) AS payload
    FROM generate_series(1, 1000000) g;
ANALYZE events;
`;

let db: TestDatabase;
let session: TestSession;
let closeConfig: () => Promise<void>;

type Plan = { Plan: PlanNode }[];

async function hypotheticalIndexesOnServer(): Promise<number> {
  // Any backend of the database still holding a hypothetical index would show up in no catalog, so
  // look where hypopg keeps them: in the backends themselves. The pool's connections are closed
  // after each call that made one; a fresh call on a pool of one shows what it inherits.
  const r = await session.callTool('query', { sql: 'SELECT count(*)::int AS n FROM hypopg_list_indexes' });
  expect(r.isError, r.text).toBe(false);
  return (r.structured as { rows: number[][] }).rows[0]![0]!;
}

beforeAll(async () => {
  db = await createTestDatabase();
  await withClient(db.adminUrl, async (c) => {
    await c.query('CREATE EXTENSION hypopg');
    await c.query(BIG_TABLE);
  });
  const made = makeConfig(db.roleUrl, { poolSize: 1 });
  closeConfig = made.close;
  session = await connectInProcess(buildServer(made.config));
}, 120_000);

afterAll(async () => {
  await session?.close();
  await closeConfig?.();
  await db?.drop();
});

describe('CREATE INDEX statements are read strictly', () => {
  it('rewrites what it accepts from its own tokens', () => {
    expect(parseIndexStatement('create index on Orders (customer_id, created_at desc nulls last);').ddl).toBe('CREATE INDEX ON orders (customer_id, created_at DESC NULLS LAST)');
    expect(parseIndexStatement('CREATE UNIQUE INDEX IF NOT EXISTS x ON "Sales Data"."Q1/Results" USING hash ((lower(region))) ').ddl).toBe(
      'CREATE UNIQUE INDEX ON "Sales Data"."Q1/Results" USING hash ((lower(region)))',
    );
    expect(parseIndexStatement(`CREATE INDEX ON t (a) INCLUDE (b) WHERE status = 'it''s' AND n > 3`).ddl).toBe(`CREATE INDEX ON t (a) INCLUDE (b) WHERE status = 'it''s' and n > 3`);
  });

  it('refuses everything else, naming why', () => {
    const refused: [string, RegExp][] = [
      ['CREATE INDEX ON victims (label); DROP TABLE victims', /more than one statement/],
      ['DROP TABLE victims', /expected CREATE/],
      ['CREATE TABLE x (a int)', /expected INDEX/],
      ["CREATE INDEX ON victims ((pg_read_file('/etc/passwd')))", /function pg_read_file\(\)/],
      ["CREATE INDEX ON victims (label) WHERE lo_import('/etc/passwd') > 0", /function lo_import\(\)/],
      ['CREATE INDEX ON victims USING gist (label)', /cannot simulate gist/],
      ['CREATE INDEX ON victims (label) -- comment', /character "-"|more than one statement/],
      ['CREATE INDEX ON victims (label', /expected "\)"|expected/],
      ['CREATE INDEX ON victims ("unterminated)', /unterminated quoted name/],
      ['CREATE INDEX ON victims (label) WHERE ((a)', /incomplete WHERE|unbalanced/],
    ];
    for (const [statement, why] of refused) expect(() => parseIndexStatement(statement), statement).toThrow(why);
  });
});

describe('explain_query with hypothetical_indexes', () => {
  it('plans with the hypothetical index, at a lower cost, and leaves nothing behind', async () => {
    const sql = 'SELECT * FROM events WHERE account_id = 4242';
    const plain = await session.callTool('explain_query', { sql });
    expect(plain.isError, plain.text).toBe(false);
    const before = (plain.structured as { plan: Plan }).plan[0]!.Plan;
    expect(planShape(before)).toMatch(/Seq Scan on events/);

    const r = await session.callTool('explain_query', { sql, hypothetical_indexes: ['CREATE INDEX ON events (account_id)'] });
    expect(r.isError, r.text).toBe(false);
    const s = r.structured as { plan: Plan; hypotheticalIndexes: { ddl: string; name: string; estimatedBytes: number }[] };
    expect(s.hypotheticalIndexes).toHaveLength(1);
    expect(s.hypotheticalIndexes[0]!.ddl).toBe('CREATE INDEX ON events (account_id)');
    expect(s.hypotheticalIndexes[0]!.estimatedBytes).toBeGreaterThan(1_000_000);
    const after = s.plan[0]!.Plan;
    expect(planShape(after)).toContain(s.hypotheticalIndexes[0]!.name);
    expect(Number(after['Total Cost'])).toBeLessThan(Number(before['Total Cost']) / 10);
    expect(r.text).toMatch(/hypothetical indexes existed/);
    expect(await hypotheticalIndexesOnServer()).toBe(0);
  });

  it('answers clear errors: analyze with hypothetical indexes, an unknown column, a refused statement', async () => {
    const analyze = await session.callTool('explain_query', { sql: 'SELECT 1', analyze: true, hypothetical_indexes: ['CREATE INDEX ON events (kind)'] });
    expect(analyze.isError).toBe(true);
    expect(analyze.text).toMatch(/give one or the other/);
    const column = await session.callTool('explain_query', { sql: 'SELECT 1', hypothetical_indexes: ['CREATE INDEX ON events (no_such_column)'] });
    expect(column.isError).toBe(true);
    expect(column.text).toMatch(/cannot be created: column "no_such_column" does not exist/);
    const chained = await session.callTool('explain_query', { sql: 'SELECT 1', hypothetical_indexes: ['CREATE INDEX ON victims (label); DROP TABLE victims'] });
    expect(chained.isError).toBe(true);
    expect(chained.text).toMatch(/more than one statement/);
    expect(await hypotheticalIndexesOnServer()).toBe(0);
  });

  it('without hypopg in the database, says how to get it', async () => {
    const bare = await createTestDatabase('CREATE TABLE t (a int);');
    const made = makeConfig(bare.roleUrl);
    const other = await connectInProcess(buildServer(made.config));
    try {
      const r = await other.callTool('explain_query', { sql: 'SELECT * FROM t WHERE a = 1', hypothetical_indexes: ['CREATE INDEX ON t (a)'] });
      expect(r.isError).toBe(true);
      expect(r.text).toMatch(/hypopg extension is installed on the server but not created in this database/);
      expect(r.text).toMatch(/CREATE EXTENSION hypopg; needs a superuser/);
      const advice = await other.callTool('recommend_indexes', { sql: 'SELECT * FROM t WHERE a = 1' });
      expect(advice.isError).toBe(true);
      expect(advice.text).toMatch(/CREATE EXTENSION hypopg/);
    } finally {
      await other.close();
      await made.close();
      await bare.drop();
    }
  });
});

describe('recommend_indexes', () => {
  it('turns a sequential scan on a million rows into an index scan; the real index gives the same plan shape', async () => {
    const sql = 'SELECT id, at FROM events WHERE account_id = $1 ORDER BY at';
    const r = await session.callTool('recommend_indexes', { sql, params: [4242] });
    expect(r.isError, r.text).toBe(false);
    const s = r.structured as {
      recommendations: { ddl: string; columns: string[]; estimatedBytes: number; queriesHelped: number[] }[];
      queries: { costBefore: number; costAfter: number; planBefore: string; planAfter: string }[];
    };
    expect(s.recommendations.length).toBeGreaterThanOrEqual(1);
    const best = s.recommendations[0]!;
    expect(best.columns[0]).toBe('account_id');
    expect(best.ddl).toMatch(/^CREATE INDEX "events_account_id[a-z_]*_idx" ON "public"\."events" \("account_id"/);
    expect(best.queriesHelped).toEqual([1]);
    const [query] = s.queries;
    expect(query!.planBefore).toMatch(/Seq Scan on events/);
    expect(query!.planAfter).toMatch(/Index (Only )?Scan using events_account_id\w*_idx \(hypothetical\) on events/);
    expect(query!.costAfter).toBeLessThan(query!.costBefore / 10);
    expect(r.text).toMatch(/\| 1 \| CREATE INDEX "events_account_id/);
    expect(r.text).toMatch(/none created/);
    // Nothing was created: the catalog has no new index, and no session holds a hypothetical one.
    const indexes = await withClient(db.adminUrl, async (c) => (await c.query(`SELECT count(*)::int AS n FROM pg_indexes WHERE tablename = 'events'`)).rows[0].n);
    expect(indexes).toBe(0);
    expect(await hypotheticalIndexesOnServer()).toBe(0);

    // Built for real, the index gives the plan the estimate promised (node for node).
    await withClient(db.adminUrl, (c) => c.query(best.ddl));
    try {
      const real = await session.callTool('explain_query', { sql, params: [4242] });
      const shape = planShape((real.structured as { plan: Plan }).plan[0]!.Plan).replace(/using \S+/g, 'using');
      expect(shape).toBe(query!.planAfter.replace(/using \S+ \(hypothetical\)/g, 'using'));
    } finally {
      await withClient(db.adminUrl, (c) => c.query(`DROP INDEX ${best.ddl.split(' ')[2]}`));
    }
  });

  it('advises a workload: a size budget too small for any index recommends none; queries that cannot be planned are reported', async () => {
    // The second as pg_stat_statements records statements: $n without values, planned generically.
    const queries = ['SELECT * FROM events WHERE kind = 5 AND at > now() - interval \'1 day\'', 'SELECT count(*) FROM events WHERE account_id = $1', 'SELECT * FROM no_such_table'];
    const r = await session.callTool('recommend_indexes', { queries });
    expect(r.isError, r.text).toBe(false);
    const s = r.structured as { recommendations: { columns: string[]; queriesHelped: number[] }[]; queries: { error?: string }[] };
    expect(s.recommendations.map((x) => x.columns[0])).toEqual(expect.arrayContaining(['account_id']));
    expect(s.queries[2]!.error).toMatch(/no_such_table/);
    expect(s.recommendations.find((x) => x.columns[0] === 'account_id')!.queriesHelped).toEqual([2]);
    const tight = await session.callTool('recommend_indexes', { queries, max_size_mb: 0.01 });
    expect(tight.isError, tight.text).toBe(false);
    expect((tight.structured as { recommendations: unknown[] }).recommendations).toEqual([]);
    expect(tight.text).toMatch(/No index would lower the estimated cost/);
  });

  it('without sql or queries, explains that pg_stat_statements is needed', async () => {
    const r = await session.callTool('recommend_indexes', {});
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/pg_stat_statements is not installed in this database/);
  });

  it('advises the workload pg_stat_statements recorded in this database: its heaviest statements, planned generically', async () => {
    // CI preloads pg_stat_statements (.ci/run); this test needs it, as the workload mode does.
    await withClient(db.adminUrl, (c) => c.query('CREATE EXTENSION pg_stat_statements'));
    await withClient(db.roleUrl, async (c) => {
      for (let n = 0; n < 5; n++) await c.query('SELECT count(*) FROM events WHERE account_id = $1', [1000 + n]);
      await c.query('SELECT count(*) FROM events WHERE kind = $1', [7]);
    });
    const r = await session.callTool('recommend_indexes', { top: 10 });
    expect(r.isError, r.text).toBe(false);
    const s = r.structured as { recommendations: { columns: string[]; queriesHelped: number[] }[]; queries: { query: string; source: string }[] };
    // Only this database's statements, recorded without their values.
    expect(s.queries.length).toBeGreaterThan(0);
    expect(s.queries.every((q) => q.source === 'pg_stat_statements')).toBe(true);
    const byAccount = s.queries.findIndex((q) => /account_id = \$1/.test(q.query));
    expect(byAccount, JSON.stringify(s.queries)).toBeGreaterThanOrEqual(0);
    const advice = s.recommendations.find((x) => x.columns[0] === 'account_id');
    expect(advice, r.text).toBeDefined();
    expect(advice!.queriesHelped).toContain(byAccount + 1);
    expect(r.text).toMatch(/none created/);
  });

  it('works over stdio of the built bin', async () => {
    const spawned = await spawnServer(BIN, [db.roleUrl], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    try {
      const r = await spawned.callTool('recommend_indexes', { sql: 'SELECT * FROM events WHERE account_id = 11' });
      expect(r.isError, r.text).toBe(false);
      expect((r.structured as { recommendations: { columns: string[] }[] }).recommendations[0]!.columns).toEqual(['account_id']);
      const e = await spawned.callTool('explain_query', { sql: 'SELECT * FROM events WHERE kind = 3 ORDER BY at LIMIT 5', hypothetical_indexes: ['CREATE INDEX ON events (kind, at)'] });
      expect(e.isError, e.text).toBe(false);
      expect(e.text).toMatch(/Index Scan using <\d+>btree_events_kind_at/);
    } finally {
      await spawned.close();
    }
  });
});
