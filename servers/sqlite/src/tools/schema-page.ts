import { z } from 'zod';
import { SCHEMA_PAGE_ARGS, SCHEMA_PAGE_OUTPUT, defineTool, schemaPage, type AnyToolDefinition } from '@suite/shared';
import { schemaTables } from '../catalog.js';
import type { SqliteConfig } from '../config.js';
import { SCHEMA_VIEW_URI } from '../resources/schema-view.js';

/**
 * The schema view's data: tables with columns and foreign keys, for the app only (hosts keep it
 * from the model; clients without apps never see it). Read from the same read-only catalog
 * connection as list_tables and describe_table, a page within the server's byte budget.
 */
export function schemaPageTools(config: SqliteConfig): AnyToolDefinition[] {
  const db = config.database;
  return [
    defineTool({
      name: 'schema_read_page',
      description: 'For the schema view app: tables and views with their columns (type, NOT NULL, primary key) and foreign keys, from offset on, or the one table named.',
      input: z.object({
        table_name: z.string().min(1).max(1024).optional().describe('Only this table or view, as list_tables shows it.'),
        ...SCHEMA_PAGE_ARGS,
      }),
      output: SCHEMA_PAGE_OUTPUT,
      annotations: { title: 'Read the schema (schema view)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      app: { resourceUri: SCHEMA_VIEW_URI, visibility: ['app'] },
      handler: async ({ table_name, offset, limit }) => {
        const read = schemaTables(db, { ...(table_name !== undefined ? { table: table_name } : {}), offset, limit });
        const { page, text } = schemaPage(read.slice(0, limit), { offset: table_name !== undefined ? 0 : offset, more: read.length > limit, maxBytes: db.limits.maxBytes });
        return { text, structured: page };
      },
    }),
  ];
}
