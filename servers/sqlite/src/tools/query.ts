import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { SqliteConfig } from '../config.js';
import type { RowsResult } from '../executor.js';
import { renderTable } from '../result-table.js';
import { hasPragmaWithArguments } from '../sql-keywords.js';
import { adviseSqliteIndexes, describeSteps, planSummary, planTree, readSchema } from '../planner.js';
import { PARAMS, ROWS_OUTPUT, callTimeoutMs, maxRowsArg, requireStatement, statementArguments, statementOf, timeoutArg } from '../tool-schemas.js';

/** The text answer: the table, then one line saying how complete it is. */
export function rowsText(result: RowsResult, maxRows: number, hardMaxRows: number): string {
  if (result.columns.length === 0) return 'The statement returned no columns.';
  const parts = [renderTable(result.columns, result.rows), ''];
  const count = `${result.rowCount} row${result.rowCount === 1 ? '' : 's'}`;
  if (!result.truncated) parts.push(`${count}.`);
  else if (result.clippedCells && result.rowCount < maxRows) parts.push(`${count}; truncated: some long values were cut (see "more characters").`);
  else if (result.rowCount < maxRows) parts.push(`${count} shown; truncated: the answer reached its size limit. Select fewer columns or add LIMIT/WHERE.`);
  else parts.push(`${count} shown; truncated: more rows exist. Add WHERE/LIMIT/aggregates${maxRows < hardMaxRows ? `, or pass maxRows up to ${hardMaxRows}` : ''}.`);
  return parts.join('\n');
}

const PLAN_STEP = z.object({
  id: z.number().int(),
  parent: z.number().int(),
  detail: z.string(),
  operation: z.string(),
  table: z.string().nullable(),
  index: z.string().nullable(),
  using: z.string().nullable(),
});

export { planTree } from '../planner.js';

export function queryTools(config: SqliteConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const db = config.database;
  const limits = db.limits;

  tools.push(defineTool({
    name: 'read_query',
    description:
      'Runs one read-only SQL statement (SELECT, WITH … SELECT, VALUES, or a read-only PRAGMA) and returns the rows as a table ' +
      `plus structured {columns, rows, rowCount, truncated}. At most ${limits.defaultMaxRows} rows by default (maxRows up to ${limits.hardMaxRows}). ` +
      'Use ? or :name placeholders with params instead of pasting values into the SQL. Integers beyond 2^53 come back as strings, BLOBs as {"$blob": base64}.',
    input: requireStatement(z.object({ ...statementArguments('One SELECT statement'), params: PARAMS, maxRows: maxRowsArg(limits), timeoutSeconds: timeoutArg(limits) })),
    output: ROWS_OUTPUT,
    annotations: { title: 'Run a read-only query', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const { params, maxRows, timeoutSeconds } = args;
      const sql = statementOf(args);
      refusePragmaArguments(sql);
      const rowCap = maxRows ?? limits.defaultMaxRows;
      const result = await db.executors().reader.query(
        { sql, params, maxRows: rowCap, maxBytes: limits.maxBytes, maxCellChars: limits.maxCellChars },
        { timeoutMs: callTimeoutMs(limits, timeoutSeconds), signal: ctx.signal, label: 'read_query' },
      );
      return {
        text: rowsText(result, rowCap, limits.hardMaxRows),
        structured: { columns: result.columns, rows: result.rows, rowCount: result.rowCount, truncated: result.truncated },
      };
    },
  }));

  tools.push(defineTool({
    name: 'explain_query',
    description:
      'Shows how SQLite would run a statement (EXPLAIN QUERY PLAN) as an indented tree, without running it: each step with the table it reads ' +
      'and the index it uses (or that it scans every row), then a summary of indexes used and full scans.',
    input: requireStatement(z.object(statementArguments('The statement to explain'))),
    output: z.object({ plan: z.array(PLAN_STEP) }),
    annotations: { title: 'Explain a query plan', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const sql = statementOf(args);
      refusePragmaArguments(sql);
      if (/^\s*explain\b/i.test(sql)) throw ToolError.invalidArgument('Give the statement without EXPLAIN; explain_query adds EXPLAIN QUERY PLAN itself.');
      const { plan } = await db.executors().reader.explain(sql, { timeoutMs: limits.timeoutMs, signal: ctx.signal, label: 'explain_query' });
      const steps = describeSteps(plan);
      return { text: `${planTree(plan)}\n\n${planSummary(steps)}`, structured: { plan: steps } };
    },
  }));

  tools.push(defineTool({
    name: 'recommend_indexes',
    description:
      'Recommends indexes for one statement: candidates from the columns it names on the tables its plan scans, each tried by creating it in a ' +
      'scratch in-memory copy of the schema (with the sqlite_stat1 statistics) and planning again; a greedy search keeps those that remove scans. ' +
      'Never creates an index in the database (with --allow-write, run the DDL through write_query if you decide to).',
    input: requireStatement(
      z.object({
        ...statementArguments('The statement to tune'),
        params: PARAMS,
        max_indexes: z.number().int().min(1).max(10).default(3).describe('At most this many recommendations.'),
      }),
    ),
    output: z.object({
      recommendations: z.array(z.object({ ddl: z.string(), table: z.string(), columns: z.array(z.string()) })),
      planBefore: z.array(PLAN_STEP),
      planAfter: z.array(PLAN_STEP),
      weightBefore: z.number(),
      weightAfter: z.number(),
      candidatesTried: z.number(),
      skipped: z.array(z.string()),
    }),
    annotations: { title: 'Recommend indexes (tried in a scratch copy, nothing created)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args) => {
      const sql = statementOf(args);
      refusePragmaArguments(sql);
      if (/^\s*explain\b/i.test(sql)) throw ToolError.invalidArgument('Give the statement without EXPLAIN.');
      // Only the scratch copy ever sees the statement, behind EXPLAIN QUERY PLAN (which runs nothing);
      // prepare() refuses a second statement.
      const copy = db.catalogQuery(readSchema);
      const advice = adviseSqliteIndexes(copy, sql, args.params, args.max_indexes);
      const lines: string[] = [];
      if (advice.recommendations.length === 0) lines.push('No index would remove a scan from this plan.');
      else {
        lines.push('Recommended indexes (tried in a scratch in-memory copy of the schema; none created):', '', '| # | index | table | columns |', '|---|---|---|---|');
        advice.recommendations.forEach((r, i) => lines.push(`| ${i + 1} | ${r.ddl} | ${r.table} | ${r.columns.join(', ')} |`));
      }
      lines.push('', 'Plan now:', planTree(advice.planBefore), planSummary(advice.planBefore));
      if (advice.recommendations.length) lines.push('', 'Plan with the recommended indexes:', planTree(advice.planAfter), planSummary(advice.planAfter));
      lines.push('', `Estimated rows read: ${Math.round(advice.weightBefore)} -> ${Math.round(advice.weightAfter)} (SQLite reports no costs: from sqlite_stat1, or its default of 1,000,000 rows a table without statistics); ${advice.candidatesTried} candidates tried.`);
      if (advice.skipped.length) lines.push(`Not copied into the scratch schema: ${advice.skipped.join('; ')}.`);
      return { text: lines.join('\n'), structured: advice };
    },
  }));
  return tools;
}

function refusePragmaArguments(sql: string): void {
  if (hasPragmaWithArguments(sql)) {
    throw ToolError.accessDenied(
      'Only a bare PRAGMA read (PRAGMA name) is allowed here; for pragmas with arguments use the table-valued form, e.g. SELECT * FROM pragma_table_info(\'t\').',
    );
  }
}
