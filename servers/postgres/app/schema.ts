/**
 * The schema view (ui://postgres/schema.html): the app kit's schema view for list_tables (its
 * schema's tables, or every non-system schema's, through the app-only schema_read_page) and
 * describe_table (the table it described).
 */
import { mountSchema } from '@suite/shared/app-kit/schema-view';

mountSchema(
  { name: 'suite-postgres-schema' },
  {
    pageTool: 'schema_read_page',
    pageArgs: (args, offset) => {
      const schema = typeof args.schema === 'string' ? { schema: args.schema } : {};
      return typeof args.table === 'string' ? { ...schema, table: args.table } : { ...schema, offset };
    },
  },
);
