import { appResource, type ResourceDefinition } from '@suite/shared';

/** The schema view app: list_tables and describe_table name it; built to dist/apps/schema.html. */
export const SCHEMA_VIEW_URI = 'ui://sqlite/schema.html';

export function schemaViewResource(): ResourceDefinition {
  return appResource({
    uri: SCHEMA_VIEW_URI,
    name: 'schema-view',
    title: 'Schema view',
    description: 'The MCP App hosts show with list_tables and describe_table: tables with their columns, types, primary keys and NOT NULL, and the foreign keys between them.',
    from: import.meta.url,
    file: 'schema.html',
  });
}
