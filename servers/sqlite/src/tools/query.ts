import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { SqliteConfig } from '../config.js';
import type { RowsResult } from '../executor.js';
import { renderTable } from '../result-table.js';
import { hasPragmaWithArguments } from '../sql-keywords.js';
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
    description: 'Shows how SQLite would run a statement (EXPLAIN QUERY PLAN) as an indented tree, without running it: which indexes it uses and where it scans.',
    input: requireStatement(z.object(statementArguments('The statement to explain'))),
    output: z.object({ plan: z.array(z.object({ id: z.number().int(), parent: z.number().int(), detail: z.string() })) }),
    annotations: { title: 'Explain a query plan', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async (args, ctx) => {
      const sql = statementOf(args);
      refusePragmaArguments(sql);
      if (/^\s*explain\b/i.test(sql)) throw ToolError.invalidArgument('Give the statement without EXPLAIN; explain_query adds EXPLAIN QUERY PLAN itself.');
      const { plan } = await db.executors().reader.explain(sql, { timeoutMs: limits.timeoutMs, signal: ctx.signal, label: 'explain_query' });
      return { text: planTree(plan), structured: { plan } };
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

/** EXPLAIN QUERY PLAN rows (id, parent) as an indented tree. */
export function planTree(plan: { id: number; parent: number; detail: string }[]): string {
  if (plan.length === 0) return '(no plan: the statement does not read any table)';
  const children = new Map<number, typeof plan>();
  for (const step of plan) children.set(step.parent, [...(children.get(step.parent) ?? []), step]);
  const lines: string[] = ['QUERY PLAN'];
  const walk = (parent: number, prefix: string, seen: Set<number>): void => {
    const kids = children.get(parent) ?? [];
    kids.forEach((step, i) => {
      const last = i === kids.length - 1;
      lines.push(`${prefix}${last ? '`--' : '|--'}${step.detail}`);
      if (!seen.has(step.id)) walk(step.id, `${prefix}${last ? '   ' : '|  '}`, new Set([...seen, step.id]));
    });
  };
  walk(0, '', new Set([0]));
  return lines.join('\n');
}
