import { schemaViewResource as appKitSchemaView, schemaViewUri, type ResourceDefinition } from '@suite/shared';

/** The schema view app: list_tables and describe_table name it; built to dist/apps/schema.html. */
export const SCHEMA_VIEW_URI = schemaViewUri('sqlite');

export function schemaViewResource(): ResourceDefinition {
  return appKitSchemaView('sqlite', import.meta.url);
}
