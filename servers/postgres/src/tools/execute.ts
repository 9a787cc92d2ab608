import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { QUERY_OUTPUT, shapeResult } from '../results.js';
import { PARAM_VALUE, SQL_INPUT } from './query.js';

/** Registered only with --allow-write. */
export function executeTools(config: PostgresConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  // A read-only database has no execute at all (beside writable ones, the tool list still shows it for them).
  if (!config.allowWrite) return tools;
  const { database, limits } = config;
  tools.push(defineTool({
    name: 'execute',
    description: `Runs ONE SQL statement that may change data or schema (INSERT, UPDATE, DELETE, CREATE, ALTER, DROP, ...),
in its own transaction, committed when it succeeds and rolled back when it fails. Multiple statements are refused.
Statements that cannot run inside a transaction block (VACUUM, CREATE DATABASE, CREATE INDEX CONCURRENTLY) fail.
Use $1, $2, ... with "params" for values. RETURNING rows come back like query results.`,
    input: z.object({
      sql: SQL_INPUT.describe('One SQL statement.'),
      params: z.array(PARAM_VALUE).max(65535).optional().describe('Values for $1, $2, ... in order.'),
    }),
    output: QUERY_OUTPUT,
    annotations: { title: 'Execute a SQL statement that may write', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async ({ sql, params }, ctx) =>
      database.readWrite(
        ctx.signal,
        async (tx) => {
          // INSERT/UPDATE/DELETE ... RETURNING run to completion at the first fetch (PostgreSQL keeps
          // the rows in the portal), so a cut answer still means a complete write.
          const result = await tx.bounded(sql, params ?? []);
          return shapeResult(tx, result, limits);
        },
        sql,
      ),
  }));
  return tools;
}
