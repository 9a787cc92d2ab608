import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { pageParams, text } from '../params.js';
import { count, listing, nextPage, paging } from '../present.js';

export const searchUsers = githubTool({
  name: 'search_users',
  toolset: 'users',
  description: 'Searches users.',
  input: z.object({ q: text, ...pageParams }),
  annotations: { title: 'Search users', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'no special permission',
  scope: 'none',
  run: async ({ q, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.search.users({ q, ...page });
    const lines = data.items.map((u) => `@${u.login} (${u.type}) ${u.html_url}`);
    return listing(`${count(data.total_count)} users match${data.incomplete_results ? ' (incomplete)' : ''}:`, lines, nextPage(headers.link, page.page));
  },
});
