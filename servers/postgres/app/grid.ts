/**
 * The result grid (ui://postgres/grid.html): query's rows in the app kit's grid, columns typed as
 * PostgreSQL types them; more rows through the app-only grid_read_page, with the statement and
 * parameters query ran.
 */
import { mountGrid } from '@suite/shared/app-kit/grid-view';

mountGrid(
  { name: 'suite-postgres-grid' },
  {
    pageTool: 'grid_read_page',
    pageArgs: (args, offset, limit) =>
      typeof args.sql === 'string' ? { sql: args.sql, ...(args.params !== undefined ? { params: args.params } : {}), offset, limit } : undefined,
  },
);
