import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { SqliteConfig } from '../config.js';
import { GRID_URI } from '../resources/grid.js';
import { hasPragmaWithArguments } from '../sql-keywords.js';
import { PARAMS, ROWS_OUTPUT, callTimeoutMs, requireStatement, statementArguments, statementOf } from '../tool-schemas.js';

/**
 * The result grid's paging: the rows of a read_query statement from `offset` on, for the app only
 * (hosts keep it from the model; clients without apps never see it). The statement runs on the
 * same read-only query processes as read_query, wrapped as `SELECT * FROM (…) LIMIT … OFFSET …`,
 * with the same row, byte, cell and time limits.
 */
export function gridPageTools(config: SqliteConfig): AnyToolDefinition[] {
  const limits = config.database.limits;
  return [
    defineTool({
      name: 'grid_read_page',
      description: `For the result grid app: rows of a read-only SELECT from offset on (at most ${limits.hardMaxRows} rows and ${limits.maxBytes} bytes per page).`,
      input: requireStatement(
        z.object({
          ...statementArguments('The SELECT statement read_query ran'),
          params: PARAMS,
          offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).describe('Rows to skip.'),
          limit: z.number().int().min(1).max(limits.hardMaxRows).describe('Rows to return.'),
        }),
      ),
      output: ROWS_OUTPUT.extend({ offset: z.number().int() }),
      annotations: { title: 'Read a page of rows (grid)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      app: { resourceUri: GRID_URI, visibility: ['app'] },
      handler: async (args, ctx) => {
        const statement = statementOf(args).trim().replace(/;\s*$/, '');
        if (hasPragmaWithArguments(statement) || /^pragma\b/i.test(statement)) {
          throw ToolError.invalidArgument('A PRAGMA result cannot be paged; run it with read_query.');
        }
        // Line breaks around the statement: a trailing -- comment in it cannot swallow the wrapper.
        // One row past the page: the query process then reports `truncated` when more rows exist.
        const sql = `SELECT * FROM (\n${statement}\n) LIMIT ${args.limit + 1} OFFSET ${args.offset}`;
        const result = await config.database.executors().reader.query(
          { sql, params: args.params, maxRows: args.limit, maxBytes: limits.maxBytes, maxCellChars: limits.maxCellChars },
          { timeoutMs: callTimeoutMs(limits, undefined), signal: ctx.signal, label: 'grid_read_page' },
        );
        const structured = { columns: result.columns, rows: result.rows, rowCount: result.rowCount, truncated: result.truncated, offset: args.offset };
        return { text: `${result.rowCount} rows from row ${args.offset + 1}${result.truncated ? ' (cut at the size limit)' : ''}.`, structured };
      },
    }),
  ];
}
