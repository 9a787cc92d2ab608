import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition, type RequestContext } from '@suite/shared';
import type { SqliteConfig } from '../config.js';
import type { SqliteDatabase } from '../database.js';
import type { ChangeResult, Params, RowsResult } from '../executor.js';
import { isCreateTable, statementKind } from '../sql-keywords.js';
import { rowsText } from './query.js';
import { CELL, PARAMS, callTimeoutMs, requireStatement, statementArguments, statementOf, timeoutArg } from '../tool-schemas.js';

const WRITE_OUTPUT = z.object({
  changes: z.number().int(),
  lastInsertRowid: CELL.optional(),
  columns: z.array(z.string()).optional(),
  rows: z.array(z.array(CELL)).optional(),
  truncated: z.boolean().optional(),
});

/** ATTACH and VACUUM INTO reach outside the database file, so each needs its own flag. */
function refuseUnlessAllowed(db: SqliteDatabase, sql: string): void {
  const kind = statementKind(sql);
  if (kind === 'attach' && !db.options.allowAttach) {
    throw ToolError.accessDenied('ATTACH and DETACH are disabled on this server (start it with --allow-attach to allow them).');
  }
  if (kind === 'vacuum-into' && !db.options.allowVacuumInto) {
    throw ToolError.accessDenied('VACUUM INTO is disabled on this server (start it with --allow-vacuum-into to allow it).');
  }
}

function schemaVersion(db: SqliteDatabase): number {
  return db.catalogQuery((c) => (c.prepare('SELECT schema_version FROM pragma_schema_version').get() as { schema_version: number }).schema_version);
}

async function runWrite(
  config: SqliteConfig,
  sql: string,
  params: Params,
  timeoutSeconds: number | undefined,
  ctx: RequestContext,
  label: string,
): Promise<RowsResult | ChangeResult> {
  const db = config.database;
  refuseUnlessAllowed(db, sql);
  const { writer, identity } = db.executors();
  if (!writer) throw ToolError.accessDenied('This server is read-only.');
  const before = schemaVersion(db);
  const limits = db.limits;
  let result: RowsResult | ChangeResult;
  try {
    result = await writer.write(
      { sql, params, maxRows: limits.defaultMaxRows, maxBytes: limits.maxBytes, maxCellChars: limits.maxCellChars },
      { timeoutMs: callTimeoutMs(limits, timeoutSeconds), signal: ctx.signal, label },
    );
  } catch (error) {
    // SQLite refuses to write to a file moved since it was opened (SQLITE_READONLY_DBMOVED), which
    // would otherwise read as "attempt to write a readonly database".
    if (!db.stillAt(identity)) {
      throw ToolError.conflict(
        `The database file was deleted or replaced while ${label} ran, and SQLite refused to write to the old one: nothing was written. ` +
          'Run it again if the change belongs in the database now at the configured path.',
      );
    }
    throw error;
  }
  if (!db.stillAt(identity)) {
    throw ToolError.conflict(
      `${label} ran, but the database file was deleted or replaced while it did: the change went to the old file, which is no longer at the configured path. ` +
        'Check the data now there and run it again if it belongs in it.',
    );
  }
  // A new or dropped table changes resources/list; content changes reach subscribers through the file watcher.
  if (schemaVersion(db) !== before) ctx.changes.resourceListChanged();
  return result;
}

function isRows(result: RowsResult | ChangeResult): result is RowsResult {
  return 'rows' in result;
}

export function writeTools(config: SqliteConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  // A read-only database has no writers at all (beside writable ones, the tool list still shows them for those).
  if (!config.database.writable) return tools;
  const limits = config.database.limits;

  tools.push(defineTool({
    name: 'write_query',
    description:
      'Runs one statement that changes the database: INSERT, UPDATE, DELETE (with optional RETURNING), or DDL such as ALTER/DROP/CREATE INDEX. ' +
      'Use placeholders with params for values. SELECT belongs in read_query.',
    input: requireStatement(z.object({ ...statementArguments('One INSERT/UPDATE/DELETE or DDL statement'), params: PARAMS, timeoutSeconds: timeoutArg(limits) })),
    output: WRITE_OUTPUT,
    annotations: { title: 'Change the database', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async (args, ctx) => {
      const result = await runWrite(config, statementOf(args), args.params, args.timeoutSeconds, ctx, 'write_query');
      if (isRows(result)) {
        const changes = result.changes ?? result.rowCount;
        return {
          text: `${changes} row${changes === 1 ? '' : 's'} changed.\n\n${rowsText(result, limits.defaultMaxRows, limits.defaultMaxRows)}`,
          structured: { changes, columns: result.columns, rows: result.rows, truncated: result.truncated },
        };
      }
      return {
        text: `${result.changes} row${result.changes === 1 ? '' : 's'} changed.${result.changes > 0 && result.lastInsertRowid !== 0 ? ` Last inserted rowid: ${String(result.lastInsertRowid)}.` : ''}`,
        structured: { changes: result.changes, lastInsertRowid: result.lastInsertRowid },
      };
    },
  }));

  tools.push(defineTool({
    name: 'create_table',
    description: 'Creates a table from a CREATE TABLE statement (nothing else is accepted).',
    input: requireStatement(z.object(statementArguments('A CREATE TABLE statement'))),
    output: z.object({ created: z.boolean() }),
    annotations: { title: 'Create a table', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async (args, ctx) => {
      const query = statementOf(args);
      if (!isCreateTable(query)) throw ToolError.invalidArgument('create_table accepts only a CREATE TABLE statement; use write_query for other changes.');
      await runWrite(config, query, undefined, undefined, ctx, 'create_table');
      return { text: 'Table created.', structured: { created: true } };
    },
  }));
  return tools;
}
