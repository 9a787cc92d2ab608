import { z } from 'zod';
import type { PromptMessage, SuiteServer } from '@suite/shared';
import { completeTableName, describeTable } from '../catalog.js';
import type { SqliteConfig } from '../config.js';
import { describeText } from '../tools/schema.js';

// A module constant: a zod schema built in the register function would be built again for every HTTP session.
const ARGS = z.object({
  table: z.string().min(1).max(1024).optional().describe('A table or view to focus on (completion offers the names)'),
  goal: z.string().max(2000).optional().describe('What you want to find out'),
});

export function registerExplorePrompt(server: SuiteServer, config: SqliteConfig): void {
  const db = config.database;
  server.prompt({
    name: 'explore-database',
    title: 'Explore this database',
    description: 'Starts an exploration of the database with its schema attached; optionally focused on one table.',
    args: ARGS,
    complete: { table: (value) => completeTableName(db, value) },
    get: async ({ table, goal }, ctx) => {
      const focus = table ? describeTable(db, table) : undefined;
      const intro = [
        'Here is the schema of a SQLite database (attached). Explore it with the read_query, describe_table and explain_query tools.',
        focus ? `Focus on ${focus.type} ${focus.name}: what each column holds, how it relates to other tables, and what questions it can answer.` : 'Start by summarising what the database is about and how the tables relate.',
        goal ? `The goal: ${goal}` : 'Then suggest a few useful questions and answer them with queries (show the SQL).',
        'Keep queries bounded (LIMIT, aggregates) and use parameters for values.',
      ].join('\n');
      // The schema resource itself, embedded by URI: the client can show it and fetch it again.
      const messages: PromptMessage[] = (await ctx.embedResource(db.schemaUri)).map((content) => ({ role: 'user', content }));
      if (focus) messages.push({ role: 'user', content: { type: 'text', text: describeText(focus) } });
      messages.push({ role: 'user', content: { type: 'text', text: intro } });
      return { description: focus ? `Explore ${focus.name}` : 'Explore the database', messages };
    },
  });
}
