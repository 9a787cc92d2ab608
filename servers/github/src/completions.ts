import type { Completer } from '@suite/shared';
import type { GithubSession } from './github-session.js';
import { isOwnerName, isRepoName } from './params.js';
import { RepoAllowlist } from './repo-allowlist.js';

const LIMIT = 100;

function byPrefix(values: Iterable<string>, typed: string): string[] {
  const prefix = typed.toLowerCase();
  return [...new Set(values)].filter((v) => v.toLowerCase().startsWith(prefix)).sort((a, b) => a.localeCompare(b));
}

/**
 * Completion of owner, repository and branch names, shared by the resource templates and the
 * prompts. Lookups go through the session like any call (the allowlist filters what they list);
 * a failure completes nothing (the shared layer logs it).
 */
export function completers(github: GithubSession): { owner: Completer; repo: Completer; branch: Completer } {
  const allowlist = github.config.repos ? new RepoAllowlist(github.config.repos) : undefined;
  return {
    owner: async (typed, _context, ctx) => {
      if (allowlist) return byPrefix(allowlist.owners(), typed);
      return github.run(ctx, 'no special permission', async (call) => {
        const [login, orgs] = await Promise.all([call.viewerLogin(), call.api.rest.orgs.listForAuthenticatedUser({ per_page: LIMIT })]);
        return byPrefix([login, ...orgs.data.map((o) => o.login)], typed);
      });
    },
    repo: async (typed, context, ctx) => {
      const owner = context.arguments.owner ?? '';
      if (!isOwnerName(owner)) return [];
      const exact = allowlist?.patterns.filter((p) => p.owner === owner.toLowerCase() && p.repo !== '*').map((p) => p.repo) ?? [];
      if (allowlist && !allowlist.allowsWholeOwner(owner)) return byPrefix(exact, typed);
      return github.run(ctx, 'Metadata: read', async ({ api, viewerLogin }) => {
        const names: string[] = [];
        if (owner.toLowerCase() === (await viewerLogin()).toLowerCase()) {
          names.push(...(await api.rest.repos.listForAuthenticatedUser({ affiliation: 'owner', sort: 'updated', per_page: LIMIT })).data.map((r) => r.name));
        } else {
          names.push(...(await api.rest.repos.listForUser({ username: owner, sort: 'updated', per_page: LIMIT })).data.map((r) => r.name));
        }
        return byPrefix([...names, ...exact], typed);
      });
    },
    branch: async (typed, context, ctx) => {
      const { owner = '', repo = '' } = context.arguments;
      if (!isOwnerName(owner) || !isRepoName(repo)) return [];
      return github.run(ctx, 'Contents: read', async ({ api }) => byPrefix((await api.rest.repos.listBranches({ owner, repo, per_page: LIMIT })).data.map((b) => b.name), typed));
    },
  };
}
