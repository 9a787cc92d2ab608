import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { pageParams, text } from '../params.js';
import { count, listing, nextPage, paging } from '../present.js';

export const searchCode = githubTool({
  name: 'search_code',
  toolset: 'repos',
  description: 'Searches code (file paths).',
  input: z.object({ q: text, ...pageParams }),
  annotations: { title: 'Search code', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async (args, { api }) => {
    const page = paging(args);
    const { data, headers } = await api.rest.search.code({ q: args.q, ...page });
    const lines = data.items.map((item) => `${item.repository.full_name}:/${item.path}`);
    return listing(`${count(data.total_count)} files match${data.incomplete_results ? ' (incomplete: GitHub timed out)' : ''}:`, lines, nextPage(headers.link, page.page));
  },
});
