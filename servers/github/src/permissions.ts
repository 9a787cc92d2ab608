import type { ClassicScope, GithubTool, ToolAccess } from './github-tool.js';

/**
 * What each tool needs of a token, from the tools' own definitions: the README's table (a test
 * fails when it is stale) and --check-token's verdicts.
 */

export const TABLE_START = '<!-- permissions-table:start (generated from the tool definitions: UPDATE_README=1 npx vitest run test/permissions.test.ts) -->';
export const TABLE_END = '<!-- permissions-table:end -->';

/** The markdown table of every tool's toolset, fine-grained permission and classic scope. */
export function permissionsTable(tools: readonly GithubTool[]): string {
  const rows = tools.map(({ access }) => `| \`${access.name}\` | ${access.toolset} | ${access.readOnly ? 'R' : 'W'} | ${access.permission} | ${access.scope === 'none' ? 'none' : `\`${access.scope}\``} |`);
  return ['| tool | toolset | | fine-grained permission | classic scope |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Whether a classic token with `scopes` may use a tool: yes, on public repositories only, or no. */
export function classicVerdict(access: Pick<ToolAccess, 'scope' | 'readOnly'>, scopes: ReadonlySet<string>): 'yes' | 'public repositories only' | 'no' {
  const scope: ClassicScope = access.scope;
  if (scope === 'none' || scopes.has(scope)) return 'yes';
  // GitHub: the repo scope grants notifications access too.
  if (scope === 'notifications') return scopes.has('repo') ? 'yes' : 'no';
  // Without repo, public repositories are still readable, and writable with public_repo.
  return access.readOnly || scopes.has('public_repo') ? 'public repositories only' : 'no';
}

/** The fine-grained permission's name and level ("Actions: read" -> ["actions", "read"]), for the ones a probe can check. */
export function permissionParts(access: ToolAccess): { name: string; level: string }[] {
  return access.permission
    .split(/,\s*/)
    .map((part) => /^([A-Za-z ]+):\s*(read|write)$/.exec(part.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ name: m[1]!.trim().toLowerCase(), level: m[2]! }));
}
