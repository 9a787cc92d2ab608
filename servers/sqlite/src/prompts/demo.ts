import { z } from 'zod';
import type { SuiteServer } from '@suite/shared';
import type { SqliteConfig } from '../config.js';
import { INSIGHTS_URI } from '../tools/insights.js';

// A module constant: a zod schema built in the register function would be built again for every HTTP session.
const ARGS = z.object({ topic: z.string().min(1).max(200).describe('The business topic to base the demo on, e.g. "coffee shop" or "bike rental"') });

export function registerDemoPrompt(server: SuiteServer, config: SqliteConfig): void {
  const writable = config.database.writable;
  server.prompt({
    name: 'mcp-demo',
    title: 'SQLite demo',
    description: 'A guided demo: build (or explore) a small database about a business topic, analyse it, and record insights.',
    args: ARGS,
    get: async ({ topic }) => {
      const setup = writable
        ? `1. Design two or three tables for a business about "${topic}" and create them with create_table, then fill them with about 20 plausible rows each using write_query.`
        : `1. This server is read-only, so start from the data that exists: call list_tables and describe_table and relate what you find to "${topic}".`;
      const text = [
        `You are guiding a user through a short demo of this SQLite MCP server, themed on: ${topic}.`,
        '',
        'Work step by step and keep each step short; stop and ask the user which direction to take after each one.',
        setup,
        '2. Propose three questions a manager of this business would ask, and answer each with read_query (show the SQL you ran).',
        '3. When the data shows something worth remembering, record it with append_insight; the memo is readable as the ' + INSIGHTS_URI + ' resource.',
        '4. Use explain_query on one of your queries and explain, in plain words, how SQLite runs it.',
        '5. Finish with a short summary of the insights memo.',
      ].join('\n');
      return { description: `SQLite demo about ${topic}`, messages: [{ role: 'user', content: { type: 'text', text } }] };
    },
  });
}
