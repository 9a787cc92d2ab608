import { z } from 'zod';
import pg from 'pg';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import type { Transaction } from '../database.js';
import { isDatabaseError } from '../errors.js';
import { adviseIndexes, type AdvisorReport, type WorkloadQuery } from '../index-advisor.js';
import { formatBytes } from './explain.js';
import { PARAM_VALUE, SQL_INPUT } from './query.js';

const QUERY_REPORT = z.object({
  query: z.string(),
  source: z.enum(['argument', 'pg_stat_statements']),
  weight: z.number(),
  costBefore: z.number().nullable(),
  costAfter: z.number().nullable(),
  planBefore: z.string().nullable(),
  planAfter: z.string().nullable(),
  error: z.string().optional(),
});

const RECOMMENDATION = z.object({
  ddl: z.string(),
  table: z.string(),
  columns: z.array(z.string()),
  estimatedBytes: z.number(),
  queriesHelped: z.array(z.number()),
  costSaved: z.number(),
});

/** Statements a plan can be asked for (pg_stat_statements also records utility statements). */
const PLANNABLE = /^\s*(select|with|insert|update|delete|table|values)\b/i;

/** The recorded workload: the top statements of this database by total execution time. */
async function recordedWorkload(tx: Transaction, top: number): Promise<WorkloadQuery[]> {
  const [ext] = await tx.rows<{ schema: string }>(`SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements'`);
  const how =
    'Give the queries to tune in "sql" or "queries" instead, or enable pg_stat_statements: add it to shared_preload_libraries in postgresql.conf, restart PostgreSQL, and run CREATE EXTENSION pg_stat_statements; as a superuser.';
  if (!ext) throw ToolError.unavailable(`pg_stat_statements is not installed in this database, so there is no recorded workload. ${how}`);
  try {
    const rows = await tx.rows<{ query: string; calls: number }>(
      `SELECT query, calls::float8 AS calls FROM ${pg.escapeIdentifier(ext.schema)}.pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query IS NOT NULL
        ORDER BY total_exec_time DESC LIMIT $1`,
      [top * 3],
    );
    return rows
      .filter((row) => PLANNABLE.test(row.query.replace(/^\s*(--[^\n]*\n|\/\*[\s\S]*?\*\/)*/g, '')) && !/\bhypopg|pg_stat_statements\b/i.test(row.query))
      .slice(0, top)
      .map((row) => ({ sql: row.query, params: [], weight: Math.max(1, row.calls), generic: /\$\d/.test(row.query), source: 'pg_stat_statements' as const }));
  } catch (error) {
    if (isDatabaseError(error) && error.code === '55000') throw ToolError.unavailable(`pg_stat_statements is installed but not loaded. ${how}`);
    throw error;
  }
}

function renderAdvice(report: AdvisorReport): string {
  const lines: string[] = [];
  const cost = (value: number | null): string => (value === null ? '-' : value.toFixed(2));
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  if (report.recommendations.length === 0) {
    lines.push('No index would lower the estimated cost enough: the plans below are already the best these candidates allow.');
  } else {
    lines.push(`Recommended indexes (hypothetical: costed with hypopg, none created; budget ${formatBytes(report.budgetBytes)}):`, '');
    lines.push('| # | index | estimated size | queries helped | workload cost saved |', '|---|---|---|---|---|');
    for (const [i, r] of report.recommendations.entries()) {
      lines.push(`| ${i + 1} | ${cell(r.ddl)} | ${formatBytes(r.estimatedBytes)} | ${r.queriesHelped.length ? r.queriesHelped.map((q) => `#${q}`).join(', ') : '-'} | ${r.costSaved.toFixed(2)} |`);
    }
    lines.push(
      '',
      'On a busy production table, build with CREATE INDEX CONCURRENTLY (outside a transaction); the execute tool (--allow-write) runs the plain form.',
    );
  }
  lines.push('', '| # | query | cost before | cost after | plan before | plan after |', '|---|---|---|---|---|---|');
  for (const [i, q] of report.queries.entries()) {
    const text = q.query.length > 120 ? `${q.query.slice(0, 120)}...` : q.query;
    if (q.error) lines.push(`| ${i + 1} | ${cell(text)} | - | - | not planned: ${cell(q.error.split('\n')[0] ?? '')} | |`);
    else lines.push(`| ${i + 1} | ${cell(text)} | ${cost(q.costBefore)} | ${cost(q.costAfter)} | ${cell(q.planBefore ?? '')} | ${cell(q.planAfter ?? '')} |`);
  }
  lines.push('', `Workload cost ${report.workloadCostBefore.toFixed(2)} -> ${report.workloadCostAfter.toFixed(2)} (planner estimates, weighted by calls); ${report.candidatesTried} hypothetical indexes tried.`);
  return lines.join('\n');
}

export function recommendIndexTools(config: PostgresConfig): AnyToolDefinition[] {
  const { database } = config;
  return [
    defineTool({
      name: 'recommend_indexes',
      // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
      longRunning: true,
      description: `Recommends indexes for one query ("sql"), a list of queries ("queries"), or, with neither, the workload recorded by
pg_stat_statements (the "top" statements by total time). Candidates come from the columns the plans filter, join and sort on;
each is costed by the planner as a hypothetical index (hypopg extension) and a greedy search keeps the ones that lower the
estimated cost most, within a size budget. Answers a table: index DDL, estimated size, cost before and after per query and the
queries each index helps. Never creates an index (with --allow-write, run the DDL through execute if you decide to).`,
      input: z.object({
        sql: SQL_INPUT.optional().describe('One query to tune.'),
        params: z.array(PARAM_VALUE).max(65535).optional().describe('Values for $1, $2, ... of sql.'),
        queries: z.array(SQL_INPUT.max(100_000)).min(1).max(50).optional().describe('Several queries to tune together (a workload); their $n, if any, are planned generically.'),
        top: z.number().int().min(1).max(100).default(20).describe('Without sql or queries: how many of pg_stat_statements\' statements (by total time) make the workload.'),
        max_indexes: z.number().int().min(1).max(20).default(5).describe('At most this many recommendations.'),
        max_size_mb: z.number().positive().max(10_000_000).optional().describe('Size budget for all recommended indexes together, in MiB (default: the size of the tables involved).'),
        min_improvement: z.number().min(0.01).max(0.99).default(0.1).describe('The share of a query\'s estimated cost an index must save to count (0.1 = 10%).'),
      }),
      output: z.object({
        recommendations: z.array(RECOMMENDATION),
        queries: z.array(QUERY_REPORT),
        budgetBytes: z.number(),
        workloadCostBefore: z.number(),
        workloadCostAfter: z.number(),
        candidatesTried: z.number(),
      }),
      annotations: { title: 'Recommend indexes (hypothetical, nothing created)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: async ({ sql, params, queries, top, max_indexes, max_size_mb, min_improvement }, ctx) => {
        if (sql !== undefined && queries !== undefined) throw ToolError.invalidArgument('Give either sql (one query) or queries (a workload), not both.');
        if (params !== undefined && sql === undefined) throw ToolError.invalidArgument('params belong to sql; queries are planned generically.');
        const report = await database.readOnly(ctx.signal, async (tx) => {
          const workload: WorkloadQuery[] =
            sql !== undefined
              ? [{ sql, params: params ?? [], weight: 1, generic: false, source: 'argument' }]
              : queries !== undefined
                ? queries.map((q) => ({ sql: q, params: [], weight: 1, generic: /\$\d/.test(q), source: 'argument' as const }))
                : await recordedWorkload(tx, top);
          if (workload.length === 0) throw ToolError.invalidArgument('pg_stat_statements has no plannable statements recorded for this database yet: give the queries in "sql" or "queries".');
          return adviseIndexes(tx, workload, {
            maxIndexes: max_indexes,
            budgetBytes: max_size_mb === undefined ? undefined : Math.round(max_size_mb * 1024 * 1024),
            minImprovement: min_improvement,
          });
        });
        return { text: renderAdvice(report), structured: report };
      },
    }),
  ];
}
