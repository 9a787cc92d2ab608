import { z } from 'zod';
import { ToolError, decodeCursor, encodeCursor, type SuiteServer } from '@suite/shared';
import type { PostgresConfig } from '../config.js';
import { describeTable, listSchemas, listTables } from '../catalog.js';
import { baseUri, tableSchemaUri } from './uris.js';

const PAGE = 200;

/** Table schema resources for every table and view, with completion of schema and table names. */
export function registerTableResources(server: SuiteServer, config: PostgresConfig): void {
  const { database } = config;
  const target = database.target;
  server.resourceTemplate({
    uriTemplate: `${baseUri(target)}/tables/{schema}/{table}/schema`,
    name: config.name === undefined ? 'table-schema' : `table-schema (${config.name})`,
    title: 'Table schema',
    description: 'Columns, keys, indexes, constraints and comments of a table or view, as JSON.',
    mimeType: 'application/json',
    async read(uri, variables, ctx) {
      const schema = variables.schema;
      const table = variables.table;
      if (!schema || !table) throw ToolError.invalidArgument(`Malformed table resource URI: ${uri}`);
      const description = await database.readOnly(ctx.signal, (tx) => describeTable(tx, schema, table));
      return { uri, mimeType: 'application/json', text: JSON.stringify(description, null, 2) };
    },
    async list(cursor, ctx) {
      const offset = cursor ? decodeCursor('table-resources', cursor, z.object({ offset: z.number().int().min(0) })).offset : 0;
      const rows = await database.readOnly(ctx.signal, (tx) => listTables(tx, { includeSystem: false, limit: PAGE + 1, offset }));
      return {
        resources: rows.slice(0, PAGE).map((t) => ({
          uri: tableSchemaUri(target, t.schema, t.name),
          name: `${t.schema}.${t.name}`,
          title: `${t.kind} ${t.schema}.${t.name}`,
          ...(t.comment ? { description: t.comment } : {}),
          mimeType: 'application/json',
        })),
        ...(rows.length > PAGE ? { nextCursor: encodeCursor('table-resources', { offset: offset + PAGE }) } : {}),
      };
    },
    complete: {
      schema: async (value, _context, ctx) => {
        const schemas = await database.readOnly(ctx.signal, (tx) => listSchemas(tx, false));
        return schemas.map((s) => s.name).filter((name) => name.startsWith(value));
      },
      table: async (value, context, ctx) => {
        const schema = context.arguments.schema;
        const tables = await database.readOnly(ctx.signal, (tx) =>
          listTables(tx, { ...(schema ? { schema } : {}), includeSystem: false, limit: 1000 }),
        );
        return [...new Set(tables.map((t) => t.name).filter((name) => name.startsWith(value)))];
      },
    },
  });
}
