import type { ResourceDefinition } from '../server/resources.js';
import { appResource } from './resource.js';

// Apart from schema.ts, whose types the app kit's browser code reads: this part needs Node.

/**
 * The schema view's UI resource (`ui://<server>/schema.html`), for a server whose package build
 * writes dist/apps/schema.html from the app kit's view; `from` is `import.meta.url` of one of its modules.
 */
export function schemaViewResource(server: string, from: string): ResourceDefinition {
  return appResource({
    uri: schemaViewUri(server),
    name: 'schema-view',
    title: 'Schema view',
    description: 'The MCP App hosts show with list_tables and describe_table: tables with their columns, types, primary keys and NOT NULL, and the foreign keys between them.',
    from,
    file: 'schema.html',
  });
}

export const schemaViewUri = (server: string): string => `ui://${server}/schema.html`;
