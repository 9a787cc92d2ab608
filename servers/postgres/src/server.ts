import { createRequire } from 'node:module';
import { SuiteServer, toolList, type AnyToolDefinition, type ChangeHub, type SessionInfo } from '@suite/shared';
import type { PostgresConfig } from './config.js';
import { queryTools } from './tools/query.js';
import { executeTools } from './tools/execute.js';
import { schemaTools } from './tools/schema.js';
import { explainTools } from './tools/explain.js';
import { healthTools } from './tools/health.js';
import { gridPageTools } from './tools/grid-page.js';
import { GRID_URI, gridResource } from './resources/grid.js';
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
  return `PostgreSQL database ${database.target.database} on ${database.target.host}:${database.target.port}.
Start with list_tables, then describe_table for the tables you need; use query for one read-only statement at a time
(with $1.. params), explain_query to check plans, database_health and top_queries for diagnostics.
Results are capped at ${limits.maxRows} rows: aggregate or add LIMIT instead of fetching everything.${
    allowWrite ? '\nWrites are enabled: execute runs one data-changing statement per call in its own transaction.' : '\nThe server is read-only.'
  }`;
}

/** Every tool, built once per configuration and shared by all sessions; read-only mode leaves out execute. */
const tools = toolList<PostgresConfig>([withGrid(queryTools), gridPageTools, schemaTools, explainTools, healthTools, executeTools]);

/** query's results come with the result grid app (hosts without apps ignore it: the text answer is the same). */
function withGrid(make: (config: PostgresConfig) => AnyToolDefinition[]): (config: PostgresConfig) => AnyToolDefinition[] {
  return (config) => make(config).map((tool) => (tool.name === 'query' ? { ...tool, app: { resourceUri: GRID_URI } } : tool));
}

/** The grid's resource: one definition for every session (its HTML is read once per process). */
const grid = gridResource();

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
    selection: { readOnly: !config.allowWrite },
    ...(session ? { session } : {}),
  });
  server.tools(tools(config));
  registerTableResources(server, config);
  registerChannelResources(server, config);
  server.resource(grid);
  return server;
}
