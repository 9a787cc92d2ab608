import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import type { SqliteConfig } from '../config.js';

export const INSIGHTS_URI = 'memo://insights';
const MAX_INSIGHTS = 1000;

export function insightsMemo(insights: readonly string[]): string {
  if (insights.length === 0) return 'No business insights have been recorded yet.\n';
  return ['📊 Business Intelligence Memo 📊', '', 'Key insights discovered:', '', ...insights.map((i) => `- ${i}`), ''].join('\n');
}

export function insightTools(config: SqliteConfig): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [];
  const insights = config.database.insights;
  tools.push(defineTool({
    name: 'append_insight',
    description: `Adds a business insight discovered from the data to the ${INSIGHTS_URI} memo resource.`,
    input: z.object({ insight: z.string().trim().min(1).max(10_000).describe('The insight, in a sentence or two') }),
    output: z.object({ count: z.number().int() }),
    // Read-only in the sense read-only mode protects: it records into this server's own in-memory
    // memo and never touches the database or anything else of the user's, so it stays available
    // (the demo prompt relies on it) when the database is read-only.
    annotations: { title: 'Record an insight', readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ insight }, ctx) => {
      if (insights.length >= MAX_INSIGHTS) insights.shift();
      insights.push(insight);
      ctx.changes.resourceUpdated(INSIGHTS_URI);
      return { text: `Insight added to ${INSIGHTS_URI} (${insights.length} in the memo).`, structured: { count: insights.length } };
    },
  }));
  return tools;
}
