import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, repoParams } from '../params.js';
import { listing, nextPage, paging, userLine } from '../present.js';

export const listLabels = githubTool({
  name: 'list_labels',
  toolset: 'issues',
  description: 'Lists labels.',
  input: z.object({ ...repoParams, ...pageParams }),
  annotations: { title: 'List labels', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: read',
  run: async (args, { api }) => {
    const page = paging(args);
    const { data, headers } = await api.rest.issues.listLabelsForRepo({ owner: args.owner, repo: args.repo, ...page });
    const lines = data.map((l) => `${userLine(l.name)}${l.description ? `: ${userLine(l.description)}` : ''}`);
    return listing(`Labels of ${fullName(args.owner, args.repo)}:`, lines, nextPage(headers.link, page.page));
  },
});
