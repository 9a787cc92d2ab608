import { z } from 'zod';
import type { RestEndpointMethodTypes } from '@octokit/rest';
import { githubTool } from '../github-tool.js';
import { fullName, issueNumberField, pageParams, repoParams, text } from '../params.js';
import { count, hiddenNote, labelNames, listing, loginOf, nextPage, paging, parts, userLine, userText, when, who } from '../present.js';
import { branchField } from '../repo-paths.js';
import { issueLine, trustedSearchItems, withKind } from './issues.js';

type PullRequest = RestEndpointMethodTypes['pulls']['get']['response']['data'];
type PullRequestItem = RestEndpointMethodTypes['pulls']['list']['response']['data'][number];

/** `user:branch` when the head lives in another repository (a fork), else the branch. */
function headLabel(pr: PullRequest | PullRequestItem, owner: string): string {
  const headOwner = pr.head.repo?.owner?.login ?? pr.head.user?.login;
  return headOwner && headOwner.toLowerCase() !== owner.toLowerCase() ? `${headOwner}:${pr.head.ref}` : pr.head.ref;
}

function pullRequestLine(pr: PullRequestItem, owner: string): string {
  return parts(
    `#${pr.number} [${pr.state}${pr.draft ? ', draft' : ''}${pr.merged_at ? ', merged' : ''}] ${userLine(pr.title)}`,
    who(pr.user),
    `${headLabel(pr, owner)} -> ${pr.base.ref}`,
    `updated ${when(pr.updated_at)}`,
  );
}

export const createPullRequest = githubTool({
  name: 'create_pull_request',
  toolset: 'pull_requests',
  description: 'Opens a PR from head (branch or user:branch) into base.',
  input: z.object({
    ...repoParams,
    title: text,
    head: text,
    base: branchField.optional(),
    body: z.string().optional(),
    draft: z.boolean().optional(),
  }),
  annotations: { title: 'Open PR', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, base, ...fields }, call) => {
    const into = base ?? (await call.defaultBranch(owner, repo));
    const { data } = await call.api.rest.pulls.create({ owner, repo, base: into, ...fields });
    return `Opened ${fullName(owner, repo)}#${data.number} (${fields.head} -> ${into}${data.draft ? ', draft' : ''}): ${data.html_url}`;
  },
});

export const getPullRequest = githubTool({
  name: 'get_pull_request',
  toolset: 'pull_requests',
  description: 'A PR: branches, state, mergeability and body.',
  input: z.object({ ...repoParams, pull_number: issueNumberField }),
  annotations: { title: 'Get PR', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ owner, repo, pull_number }, call) => {
    const { data: pr } = await call.api.rest.pulls.get({ owner, repo, pull_number });
    await call.requireTrusted(owner, repo, loginOf(pr.user), `pull request #${pull_number}`);
    const labels = labelNames(pr.labels);
    return [
      `${fullName(owner, repo)}#${pr.number}: ${userLine(pr.title)}`,
      parts(`state ${pr.merged ? 'merged' : pr.state}${pr.draft ? ' (draft)' : ''}`, `by ${who(pr.user)}`, `${headLabel(pr, owner)} (${pr.head.sha.slice(0, 7)}) -> ${pr.base.ref}`, `created ${when(pr.created_at)}`, `updated ${when(pr.updated_at)}`),
      parts(
        pr.merged ? `merged ${when(pr.merged_at)} by ${who(pr.merged_by)}` : `mergeable: ${pr.mergeable === null || pr.mergeable === undefined ? 'unknown yet' : pr.mergeable}${pr.mergeable_state ? ` (${pr.mergeable_state})` : ''}`,
        `${count(pr.commits)} commits`,
        `${count(pr.changed_files)} files, +${count(pr.additions)} -${count(pr.deletions)}`,
        `${count(pr.comments)} comments, ${count(pr.review_comments)} review comments`,
      ),
      labels.length ? `labels: ${labels.join(', ')}` : '',
      pr.html_url,
      `Body:\n${userText(pr.body, call.config.limits.maxTextChars, '(no description)')}`,
    ]
      .filter(Boolean)
      .join('\n');
  },
});

export const listPullRequests = githubTool({
  name: 'list_pull_requests',
  toolset: 'pull_requests',
  description: 'Lists pull requests.',
  input: z.object({
    ...repoParams,
    state: z.enum(['open', 'closed', 'all']).optional(),
    head: text.optional(),
    base: text.optional(),
    ...pageParams,
  }),
  annotations: { title: 'List PRs', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ owner, repo, state, head, base, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.pulls.list({
      owner,
      repo,
      ...page,
      ...(state ? { state } : {}),
      ...(head ? { head } : {}),
      ...(base ? { base } : {}),
    });
    const { items, hidden } = await call.trusted(owner, repo, data, (pr) => loginOf(pr.user));
    return listing(`Pull requests of ${fullName(owner, repo)} (${state ?? 'open'}):`, items.map((pr) => pullRequestLine(pr, owner)), `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});

export const searchPullRequests = githubTool({
  name: 'search_pull_requests',
  toolset: 'pull_requests',
  description: 'Searches pull requests.',
  input: z.object({ q: text, ...pageParams }),
  annotations: { title: 'Search PRs', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ q, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.search.issuesAndPullRequests({ q: withKind(q, 'pr'), ...page });
    const { items, hidden } = await trustedSearchItems(call, data.items);
    return listing(`${count(data.total_count)} pull requests match${data.incomplete_results ? ' (incomplete)' : ''}:`, items.map(({ item, repo }) => issueLine(item, repo)), `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});

export const mergePullRequest = githubTool({
  name: 'merge_pull_request',
  toolset: 'pull_requests',
  description: 'Merges a PR; sha guards against a moved head.',
  input: z.object({
    ...repoParams,
    pull_number: issueNumberField,
    merge_method: z.enum(['merge', 'squash', 'rebase']).optional(),
    commit_message: z.string().optional(),
    sha: z.string().optional(),
  }),
  annotations: { title: 'Merge PR', readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  permission: 'Contents: write',
  run: async ({ owner, repo, pull_number, ...fields }, { api }) => {
    const options = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const { data } = await api.rest.pulls.merge({ owner, repo, pull_number, ...options });
    return `Merged ${fullName(owner, repo)}#${pull_number}${fields.merge_method ? ` (${fields.merge_method})` : ''}: ${data.sha?.slice(0, 7) ?? ''} ${userLine(data.message)}`.trim();
  },
});

export const updatePullRequestBranch = githubTool({
  name: 'update_pull_request_branch',
  toolset: 'pull_requests',
  description: 'Merges base into the PR branch.',
  input: z.object({ ...repoParams, pull_number: issueNumberField, expected_head_sha: z.string().optional() }),
  annotations: { title: 'Update PR branch', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number, expected_head_sha }, { api }) => {
    const { data } = await api.rest.pulls.updateBranch({ owner, repo, pull_number, ...(expected_head_sha ? { expected_head_sha } : {}) });
    return `${fullName(owner, repo)}#${pull_number}: ${userLine(data.message).replace(/[.\s]+$/, '') || 'update requested'}; GitHub updates the branch in the background.`;
  },
});
