import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, ownerField, pageParams, repoField, repoParams, text } from '../params.js';
import { count, listing, nextPage, paging, parts, userLine, when } from '../present.js';

export const searchRepositories = githubTool({
  name: 'search_repositories',
  toolset: 'repos',
  description: 'Searches repositories.',
  input: z.object({ q: text, ...pageParams }),
  annotations: { title: 'Search repos', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Metadata: read',
  run: async (args, { api }) => {
    const page = paging(args);
    const { data, headers } = await api.rest.search.repos({ q: args.q, ...page });
    const lines = data.items.map((r) =>
      parts(`${r.full_name}${r.private ? ' (private)' : ''}${r.fork ? ' (fork)' : ''}`, `★${count(r.stargazers_count)}`, r.language ?? '', userLine(r.description), `updated ${when(r.updated_at)}`),
    );
    return listing(`${count(data.total_count)} repositories match${data.incomplete_results ? ' (incomplete: GitHub timed out)' : ''}:`, lines, nextPage(headers.link, page.page));
  },
});

export const createRepository = githubTool({
  name: 'create_repository',
  toolset: 'repos',
  description: 'Creates a repository.',
  input: z.object({
    name: repoField,
    description: z.string().optional(),
    private: z.boolean().optional(),
    auto_init: z.boolean().optional(),
    organization: ownerField.optional(),
  }),
  aliases: { autoInit: 'auto_init' },
  annotations: { title: 'Create repo', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Administration: write',
  run: async ({ name, description, private: isPrivate, auto_init, organization }, { api }) => {
    const body = { name, ...(description !== undefined ? { description } : {}), ...(isPrivate !== undefined ? { private: isPrivate } : {}), ...(auto_init !== undefined ? { auto_init } : {}) };
    const { data } = organization ? await api.rest.repos.createInOrg({ org: organization, ...body }) : await api.rest.repos.createForAuthenticatedUser(body);
    return `Created ${data.full_name} (${data.private ? 'private' : 'public'}, default branch ${data.default_branch}): ${data.html_url}`;
  },
});

export const forkRepository = githubTool({
  name: 'fork_repository',
  toolset: 'repos',
  description: 'Forks a repository.',
  input: z.object({ ...repoParams, organization: ownerField.optional() }),
  annotations: { title: 'Fork repo', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Administration: write',
  run: async ({ owner, repo, organization }, { api }) => {
    const { data } = await api.rest.repos.createFork({ owner, repo, ...(organization ? { organization } : {}) });
    return `Forked ${fullName(owner, repo)} to ${data.full_name}: ${data.html_url} (GitHub may take a few seconds to copy the contents).`;
  },
});
