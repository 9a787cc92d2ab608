/**
 * The result grid (ui://sqlite/grid.html): read_query's rows in the app kit's grid; more rows
 * through the app-only grid_read_page, with the statement and parameters read_query ran.
 */
import { mountGrid } from '@suite/shared/app-kit/grid-view';

mountGrid(
  { name: 'suite-sqlite-grid' },
  {
    pageTool: 'grid_read_page',
    pageArgs: (args, offset, limit) => {
      const query = args.query ?? args.sql;
      return typeof query === 'string' ? { query, ...(args.params !== undefined ? { params: args.params } : {}), offset, limit } : undefined;
    },
  },
);
