import { z } from 'zod';
import { decodeCursor, encodeCursor, defineTool, type AnyToolDefinition } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { describeTable, listSchemas, listTables, renderDescription } from '../catalog.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const TABLE_PAGE = 500;
const IDENTIFIER = z.string().min(1).max(128);

export function schemaTools(config: PostgresConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const { database } = config;

  tools.push(defineTool({
    name: 'list_schemas',
    description: 'Lists the schemas of the database with owner, number of tables/views and comment. System schemas only with include_system.',
    input: z.object({ include_system: z.boolean().default(false).describe('Also list pg_catalog, information_schema and the like.') }),
    output: z.object({ schemas: z.array(z.object({ name: z.string(), owner: z.string(), tables: z.number(), comment: z.string().nullable() })) }),
    annotations: { title: 'List schemas', ...READ_ONLY },
    handler: async ({ include_system }, ctx) => {
      const schemas = await database.readOnly(ctx.signal, (tx) => listSchemas(tx, include_system));
      const text = schemas.map((s) => `${s.name} (owner ${s.owner}, ${s.tables} relations)${s.comment ? ` -- ${s.comment}` : ''}`).join('\n');
      return { text: text || '(no schemas visible)', structured: { schemas } };
    },
  }));

  const tableShape = z.object({
    schema: z.string(),
    name: z.string(),
    kind: z.string(),
    rowEstimate: z.number().nullable(),
    totalBytes: z.number().nullable(),
    comment: z.string().nullable(),
  });
  tools.push(defineTool({
    name: 'list_tables',
    description: `Lists tables, partitioned tables, views, materialized views and foreign tables in every (non-system) schema,
or in one schema, with the planner's row estimate, total size and comment. ${TABLE_PAGE} per page; pass nextCursor back for more.`,
    input: z.object({
      schema: IDENTIFIER.optional().describe('Only this schema (exact, case-sensitive name).'),
      include_system: z.boolean().default(false).describe('Also list pg_catalog and information_schema relations.'),
      cursor: z.string().max(200).optional().describe('nextCursor from a previous call.'),
    }),
    output: z.object({ tables: z.array(tableShape), nextCursor: z.string().optional() }),
    annotations: { title: 'List tables and views', ...READ_ONLY },
    handler: async ({ schema, include_system, cursor }, ctx) => {
      const offset = cursor ? decodeCursor('tables', cursor, z.object({ offset: z.number().int().min(0) })).offset : 0;
      const rows = await database.readOnly(ctx.signal, (tx) => listTables(tx, { ...(schema !== undefined ? { schema } : {}), includeSystem: include_system, limit: TABLE_PAGE + 1, offset }));
      const tables = rows.slice(0, TABLE_PAGE);
      const nextCursor = rows.length > TABLE_PAGE ? encodeCursor('tables', { offset: offset + TABLE_PAGE }) : undefined;
      const lines = tables.map(
        (t) => `${t.schema}.${t.name} [${t.kind}]${t.rowEstimate !== null ? ` ~${t.rowEstimate} rows` : ''}${t.comment ? ` -- ${t.comment}` : ''}`,
      );
      if (nextCursor) lines.push(`(more: call again with cursor ${nextCursor})`);
      return { text: lines.join('\n') || '(no tables)', structured: { tables, ...(nextCursor ? { nextCursor } : {}) } };
    },
  }));

  tools.push(defineTool({
    name: 'describe_table',
    description: `Describes a table, view or materialized view: columns (type, nullability, default, identity, comment),
primary key, foreign keys, indexes, check/unique constraints, comment and view definition.
Give schema and table separately; names are exact and case-sensitive (no quoting needed).`,
    input: z.object({
      table: IDENTIFIER.describe('Table name, exactly as stored (e.g. orders or "Order Items" without quotes).'),
      schema: IDENTIFIER.optional().describe('Schema name; defaults to the first match on search_path.'),
    }),
    output: z.object({
      schema: z.string(),
      name: z.string(),
      kind: z.string(),
      comment: z.string().nullable(),
      rowEstimate: z.number().nullable(),
      columns: z.array(
        z.object({
          name: z.string(),
          type: z.string(),
          nullable: z.boolean(),
          default: z.string().nullable(),
          identity: z.string().nullable(),
          generated: z.string().nullable(),
          comment: z.string().nullable(),
        }),
      ),
      primaryKey: z.array(z.string()),
      foreignKeys: z.array(z.object({ name: z.string(), columns: z.array(z.string()), references: z.string(), definition: z.string() })),
      indexes: z.array(z.object({ name: z.string(), definition: z.string(), unique: z.boolean(), primary: z.boolean(), valid: z.boolean() })),
      constraints: z.array(z.object({ name: z.string(), type: z.string(), definition: z.string() })),
      viewDefinition: z.string().nullable(),
    }),
    annotations: { title: 'Describe a table', ...READ_ONLY },
    handler: async ({ table, schema }, ctx) => {
      const description = await database.readOnly(ctx.signal, (tx) => describeTable(tx, schema, table));
      return { text: renderDescription(description), structured: description };
    },
  }));
  return tools;
}
