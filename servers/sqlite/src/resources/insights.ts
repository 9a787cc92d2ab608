import type { SuiteServer } from '@suite/shared';
import type { SqliteConfig } from '../config.js';
import { INSIGHTS_URI, insightsMemo } from '../tools/insights.js';

export function registerInsightsResource(server: SuiteServer, config: SqliteConfig): void {
  server.resource({
    uri: INSIGHTS_URI,
    name: 'insights',
    title: 'Business insights memo',
    description: 'Insights recorded with append_insight during this server run.',
    mimeType: 'text/plain',
    read: async () => ({ uri: INSIGHTS_URI, mimeType: 'text/plain', text: insightsMemo(config.database.insights) }),
    // append_insight publishes the change itself; there is nothing to watch.
    subscribe: async () => ({}),
  });
}
