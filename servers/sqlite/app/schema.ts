/**
 * The schema view (ui://sqlite/schema.html): the app kit's schema view for list_tables (every table,
 * through the app-only schema_read_page) and describe_table (the table it described).
 */
import { mountSchema } from '@suite/shared/app-kit/schema-view';

mountSchema(
  { name: 'suite-sqlite-schema' },
  {
    pageTool: 'schema_read_page',
    pageArgs: (args, offset) => (typeof args.table_name === 'string' ? { table_name: args.table_name } : { offset }),
  },
);
