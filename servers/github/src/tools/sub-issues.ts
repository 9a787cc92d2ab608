import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import type { GithubCall } from '../github-session.js';
import { fullName, issueNumberField, pageParams, repoField, repoParams } from '../params.js';
import { hiddenNote, listing, loginOf, nextPage, paging, parts, userLine } from '../present.js';

/**
 * Sub-issues. GitHub adds and removes them by the sub-issue's id, which a model does not know: these
 * tools take its number (in `sub_issue_repo`, default the parent's repository, of the same owner)
 * and look the id up, through the same allowlist as every request.
 */
const subIssueTarget = { sub_issue_number: issueNumberField, sub_issue_repo: repoField.optional() };

async function subIssueId(call: GithubCall, owner: string, repo: string, number: number): Promise<{ id: number; title: string }> {
  const { data } = await call.api.rest.issues.get({ owner, repo, issue_number: number });
  return { id: data.id, title: userLine(data.title) };
}

export const listSubIssues = githubTool({
  name: 'list_sub_issues',
  toolset: 'sub_issues',
  description: "An issue's sub-issues: repository, number, state, title.",
  input: z.object({ ...repoParams, issue_number: issueNumberField, ...pageParams }),
  annotations: { title: 'List sub-issues', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: read',
  run: async ({ owner, repo, issue_number, ...rest }, call) => {
    const page = paging(rest);
    const { data, headers } = await call.api.rest.issues.listSubIssues({ owner, repo, issue_number, ...page });
    const { items, hidden } = await call.trusted(owner, repo, data, (i) => loginOf(i.user));
    const lines = items.map((i) => {
      const where = i.repository_url.split('/repos/')[1] ?? '';
      const same = where.toLowerCase() === fullName(owner, repo).toLowerCase();
      const title = userLine(i.title);
      return parts(`${same ? '' : userLine(where)}#${i.number}${title ? ` ${title}` : ''}`, i.state);
    });
    return listing(`Sub-issues of ${fullName(owner, repo)}#${issue_number}:`, lines, `${hiddenNote(hidden)}${nextPage(headers.link, page.page)}`);
  },
});

export const addSubIssue = githubTool({
  name: 'add_sub_issue',
  toolset: 'sub_issues',
  description: 'Makes an issue (sub_issue_number, in sub_issue_repo of the same owner, default this one) a sub-issue of issue_number.',
  input: z.object({ ...repoParams, issue_number: issueNumberField, ...subIssueTarget }),
  annotations: { title: 'Add sub-issue', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Issues: write',
  run: async ({ owner, repo, issue_number, sub_issue_number, sub_issue_repo }, call) => {
    const subRepo = sub_issue_repo ?? repo;
    const sub = await subIssueId(call, owner, subRepo, sub_issue_number);
    await call.api.rest.issues.addSubIssue({ owner, repo, issue_number, sub_issue_id: sub.id });
    return `${fullName(owner, subRepo)}#${sub_issue_number}${sub.title ? ` (${sub.title})` : ''} is now a sub-issue of ${fullName(owner, repo)}#${issue_number}.`;
  },
});

export const removeSubIssue = githubTool({
  name: 'remove_sub_issue',
  toolset: 'sub_issues',
  description: 'Detaches a sub-issue (sub_issue_number, in sub_issue_repo, default this one) from issue_number; the issue itself stays.',
  input: z.object({ ...repoParams, issue_number: issueNumberField, ...subIssueTarget }),
  annotations: { title: 'Remove sub-issue', readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  permission: 'Issues: write',
  run: async ({ owner, repo, issue_number, sub_issue_number, sub_issue_repo }, call) => {
    const subRepo = sub_issue_repo ?? repo;
    const sub = await subIssueId(call, owner, subRepo, sub_issue_number);
    await call.api.rest.issues.removeSubIssue({ owner, repo, issue_number, sub_issue_id: sub.id });
    return `${fullName(owner, subRepo)}#${sub_issue_number} is no longer a sub-issue of ${fullName(owner, repo)}#${issue_number}.`;
  },
});
