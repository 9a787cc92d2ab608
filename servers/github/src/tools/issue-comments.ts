import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, issueNumberField, pageParams, repoParams, text } from '../params.js';
import { hiddenNote, listing, loginOf, nextPage, paging, userText, when, who } from '../present.js';

export const addIssueComment = githubTool({
  name: 'add_issue_comment',
  toolset: 'issues',
  description: 'Comments on an issue or PR.',
  input: z.object({ ...repoParams, issue_number: issueNumberField, body: text }),
  annotations: { title: 'Add comment', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Issues: write',
  run: async ({ owner, repo, issue_number, body }, { api }) => {
    const { data } = await api.rest.issues.createComment({ owner, repo, issue_number, body });
    return `Commented on ${fullName(owner, repo)}#${issue_number}: ${data.html_url}`;
  },
});

export const listIssueComments = githubTool({
  name: 'list_issue_comments',
  toolset: 'issues',
  description: 'Lists comments of an issue or PR.',
  input: z.object({ ...repoParams, issue_number: issueNumberField, ...pageParams }),
  annotations: { title: 'List comments', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: read',
  run: async ({ owner, repo, issue_number, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.issues.listComments({ owner, repo, issue_number, ...page });
    const { items, hidden } = await call.trusted(owner, repo, data, (c) => loginOf(c.user));
    const blocks = items.map((c) => `${who(c.user)} at ${when(c.created_at)}${c.author_association && c.author_association !== 'NONE' ? ` (${c.author_association.toLowerCase()})` : ''}:\n${userText(c.body, call.config.limits.maxTextChars)}`);
    return listing(`Comments on ${fullName(owner, repo)}#${issue_number}:`, blocks.length ? [blocks.join('\n\n')] : [], `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});
