import { createRequire } from 'node:module';
import { SuiteServer, toolList, namedTargetTools, withApps, type ChangeHub, type SessionInfo } from '@suite/shared';
import type { PostgresConfig } from './config.js';
import { queryTools } from './tools/query.js';
import { executeTools } from './tools/execute.js';
import { schemaTools } from './tools/schema.js';
import { explainTools } from './tools/explain.js';
import { healthTools } from './tools/health.js';
import { recommendIndexTools } from './tools/recommend-indexes.js';
import { gridPageTools } from './tools/grid-page.js';
import { GRID_URI, gridResource } from './resources/grid.js';
import { SCHEMA_VIEW_URI, schemaViewResource } from './resources/schema-view.js';
import { schemaPageTools } from './tools/schema-page.js';
import { registerTableResources } from './resources/tables.js';
import { registerChannelResources } from './resources/channels.js';

export type { PostgresConfig, PostgresLimits } from './config.js';
export { DEFAULT_LIMITS } from './config.js';
export { Database, type DatabaseTarget } from './database.js';
export { ChannelListener } from './listener.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

function instructions(config: PostgresConfig): string {
  const { database, allowWrite, limits } = config;
  const several = config.databases && config.databases.size > 1 ? config.databases : undefined;
  if (several) {
    const list = [...several].map(([name, c]) => `${name} (${c.database.target.database} on ${c.database.target.host}:${c.database.target.port}, ${c.allowWrite ? 'writable' : 'read-only'})`);
    return `Several PostgreSQL databases: ${list.join('; ')}. Every tool takes "database" (default ${[...several.keys()][0]}).
Start with list_tables, then describe_table; query runs one read-only statement (with $1.. params), explain_query and
recommend_indexes help with plans and indexes, database_health and top_queries with diagnostics.
Results are capped at ${limits.maxRows} rows: aggregate or add LIMIT instead of fetching everything.`;
  }
  return `PostgreSQL database ${database.target.database} on ${database.target.host}:${database.target.port}.
Start with list_tables, then describe_table for the tables you need; use query for one read-only statement at a time
(with $1.. params), explain_query to check plans (hypothetical_indexes tries indexes without building them), recommend_indexes for index advice, database_health and top_queries for diagnostics.
Results are capped at ${limits.maxRows} rows: aggregate or add LIMIT instead of fetching everything.${
    allowWrite ? '\nWrites are enabled: execute runs one data-changing statement per call in its own transaction.' : '\nThe server is read-only.'
  }`;
}

// Every tool, built once per configuration and shared by all sessions; read-only mode leaves out
// execute. query's results come with the result grid, the schema tools' with the schema view (hosts
// without apps ignore them: the text answer is the same).
const tools = toolList<PostgresConfig>([
  withApps(queryTools, { query: GRID_URI }),
  gridPageTools,
  withApps(schemaTools, { list_tables: SCHEMA_VIEW_URI, describe_table: SCHEMA_VIEW_URI }),
  schemaPageTools,
  // A plan shows in the result grid as a tree.
  withApps(explainTools, { explain_query: GRID_URI }),
  recommendIndexTools,
  healthTools,
  executeTools,
]);

/** Several databases: each one's tools, merged under a "database" argument. */
const serverTools = namedTargetTools<PostgresConfig>({ argument: 'database', noun: 'database', tools, targets: (config) => config.databases });

/** The apps' resources: one definition each for every session (their HTML is read once per process). */
const grid = gridResource();
const schemaView = schemaViewResource();

export interface ServerOptions {
  session?: SessionInfo;
  /** The process-wide change hub: enables resources/subscribe (LISTEN channels, table schemas). */
  changes?: ChangeHub;
}

/** Builds the server for one session. */
export function buildServer(config: PostgresConfig, options: ServerOptions = {}): SuiteServer {
  const { session, changes } = options;
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: instructions(config),
    ...(changes ? { changes } : {}),
    selection: { readOnly: ![...(config.databases?.values() ?? [config])].some((c) => c.allowWrite) },
    ...(session ? { session } : {}),
  });
  server.tools(serverTools(config));
  // Each database's resources under its own URIs (postgres://host:port/database/...).
  for (const each of config.databases && config.databases.size > 1 ? config.databases.values() : [config]) {
    registerTableResources(server, each);
    registerChannelResources(server, each);
  }
  server.resource(grid);
  server.resource(schemaView);
  return server;
}
