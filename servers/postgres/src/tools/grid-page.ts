import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { GRID_URI } from '../resources/grid.js';
import { QUERY_OUTPUT, shapeResult } from '../results.js';
import { PARAM_VALUE, SQL_INPUT } from './query.js';

/**
 * The result grid's paging: the rows of a query statement from `offset` on, for the app only (hosts
 * keep it from the model; clients without apps never see it). The statement runs exactly as
 * `query` runs it (a READ ONLY transaction, always rolled back, one statement, the row and byte
 * caps), wrapped as `SELECT * FROM (…) LIMIT … OFFSET …`.
 */
export function gridPageTools(config: PostgresConfig): AnyToolDefinition[] {
  const { database, limits } = config;
  return [
    defineTool({
      name: 'grid_read_page',
      description: `For the result grid app: rows of a read-only SELECT from offset on (at most ${limits.maxRows} rows per page).`,
      input: z.object({
        sql: SQL_INPUT.describe('The SELECT statement query ran.'),
        params: z.array(PARAM_VALUE).max(65535).optional().describe('Its values for $1, $2, ...'),
        offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('Rows to skip.'),
        limit: z.number().int().min(1).max(limits.maxRows).describe('Rows to return.'),
      }),
      output: QUERY_OUTPUT.extend({ offset: z.number().int() }),
      annotations: { title: 'Read a page of rows (grid)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      app: { resourceUri: GRID_URI, visibility: ['app'] },
      handler: async ({ sql, params, offset, limit }, ctx) => {
        const statement = sql.trim().replace(/;\s*$/, '');
        if (/^(show|explain)\b/i.test(statement)) throw ToolError.invalidArgument('A SHOW or EXPLAIN result cannot be paged; run it with query.');
        // Line breaks around the statement: a trailing -- comment cannot swallow the wrapper. One row
        // past the page, so that `truncated` says whether more exist.
        const wrapped = `SELECT * FROM (\n${statement}\n) AS grid_page LIMIT ${limit + 1} OFFSET ${offset}`;
        return database.readOnly(
          ctx.signal,
          async (tx) => {
            const result = await tx.bounded(wrapped, params ?? []);
            if (result.rows.length > limit) {
              result.rows.length = limit;
              result.truncated = true;
            }
            const shaped = await shapeResult(tx, result, limits);
            return { text: `${shaped.structured.rowCount} rows from row ${offset + 1}${shaped.structured.truncated ? '; more exist' : ''}.`, structured: { ...shaped.structured, offset } };
          },
          wrapped,
        );
      },
    }),
  ];
}
