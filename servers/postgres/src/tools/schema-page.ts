import { z } from 'zod';
import { SCHEMA_PAGE_ARGS, SCHEMA_PAGE_OUTPUT, defineTool, schemaPage, type AnyToolDefinition } from '@suite/shared';
import { schemaTables } from '../catalog.js';
import type { PostgresConfig } from '../config.js';
import { SCHEMA_VIEW_URI } from '../resources/schema-view.js';

const IDENTIFIER = z.string().min(1).max(128);

/**
 * The schema view's data: tables with columns and foreign keys, for the app only (hosts keep it
 * from the model; clients without apps never see it). Read in a READ ONLY transaction like
 * list_tables and describe_table, with the same statement timeout, a page within the byte cap.
 */
export function schemaPageTools(config: PostgresConfig): AnyToolDefinition[] {
  const { database, limits } = config;
  return [
    defineTool({
      name: 'schema_read_page',
      description: 'For the schema view app: tables and views with their columns (type, NOT NULL, primary key) and foreign keys, from offset on in every non-system schema or in one, or the one table named.',
      input: z.object({
        schema: IDENTIFIER.optional().describe('Only this schema (exact, case-sensitive name).'),
        table: IDENTIFIER.optional().describe('Only this table (exact name); with schema, in that schema.'),
        ...SCHEMA_PAGE_ARGS,
      }),
      output: SCHEMA_PAGE_OUTPUT,
      annotations: { title: 'Read the schema (schema view)', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      app: { resourceUri: SCHEMA_VIEW_URI, visibility: ['app'] },
      handler: async ({ schema, table, offset, limit }, ctx) => {
        const read = await database.readOnly(ctx.signal, (tx) =>
          schemaTables(tx, { ...(schema !== undefined ? { schema } : {}), ...(table !== undefined ? { table } : {}), offset, limit }),
        );
        const { page, text } = schemaPage(read.slice(0, limit), { offset: table !== undefined ? 0 : offset, more: read.length > limit, maxBytes: limits.maxBytes });
        return { text, structured: page };
      },
    }),
  ];
}
