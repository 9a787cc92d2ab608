import { z } from 'zod';
import type { GithubCall } from '../github-session.js';
import { githubTool } from '../github-tool.js';
import type { Issue, SearchIssueItem as SearchItem } from '../github-types.js';
import { fullName, issueNumberField, nameList, pageParams, repoParams, text } from '../params.js';
import { count, hiddenNote, labelNames, listing, loginOf, nextPage, paging, parts, userLine, userText, when, who } from '../present.js';


/** One line of a list: number, state, title, author, labels, comments, last update. */
export function issueLine(issue: Issue | SearchItem, repoName?: string): string {
  const labels = labelNames(issue.labels);
  return parts(
    `${repoName ? `${repoName}` : ''}#${issue.number} [${issue.state}${issue.draft ? ', draft' : ''}${issue.pull_request ? ', PR' : ''}] ${userLine(issue.title)}`,
    who(issue.user),
    labels.length ? `labels: ${labels.join(', ')}` : '',
    issue.comments ? `${count(issue.comments)} comments` : '',
    `updated ${when(issue.updated_at)}`,
  );
}

function issueDetails(issue: Issue, owner: string, repo: string, maxText: number): string {
  const labels = labelNames(issue.labels);
  const assignees = (issue.assignees ?? []).map((a) => who(a));
  return [
    `${fullName(owner, repo)}#${issue.number}: ${userLine(issue.title)}`,
    parts(`state ${issue.state}${issue.state_reason ? ` (${issue.state_reason})` : ''}`, `by ${who(issue.user)}`, `created ${when(issue.created_at)}`, `updated ${when(issue.updated_at)}`, `${count(issue.comments)} comments`),
    parts(labels.length ? `labels: ${labels.join(', ')}` : '', assignees.length ? `assignees: ${assignees.join(', ')}` : '', issue.milestone ? `milestone: ${userLine(issue.milestone.title)}` : ''),
    issue.pull_request ? 'This is a pull request: get_pull_request has its branches and merge state.' : '',
    issue.html_url,
    `Body:\n${userText(issue.body, maxText, '(no description)')}`,
  ]
    .filter(Boolean)
    .join('\n');
}


export const createIssue = githubTool({
  name: 'create_issue',
  toolset: 'issues',
  description: 'Opens an issue.',
  input: z.object({ ...repoParams, title: text, body: z.string().optional(), labels: nameList.optional(), assignees: nameList.optional() }),
  annotations: { title: 'Create issue', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Issues: write',
  run: async ({ owner, repo, ...fields }, { api }) => {
    const { data } = await api.rest.issues.create({ owner, repo, ...fields });
    return `Created ${fullName(owner, repo)}#${data.number}: ${data.html_url}`;
  },
});

export const getIssue = githubTool({
  name: 'get_issue',
  toolset: 'issues',
  description: 'An issue: state, author, labels and body.',
  input: z.object({ ...repoParams, issue_number: issueNumberField }),
  annotations: { title: 'Get issue', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: read',
  run: async ({ owner, repo, issue_number }, call) => {
    const { data } = await call.api.rest.issues.get({ owner, repo, issue_number });
    await call.requireTrusted(owner, repo, loginOf(data.user), `issue #${issue_number}`);
    return issueDetails(data, owner, repo, call.config.limits.maxTextChars);
  },
});

export const listIssues = githubTool({
  name: 'list_issues',
  toolset: 'issues',
  description: 'Lists issues (PRs marked); labels is comma-separated.',
  input: z.object({
    ...repoParams,
    state: z.enum(['open', 'closed', 'all']).optional(),
    labels: text.optional(),
    since: z.string().optional(),
    ...pageParams,
  }),
  annotations: { title: 'List issues', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: read',
  run: async ({ owner, repo, state, labels, since, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.issues.listForRepo({
      owner,
      repo,
      ...page,
      ...(state ? { state } : {}),
      ...(labels ? { labels } : {}),
      ...(since ? { since } : {}),
    });
    const { items, hidden } = await call.trusted(owner, repo, data, (i) => loginOf(i.user));
    return listing(`Issues of ${fullName(owner, repo)} (${state ?? 'open'}):`, items.map((i) => issueLine(i)), `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});

export const updateIssue = githubTool({
  name: 'update_issue',
  toolset: 'issues',
  description: 'Edits an issue; labels and assignees replace the current ones.',
  input: z.object({
    ...repoParams,
    issue_number: issueNumberField,
    title: text.optional(),
    body: z.string().optional(),
    state: z.enum(['open', 'closed']).optional(),
    labels: nameList.optional(),
    assignees: nameList.optional(),
  }),
  annotations: { title: 'Update issue', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  permission: 'Issues: write',
  run: async ({ owner, repo, issue_number, ...fields }, { api }) => {
    const changes = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined));
    const { data } = await api.rest.issues.update({ owner, repo, issue_number, ...changes });
    return `Updated ${fullName(owner, repo)}#${data.number} (${Object.keys(changes).join(', ') || 'nothing changed'}): now ${data.state}. ${data.html_url}`;
  },
});

/** Adds the qualifier GitHub requires to tell issues from pull requests, unless the query has one. */
export function withKind(query: string, kind: 'issue' | 'pr'): string {
  if (/(^|\s)(is|type):(issue|pr|pull-request)\b/i.test(query)) return query;
  return `${query} is:${kind}`;
}

/** Search results, each checked against lockdown in its own repository. */
export async function trustedSearchItems(call: GithubCall, items: SearchItem[]): Promise<{ items: { item: SearchItem; repo: string }[]; hidden: number }> {
  const kept: { item: SearchItem; repo: string }[] = [];
  let hidden = 0;
  for (const item of items) {
    const repoName = item.repository_url.split('/repos/')[1] ?? '';
    const [owner = '', repo = ''] = repoName.split('/');
    const verdict = await call.trusted(owner, repo, [item], (i) => loginOf(i.user));
    if (verdict.items.length) kept.push({ item, repo: repoName });
    hidden += verdict.hidden;
  }
  return { items: kept, hidden };
}

export const searchIssues = githubTool({
  name: 'search_issues',
  toolset: 'issues',
  description: 'Searches issues.',
  input: z.object({ q: text, ...pageParams }),
  annotations: { title: 'Search issues', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: read',
  run: async ({ q, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.search.issuesAndPullRequests({ q: withKind(q, 'issue'), ...page });
    const { items, hidden } = await trustedSearchItems(call, data.items);
    return listing(`${count(data.total_count)} issues match${data.incomplete_results ? ' (incomplete)' : ''}:`, items.map(({ item, repo }) => issueLine(item, repo)), `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});
