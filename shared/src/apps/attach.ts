import type { AnyToolDefinition } from '../server/tools.js';

/**
 * Names the app shown with some of a server's tools (`{ read_query: 'ui://sqlite/grid.html' }`):
 * the tools are declared without it, and the server decides which app goes with which.
 */
export function withApps<C>(make: (config: C) => AnyToolDefinition[], apps: Readonly<Record<string, string>>): (config: C) => AnyToolDefinition[] {
  return (config) => make(config).map((tool) => (apps[tool.name] !== undefined ? { ...tool, app: { resourceUri: apps[tool.name]! } } : tool));
}
