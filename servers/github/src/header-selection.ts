import { listValue, type SessionInfo, type ToolSelection } from '@suite/shared';
import { TOOLSET_NAMES, type GithubConfig } from './config.js';
import { buildServer } from './server.js';

/**
 * Over HTTP, a client may pick its session's tools by header, as github-mcp-server's remote server
 * lets it: `X-MCP-Toolsets` (toolset names, `all`, `default`), `X-MCP-Tools` (tool names) and
 * `X-MCP-Readonly` (true). Headers only narrow what the operator offers: a session gets the tools
 * it asks for that the operator's selection registers (with --dynamic-toolsets, any toolset's),
 * read-only if either says so, and --repos and --lockdown always apply. Unknown names select
 * nothing. Without those headers, the operator's selection stands.
 */
export function sessionSelection(config: GithubConfig, operator: ToolSelection, session: SessionInfo): ToolSelection {
  const headers = session.headers ?? {};
  const toolsets = listValue(headers['x-mcp-toolsets']);
  const tools = listValue(headers['x-mcp-tools']);
  const readOnly = operator.readOnly === true || /^(1|true|yes|on)$/i.test(headers['x-mcp-readonly']?.trim() ?? '');
  if (!toolsets && !tools) return readOnly === (operator.readOnly === true) ? operator : { ...operator, readOnly };
  const offered = new Set(toolNames(config, operator.dynamic ? { toolsets: ['all'], readOnly } : { ...operator, readOnly, dynamic: false }));
  const knownToolsets = new Set<string>([...TOOLSET_NAMES, 'all', 'default']);
  const knownTools = new Set(toolNames(config, { toolsets: ['all'] }));
  const wanted = toolNames(config, {
    toolsets: (toolsets ?? []).filter((name) => knownToolsets.has(name)),
    tools: (tools ?? []).filter((name) => knownTools.has(name)),
    readOnly,
  });
  return { toolsets: [], tools: wanted.filter((name) => offered.has(name)), readOnly, dynamic: false };
}


/** The tools a selection registers (a server built to be asked, never connected). */
function toolNames(config: GithubConfig, selection: ToolSelection): string[] {
  return buildServer(config, selection).toolNames;
}
