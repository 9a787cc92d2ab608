import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import type { Transaction } from '../database.js';
import pg from 'pg';
import { isDatabaseError } from '../errors.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

interface HealthReport {
  connections: { total: number; max: number; byState: Record<string, number>; idleInTransaction: number; longestQuerySeconds: number | null };
  cacheHitRatio: number | null;
  tablesNeedingVacuum: { table: string; deadTuples: number; liveTuples: number; lastAutovacuum: string | null }[];
  transactionIdWraparound: { database: string; age: number; percentTowardsWraparound: number }[];
  invalidIndexes: { index: string; table: string }[];
  duplicateIndexes: { table: string; indexes: string[] }[];
  sequencesNearLimit: { sequence: string; percentUsed: number }[];
  warnings: string[];
}

async function healthReport(tx: Transaction): Promise<HealthReport> {
  const warnings: string[] = [];
  const [conn] = await tx.rows<{ total: number; max: number; by_state: Record<string, number> | null; idle_in_tx: number; longest: number | null }>(
    `SELECT count(*)::int AS total, current_setting('max_connections')::int AS max,
            (SELECT json_object_agg(coalesce(state, 'unknown'), n) FROM (SELECT state, count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' GROUP BY state) s) AS by_state,
            count(*) FILTER (WHERE state LIKE 'idle in transaction%')::int AS idle_in_tx,
            extract(epoch FROM max(now() - query_start) FILTER (WHERE state = 'active' AND pid <> pg_backend_pid()))::float8 AS longest
       FROM pg_stat_activity WHERE backend_type = 'client backend'`,
  );
  const [cache] = await tx.rows<{ ratio: number | null }>(
    `SELECT CASE WHEN blks_hit + blks_read = 0 THEN NULL ELSE round(blks_hit::numeric / (blks_hit + blks_read), 4)::float8 END AS ratio
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  const vacuum = await tx.rows<{ table: string; deadTuples: number; liveTuples: number; lastAutovacuum: string | null }>(
    `SELECT format('%I.%I', schemaname, relname) AS table, n_dead_tup::float8 AS "deadTuples", n_live_tup::float8 AS "liveTuples",
            to_char(greatest(last_autovacuum, last_vacuum) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS "lastAutovacuum"
       FROM pg_stat_user_tables
      WHERE n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
                         + current_setting('autovacuum_vacuum_scale_factor')::float8 * greatest(n_live_tup, 0)
      ORDER BY n_dead_tup DESC LIMIT 20`,
  );
  const wraparound = await tx.rows<{ database: string; age: number; percentTowardsWraparound: number }>(
    `SELECT datname AS database, age(datfrozenxid)::float8 AS age, round(100.0 * age(datfrozenxid) / 2147483647, 2)::float8 AS "percentTowardsWraparound"
       FROM pg_database WHERE datallowconn ORDER BY age(datfrozenxid) DESC`,
  );
  const invalid = await tx.rows<{ index: string; table: string }>(
    `SELECT i.indexrelid::regclass::text AS index, i.indrelid::regclass::text AS table FROM pg_index i WHERE NOT i.indisvalid`,
  );
  const duplicates = await tx.rows<{ table: string; indexes: string[] }>(
    `SELECT indrelid::regclass::text AS table, array_agg(indexrelid::regclass::text ORDER BY indexrelid) AS indexes
       FROM pg_index
      GROUP BY indrelid, indkey::text, indclass::text, indcollation::text, coalesce(pg_get_expr(indexprs, indrelid), ''), coalesce(pg_get_expr(indpred, indrelid), '')
     HAVING count(*) > 1`,
  );
  // pg_sequences shows last_value NULL for sequences this role may not read, so this never fails on privileges.
  const sequences = await tx.rows<{ sequence: string; percentUsed: number }>(
    `SELECT format('%I.%I', schemaname, sequencename) AS sequence,
            round(100.0 * (last_value - min_value) / nullif(max_value - min_value, 0), 2)::float8 AS "percentUsed"
       FROM pg_sequences
      WHERE last_value IS NOT NULL AND 100.0 * (last_value - min_value) / nullif(max_value - min_value, 0) > 75
      ORDER BY 2 DESC`,
  );
  const cacheHitRatio = cache?.ratio ?? null;
  if (cacheHitRatio !== null && cacheHitRatio < 0.95) warnings.push(`cache hit ratio ${(cacheHitRatio * 100).toFixed(1)}% is below 95%: shared_buffers may be too small for the working set.`);
  const total = conn?.total ?? 0;
  const max = conn?.max ?? 0;
  if (max > 0 && total / max > 0.8) warnings.push(`${total} of ${max} connections in use.`);
  if ((conn?.idle_in_tx ?? 0) > 0) warnings.push(`${conn?.idle_in_tx} session(s) idle in transaction (they hold locks and block vacuum).`);
  for (const w of wraparound) if (w.percentTowardsWraparound > 50) warnings.push(`database ${w.database} is ${w.percentTowardsWraparound}% of the way to transaction-id wraparound: VACUUM (FREEZE) it.`);
  if (vacuum.length) warnings.push(`${vacuum.length} table(s) have more dead tuples than the autovacuum threshold.`);
  if (invalid.length) warnings.push(`${invalid.length} invalid index(es): drop and recreate them.`);
  if (duplicates.length) warnings.push(`${duplicates.length} set(s) of duplicate indexes: keep one of each.`);
  if (sequences.length) warnings.push(`${sequences.length} sequence(s) have used more than 75% of their range.`);
  return {
    connections: { total, max, byState: conn?.by_state ?? {}, idleInTransaction: conn?.idle_in_tx ?? 0, longestQuerySeconds: conn?.longest ?? null },
    cacheHitRatio,
    tablesNeedingVacuum: vacuum,
    transactionIdWraparound: wraparound,
    invalidIndexes: invalid,
    duplicateIndexes: duplicates,
    sequencesNearLimit: sequences,
    warnings,
  };
}

function renderHealth(r: HealthReport): string {
  const lines = [
    `connections: ${r.connections.total}/${r.connections.max} (${Object.entries(r.connections.byState).map(([s, n]) => `${s} ${n}`).join(', ') || 'none'})` +
      (r.connections.longestQuerySeconds !== null ? `; longest running query ${r.connections.longestQuerySeconds.toFixed(1)} s` : ''),
    `cache hit ratio: ${r.cacheHitRatio === null ? 'n/a (no reads yet)' : `${(r.cacheHitRatio * 100).toFixed(2)}%`}`,
    `transaction-id age: ${r.transactionIdWraparound.slice(0, 3).map((w) => `${w.database} ${w.percentTowardsWraparound}%`).join(', ')}`,
    `tables needing vacuum: ${r.tablesNeedingVacuum.length ? r.tablesNeedingVacuum.map((t) => `${t.table} (${t.deadTuples} dead / ${t.liveTuples} live)`).join(', ') : 'none'}`,
    `invalid indexes: ${r.invalidIndexes.length ? r.invalidIndexes.map((i) => `${i.index} on ${i.table}`).join(', ') : 'none'}`,
    `duplicate indexes: ${r.duplicateIndexes.length ? r.duplicateIndexes.map((d) => `${d.table}: ${d.indexes.join(' = ')}`).join('; ') : 'none'}`,
    `sequences over 75% used: ${r.sequencesNearLimit.length ? r.sequencesNearLimit.map((s) => `${s.sequence} ${s.percentUsed}%`).join(', ') : 'none'}`,
  ];
  lines.push('', r.warnings.length ? `warnings:\n${r.warnings.map((w) => `  - ${w}`).join('\n')}` : 'no warnings');
  return lines.join('\n');
}

const TOP_QUERY = z.object({
  query: z.string(),
  calls: z.number(),
  totalMs: z.number(),
  meanMs: z.number(),
  rows: z.number(),
  sharedBlocksHit: z.number(),
  sharedBlocksRead: z.number(),
});

export function healthTools(config: PostgresConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const { database } = config;
  tools.push(defineTool({
    name: 'database_health',
    description: `Checks the database's health: connections in use, cache hit ratio, tables needing vacuum, transaction-id wraparound,
invalid and duplicate indexes, and sequences near their limit, with a list of warnings. Read-only.`,
    input: z.object({}),
    output: z.object({
      connections: z.object({ total: z.number(), max: z.number(), byState: z.record(z.string(), z.number()), idleInTransaction: z.number(), longestQuerySeconds: z.number().nullable() }),
      cacheHitRatio: z.number().nullable(),
      tablesNeedingVacuum: z.array(z.object({ table: z.string(), deadTuples: z.number(), liveTuples: z.number(), lastAutovacuum: z.string().nullable() })),
      transactionIdWraparound: z.array(z.object({ database: z.string(), age: z.number(), percentTowardsWraparound: z.number() })),
      invalidIndexes: z.array(z.object({ index: z.string(), table: z.string() })),
      duplicateIndexes: z.array(z.object({ table: z.string(), indexes: z.array(z.string()) })),
      sequencesNearLimit: z.array(z.object({ sequence: z.string(), percentUsed: z.number() })),
      warnings: z.array(z.string()),
    }),
    annotations: { title: 'Database health check', ...READ_ONLY },
    handler: async (_args, ctx) => {
      const report = await database.readOnly(ctx.signal, healthReport);
      return { text: renderHealth(report), structured: report };
    },
  }));

  tools.push(defineTool({
    name: 'top_queries',
    description: `Lists the most expensive statements recorded by the pg_stat_statements extension (by total time, mean time or calls).
When the extension is not installed or not loaded, says how to enable it.`,
    input: z.object({
      order_by: z.enum(['total_time', 'mean_time', 'calls']).default('total_time').describe('Sort key.'),
      limit: z.number().int().min(1).max(100).default(10).describe('How many statements.'),
    }),
    output: z.object({ available: z.boolean(), queries: z.array(TOP_QUERY) }),
    annotations: { title: 'Most expensive queries', ...READ_ONLY },
    handler: async ({ order_by, limit }, ctx) => {
      const outcome = await database.readOnly(ctx.signal, async (tx) => {
        const [ext] = await tx.rows<{ schema: string }>(`SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'`);
        if (!ext) return { available: false as const, reason: 'not-installed' as const };
        const order = { total_time: 'total_exec_time', mean_time: 'mean_exec_time', calls: 'calls' }[order_by];
        try {
          const queries = await tx.rows<z.output<typeof TOP_QUERY>>(
            `SELECT query, calls::float8 AS calls, total_exec_time::float8 AS "totalMs", mean_exec_time::float8 AS "meanMs", rows::float8 AS rows,
                    shared_blks_hit::float8 AS "sharedBlocksHit", shared_blks_read::float8 AS "sharedBlocksRead"
               FROM ${pg.escapeIdentifier(ext.schema)}.pg_stat_statements
              WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
              ORDER BY ${order} DESC LIMIT $1`,
            [limit],
          );
          return { available: true as const, queries };
        } catch (error) {
          // 55000: "pg_stat_statements must be loaded via shared_preload_libraries" (the ROLLBACK that follows copes with the aborted transaction).
          if (isDatabaseError(error) && error.code === '55000') return { available: false as const, reason: 'not-loaded' as const };
          throw error;
        }
      });
      if (!outcome.available) {
        const how =
          outcome.reason === 'not-installed'
            ? 'pg_stat_statements is not installed in this database. To enable it: add pg_stat_statements to shared_preload_libraries in postgresql.conf, restart PostgreSQL, then run CREATE EXTENSION pg_stat_statements; as a superuser.'
            : 'pg_stat_statements is installed but not loaded: add pg_stat_statements to shared_preload_libraries in postgresql.conf and restart PostgreSQL.';
        return { text: how, structured: { available: false, queries: [] } };
      }
      const lines = outcome.queries.map(
        (q, i) => `${i + 1}. ${q.calls} calls, total ${q.totalMs.toFixed(1)} ms, mean ${q.meanMs.toFixed(2)} ms, ${q.rows} rows\n   ${q.query.replace(/\s+/g, ' ').slice(0, 500)}`,
      );
      return { text: lines.join('\n') || 'pg_stat_statements has no statements recorded for this database yet.', structured: { available: true, queries: outcome.queries } };
    },
  }));
  return tools;
}
