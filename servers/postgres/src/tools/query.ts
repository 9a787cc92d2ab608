import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { QUERY_OUTPUT, shapeResult } from '../results.js';

/** A bound parameter: JSON scalars, arrays (PostgreSQL arrays) and objects (json/jsonb). */
export const PARAM_VALUE = z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())]);

export const SQL_INPUT = z.string().min(1).max(1_000_000);

export function queryTools(config: PostgresConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const { database, limits } = config;
  tools.push(defineTool({
    name: 'query',
    // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
    longRunning: true,
    description: `Runs ONE read-only SQL statement (SELECT, WITH, VALUES, SHOW, EXPLAIN, TABLE) and returns its rows.
Runs inside a READ ONLY transaction that is always rolled back; writes, DDL and multiple statements are refused.
Use $1, $2, ... placeholders with "params" instead of pasting values into the SQL.
At most ${limits.maxRows} rows / ${Math.round(limits.maxBytes / 1024)} KiB come back; "truncated" says when more existed.
Values: bigint and numeric as strings, bytea as base64, timestamps as ISO 8601, json/jsonb and arrays as JSON.`,
    input: z.object({
      sql: SQL_INPUT.describe('One SQL statement. Placeholders $1, $2, ... take their values from params.'),
      params: z.array(PARAM_VALUE).max(65535).optional().describe('Values for $1, $2, ... in order.'),
    }),
    output: QUERY_OUTPUT,
    annotations: { title: 'Run a read-only SQL query', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ sql, params }, ctx) =>
      database.readOnly(
        ctx.signal,
        async (tx) => {
          const result = await tx.bounded(sql, params ?? []);
          return shapeResult(tx, result, limits);
        },
        sql,
      ),
  }));
  return tools;
}
