import type { Logger } from '@suite/shared';
import type { GithubConfig } from './config.js';
import { GithubClients, type GithubApi } from './github-client.js';
import { httpStatus } from './github-errors.js';
import type { GithubTool } from './github-tool.js';
import { classicVerdict, permissionParts } from './permissions.js';

/** A read a fine-grained permission allows on a repository: what --check-token probes (never a write). */
const PROBES: Readonly<Record<string, (owner: string, repo: string) => string>> = {
  metadata: (o, r) => `/repos/${o}/${r}`,
  contents: (o, r) => `/repos/${o}/${r}/commits?per_page=1`,
  issues: (o, r) => `/repos/${o}/${r}/issues?per_page=1`,
  'pull requests': (o, r) => `/repos/${o}/${r}/pulls?per_page=1`,
  actions: (o, r) => `/repos/${o}/${r}/actions/runs?per_page=1`,
};

/**
 * --check-token: which tools a token can use. A classic token's scopes are in GitHub's
 * x-oauth-scopes header; a fine-grained token's permissions are not published, so with a
 * repository (--check-repo) each read permission is probed with one GET on it, and writes are
 * named but never tried. Every request goes through the same path (and allowlist) as the tools'.
 */
export async function checkToken(config: GithubConfig, tools: readonly GithubTool[], log: Logger, repo?: { owner: string; repo: string }): Promise<string> {
  const clients = new GithubClients(config, log);
  const sections: string[] = [];
  const tokens: [string, string | undefined][] = [['the default token', config.token], ...Object.entries(config.ownerTokens ?? {}).map(([owner, token]): [string, string] => [`the token for ${owner}`, token])];
  for (const [label, token] of tokens) {
    if (token === undefined) {
      sections.push(`${label}: none set (GITHUB_PERSONAL_ACCESS_TOKEN): public data only, 60 requests per hour.`);
      continue;
    }
    sections.push(await checkOne(clients.forToken(token), label, tools, repo));
  }
  return `${sections.join('\n\n')}\n`;
}

async function checkOne(api: GithubApi, label: string, tools: readonly GithubTool[], repo: { owner: string; repo: string } | undefined): Promise<string> {
  let login: string;
  let scopesHeader: string | undefined;
  try {
    const answer = await api.request('GET /user');
    login = answer.data.login;
    scopesHeader = answer.headers['x-oauth-scopes'];
  } catch (error) {
    const status = httpStatus(error);
    return `${label}: GitHub ${status === 401 ? 'rejected it (401): it is wrong, expired or revoked' : `could not be asked (${status ?? 'no answer'})`}.`;
  }
  const lines: string[] = [];
  if (scopesHeader !== undefined) {
    const scopes = new Set(scopesHeader.split(',').map((s) => s.trim()).filter(Boolean));
    lines.push(`${label} acts as @${login}: a classic token with the scopes ${[...scopes].join(', ') || '(none)'}.`);
    for (const { access } of tools) {
      const verdict = classicVerdict(access, scopes);
      lines.push(`${verdict === 'yes' ? 'yes' : verdict === 'no' ? 'no ' : 'public'}  ${access.name}${verdict === 'yes' ? '' : ` (needs the ${access.scope} scope${verdict === 'no' ? '' : ' for private repositories'})`}`);
    }
    return lines.join('\n');
  }
  lines.push(`${label} acts as @${login}: a fine-grained token (or an app's), whose permissions GitHub does not publish.`);
  if (!repo) {
    lines.push('Give --check-repo OWNER/REPO to probe its read permissions there; each tool needs:');
    for (const { access } of tools) lines.push(`?    ${access.name} (${access.permission})`);
    return lines.join('\n');
  }
  const granted = new Map<string, boolean>();
  for (const [name, path] of Object.entries(PROBES)) {
    try {
      await api.request(`GET ${path(repo.owner, repo.repo)}`);
      granted.set(name, true);
    } catch (error) {
      const status = httpStatus(error);
      if (status === 403 || status === 404) granted.set(name, false);
    }
  }
  lines.push(`Read permissions probed on ${repo.owner}/${repo.repo} (writes are never tried):`);
  for (const { access } of tools) {
    const parts = permissionParts(access);
    const reads = parts.map((p) => granted.get(p.name));
    const canRead = parts.length > 0 && reads.every((r) => r === true);
    const cannot = reads.some((r) => r === false);
    const writes = parts.some((p) => p.level === 'write');
    const verdict = cannot ? 'no ' : !canRead ? '?  ' : writes ? '?  ' : 'yes';
    const why = cannot ? ` (needs ${access.permission})` : writes ? ` (needs ${access.permission}: reading works, writing not probed)` : !canRead ? ` (needs ${access.permission}: not probed)` : '';
    lines.push(`${verdict}  ${access.name}${why}`);
  }
  return lines.join('\n');
}
