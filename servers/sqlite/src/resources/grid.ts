import { appResource, type ResourceDefinition } from '@suite/shared';

/** The result grid app: read_query names it; built to dist/apps/grid.html. */
export const GRID_URI = 'ui://sqlite/grid.html';

export function gridResource(): ResourceDefinition {
  return appResource({
    uri: GRID_URI,
    name: 'result-grid',
    title: 'Result grid',
    description: 'The MCP App hosts show with read_query: the rows in a grid with sortable, resizable columns, NULL, BLOBs, JSON and long text shown as what they are, and paging.',
    from: import.meta.url,
    file: 'grid.html',
  });
}
