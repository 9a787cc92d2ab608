import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, issueNumberField, pageParams, positiveInt, repoParams, text } from '../params.js';
import { hiddenNote, listing, loginOf, nextPage, paging, userText, when, who } from '../present.js';
import { filePathField } from '../repo-paths.js';

const reviewComment = z
  .object({
    path: filePathField,
    line: positiveInt,
    body: text,
  });

export const createPullRequestReview = githubTool({
  name: 'create_pull_request_review',
  toolset: 'pull_requests',
  description: 'Reviews a PR; comments go on lines of the new code.',
  input: z.object({
    ...repoParams,
    pull_number: issueNumberField,
    event: z.enum(['APPROVE', 'REQUEST_CHANGES', 'COMMENT']),
    body: z.string().optional(),
    comments: z.array(reviewComment).optional(),
  }),
  annotations: { title: 'Review PR', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number, event, body, comments }, { api }) => {
    const { data } = await api.rest.pulls.createReview({
      owner,
      repo,
      pull_number,
      event,
      ...(body !== undefined ? { body } : {}),
      ...(comments?.length ? { comments } : {}),
    });
    return `Submitted review ${data.id} (${data.state}) on ${fullName(owner, repo)}#${pull_number}${comments?.length ? ` with ${comments.length} comments` : ''}: ${data.html_url}`;
  },
});

export const getPullRequestReviews = githubTool({
  name: 'get_pull_request_reviews',
  toolset: 'pull_requests',
  description: 'Lists the reviews of a PR.',
  input: z.object({ ...repoParams, pull_number: issueNumberField, ...pageParams }),
  annotations: { title: 'Get reviews', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ owner, repo, pull_number, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.pulls.listReviews({ owner, repo, pull_number, ...page });
    const { items, hidden } = await call.trusted(owner, repo, data, (r) => loginOf(r.user));
    const blocks = items.map((r) => `${who(r.user)} ${r.state}${r.submitted_at ? ` at ${when(r.submitted_at)}` : ''}${r.commit_id ? ` on ${r.commit_id.slice(0, 7)}` : ''}:\n${userText(r.body, call.config.limits.maxTextChars)}`);
    return listing(`Reviews of ${fullName(owner, repo)}#${pull_number}:`, blocks.length ? [blocks.join('\n\n')] : [], `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});

export const getPullRequestComments = githubTool({
  name: 'get_pull_request_comments',
  toolset: 'pull_requests',
  description: 'Lists review comments on lines of a PR.',
  input: z.object({ ...repoParams, pull_number: issueNumberField, ...pageParams }),
  annotations: { title: 'Review comments', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ owner, repo, pull_number, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.pulls.listReviewComments({ owner, repo, pull_number, ...page });
    const { items, hidden } = await call.trusted(owner, repo, data, (c) => loginOf(c.user));
    const blocks = items.map((c) => {
      const line = c.line ?? c.original_line ?? c.position;
      return `${who(c.user)} on ${c.path}${line ? `:${line}` : ''} at ${when(c.created_at)}${c.in_reply_to_id ? ` (reply to ${c.in_reply_to_id})` : ''}:\n${userText(c.body, call.config.limits.maxTextChars)}`;
    });
    return listing(`Review comments on ${fullName(owner, repo)}#${pull_number}:`, blocks.length ? [blocks.join('\n\n')] : [], `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});
