import { formatBytes } from '@suite/shared';
import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, repoParams } from '../params.js';
import { count, listing, nextPage, paging, parts, sizeOf, userLine, userText, when, who } from '../present.js';

export const listReleases = githubTool({
  name: 'list_releases',
  toolset: 'repos',
  description: 'Lists releases, newest first.',
  input: z.object({ ...repoParams, ...pageParams }),
  annotations: { title: 'List releases', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async (args, { api }) => {
    const page = paging(args);
    const { data, headers } = await api.rest.repos.listReleases({ owner: args.owner, repo: args.repo, ...page });
    const lines = data.map((r) => parts(r.tag_name, userLine(r.name), r.draft ? 'draft' : '', r.prerelease ? 'pre-release' : '', when(r.published_at), who(r.author)));
    return listing(`Releases of ${fullName(args.owner, args.repo)}:`, lines, nextPage(headers.link, page.page));
  },
});

export const getLatestRelease = githubTool({
  name: 'get_latest_release',
  toolset: 'repos',
  description: 'The latest release: tag, notes and assets.',
  input: z.object(repoParams),
  annotations: { title: 'Latest release', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async ({ owner, repo }, { api, config }) => {
    const { data: r } = await api.rest.repos.getLatestRelease({ owner, repo });
    return [
      `Latest release of ${fullName(owner, repo)}: ${r.tag_name ?? '(no tag)'}${r.name ? ` "${userLine(r.name)}"` : ''}`,
      parts(`published ${when(r.published_at)}`, `by ${who(r.author)}`, r.prerelease ? 'pre-release' : '', r.html_url),
      `Assets: ${r.assets.length === 0 ? 'none' : r.assets.map((a) => `${userLine(a.name)} (${sizeOf(a.size, formatBytes)}, ${count(a.download_count)} downloads)`).join(', ')}`,
      `Notes:\n${userText(r.body, config.limits.maxTextChars, '(no notes)')}`,
    ].join('\n');
  },
});
