import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, issueNumberField, pageParams, repoParams } from '../params.js';
import { clip, count, listing, nextPage, paging } from '../present.js';

export const getPullRequestFiles = githubTool({
  name: 'get_pull_request_files',
  toolset: 'pull_requests',
  description: 'Lists the files a PR changes.',
  input: z.object({ ...repoParams, pull_number: issueNumberField, ...pageParams }),
  annotations: { title: 'Get PR files', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ owner, repo, pull_number, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.pulls.listFiles({ owner, repo, pull_number, ...page });
    const lines = data.map((f) => `${f.status} ${f.previous_filename ? `${f.previous_filename} -> ` : ''}${f.filename} (+${count(f.additions)} -${count(f.deletions)})`);
    return listing(`Files of ${fullName(owner, repo)}#${pull_number}:`, lines, nextPage(headers.link, page.page));
  },
});

export const getPullRequestDiff = githubTool({
  name: 'get_pull_request_diff',
  toolset: 'pull_requests',
  description: 'The unified diff of a PR, unaltered.',
  input: z.object({ ...repoParams, pull_number: issueNumberField }),
  annotations: { title: 'Get PR diff', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  outputLimit: (limits) => limits.maxDiffChars + 1000,
  run: async ({ owner, repo, pull_number }, { api, config }) => {
    const { data } = await api.rest.pulls.get({ owner, repo, pull_number, mediaType: { format: 'diff' } });
    // A diff is code: never sanitised, only capped.
    const diff = typeof data === 'string' ? data : String(data);
    return diff.trim() ? clip(diff, config.limits.maxDiffChars) : `${fullName(owner, repo)}#${pull_number} changes nothing (empty diff).`;
  },
});
