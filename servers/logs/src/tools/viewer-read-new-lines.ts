import type { AnyToolDefinition } from '@suite/shared';
import type { LogsConfig } from '../config.js';
import { VIEWER_URI } from '../resources/viewer.js';
import { readNewLines } from './read-new-lines.js';

/**
 * The log viewer's live mode: read_new_lines for the app only (hosts keep it from the model, and
 * clients without apps never see it). Same arguments, answers, rotation handling and limits.
 */
export function viewerReadNewLines(config: LogsConfig): AnyToolDefinition {
  const tool = readNewLines(config) as unknown as AnyToolDefinition;
  return {
    ...tool,
    name: 'viewer_read_new_lines',
    description: `For the log viewer app: ${tool.description}`,
    annotations: { ...tool.annotations, title: 'Follow a log (viewer)' },
    app: { resourceUri: VIEWER_URI, visibility: ['app'] },
  };
}
