import type { SuiteServer } from '@suite/shared';
import { completeTableName, describeTable, listTables, requireTable, schemaSql } from '../catalog.js';
import type { SqliteConfig } from '../config.js';
import { databaseChangeSource } from './change-source.js';

export function registerSchemaResources(server: SuiteServer, config: SqliteConfig, several = false): void {
  const db = config.database;

  server.resource({
    uri: db.schemaUri,
    name: several ? `schema (${db.name})` : 'schema',
    title: `Schema of ${db.name}`,
    description: 'Every CREATE statement of the database (tables, views, indexes, triggers). Subscribe to hear when the database changes.',
    mimeType: 'application/sql',
    read: async () => ({ uri: db.schemaUri, mimeType: 'application/sql', text: schemaSql(db) }),
    subscribe: async () => databaseChangeSource(db.file),
  });

  const prefix = `sqlite://${db.name}/tables/`;
  server.resourceTemplate({
    uriTemplate: `${prefix}{table}`,
    name: several ? `table (${db.name})` : 'table',
    title: 'One table or view',
    description: 'Columns, indexes, foreign keys and the CREATE statement of one table or view, as JSON.',
    mimeType: 'application/json',
    read: async (uri, vars) => {
      const description = describeTable(db, vars.table ?? '');
      return { uri, mimeType: 'application/json', text: JSON.stringify(description, null, 2) };
    },
    list: async () => ({
      resources: listTables(db).map((t) => ({
        uri: db.tableUri(t.name),
        name: t.name,
        title: `${t.type === 'view' ? 'View' : 'Table'} ${t.name}`,
        mimeType: 'application/json',
      })),
    }),
    complete: { table: (value) => completeTableName(db, value) },
    subscribe: async (uri, vars) => {
      requireTable(db, vars.table ?? '');
      return databaseChangeSource(db.file);
    },
  });
}
