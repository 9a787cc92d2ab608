import { appResource, type ResourceDefinition } from '@suite/shared';

/** The log viewer app: tail_log, search_logs and log_stats name it; built to dist/apps/viewer.html. */
export const VIEWER_URI = 'ui://logs/viewer.html';

export function viewerResource(): ResourceDefinition {
  return appResource({
    uri: VIEWER_URI,
    name: 'log-viewer',
    title: 'Log viewer',
    description: 'The MCP App hosts show with tail_log, search_logs and log_stats: a level histogram over time, the lines with their levels, filters and a live mode.',
    from: import.meta.url,
    file: 'viewer.html',
  });
}
