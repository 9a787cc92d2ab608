import { createRequire } from 'node:module';
import { SuiteServer, toolList, namedTargetTools, withApps, type ChangeHub, type SessionInfo } from '@suite/shared';
import type { SqliteConfig } from './config.js';
import { registerDemoPrompt } from './prompts/demo.js';
import { registerExplorePrompt } from './prompts/explore.js';
import { registerInsightsResource } from './resources/insights.js';
import { registerSchemaResources } from './resources/schema.js';
import { insightTools } from './tools/insights.js';
import { queryTools } from './tools/query.js';
import { schemaTools } from './tools/schema.js';
import { writeTools } from './tools/write.js';
import { gridPageTools } from './tools/grid-page.js';
import { GRID_URI, gridResource } from './resources/grid.js';
import { SCHEMA_VIEW_URI, schemaViewResource } from './resources/schema-view.js';
import { schemaPageTools } from './tools/schema-page.js';

export type { SqliteConfig } from './config.js';
export { SqliteDatabase, DEFAULT_LIMITS, type SqliteLimits, type SqliteOptions } from './database.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

function instructions(config: SqliteConfig): string {
  const several = config.databases && config.databases.size > 1 ? config.databases : undefined;
  if (several) {
    const list = [...several].map(([name, c]) => `${name} (${c.database.writable ? 'writable' : 'read-only'})`);
    return `Queries several SQLite databases: ${list.join(', ')}. Every tool takes "database" (default ${[...several.keys()][0]}).
Start with list_tables and describe_table, then read_query with ? or :name placeholders and params. Results are
capped (truncated: true tells you more rows exist); prefer aggregates and LIMIT.`;
  }
  const mode = config.database.writable
    ? 'Changes are allowed through write_query and create_table; read_query stays read-only.'
    : 'The database is read-only: only reads are possible.';
  return `Queries one SQLite database. Start with list_tables and describe_table, then read_query with ? or :name
placeholders and params. Results are capped (truncated: true tells you more rows exist); prefer aggregates
and LIMIT. ${mode}`;
}

/** The apps' resources: one definition each for every session (their HTML is read once per process). */
const grid = gridResource();
const schemaView = schemaViewResource();

// Every tool, built once per configuration and shared by all sessions; a read-only database leaves
// out the writers. read_query's results come with the result grid, the schema tools' with the schema view (hosts
// without apps ignore them: the text answer is the same).
const tools = toolList<SqliteConfig>([
  // explain_query's plan shows in the result grid as a tree.
  withApps(queryTools, { read_query: GRID_URI, explain_query: GRID_URI }),
  gridPageTools,
  withApps(schemaTools, { list_tables: SCHEMA_VIEW_URI, describe_table: SCHEMA_VIEW_URI }),
  schemaPageTools,
  writeTools,
  insightTools,
]);

/** Several databases: each one's tools, merged under a "database" argument. */
const serverTools = namedTargetTools<SqliteConfig>({ argument: 'database', noun: 'database', tools, targets: (config) => config.databases });

export interface ServerOptions {
  session?: SessionInfo;
  /** The process-wide change hub: enables resources/subscribe. */
  changes?: ChangeHub;
}

/** Builds the server for one session; the database (and its query processes) is shared. */
export function buildServer(config: SqliteConfig, options: ServerOptions = {}): SuiteServer {
  const { session, changes } = options;
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: instructions(config),
    ...(changes ? { changes } : {}),
    // A database opened read-only exposes no tool that writes (its readOnlyHint is false).
    selection: { readOnly: ![...(config.databases?.values() ?? [config])].some((c) => c.database.writable) },
    ...(session ? { session } : {}),
  });
  server.tools(serverTools(config));
  const several = config.databases !== undefined && config.databases.size > 1;
  for (const each of several ? config.databases!.values() : [config]) registerSchemaResources(server, each, several);
  registerInsightsResource(server, config);
  server.resource(grid);
  server.resource(schemaView);
  registerDemoPrompt(server, config);
  registerExplorePrompt(server, config);
  return server;
}
