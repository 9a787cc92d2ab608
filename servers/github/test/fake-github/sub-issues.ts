import { type Handler, HttpFailure, type RouteContext, type Router, body, json, notFound, paginated } from './http.js';
import { issueOf, issueShape, issuesRepo } from './issues.js';
import type { FakeIssue, FakeRepo } from './state.js';

/**
 * Sub-issues, as GitHub's REST API has them: listed as issues, added and removed by the sub-issue's
 * id (not its number), which may be in another repository of the same owner. An issue has one
 * parent at most; an issue cannot be its own sub-issue.
 */

function byId(ctx: RouteContext, id: number): { repo: FakeRepo; issue: FakeIssue } | undefined {
  for (const repo of ctx.state.repos.values()) {
    const issue = repo.issues.find((i) => i.id === id && !i.pull);
    if (issue) return { repo, issue };
  }
  return undefined;
}

function parentOf(ctx: RouteContext, id: number): FakeIssue | undefined {
  for (const repo of ctx.state.repos.values()) {
    const parent = repo.issues.find((i) => i.subIssueIds?.includes(id));
    if (parent) return parent;
  }
  return undefined;
}

function subIssueId(ctx: RouteContext): number {
  const id = body(ctx).sub_issue_id;
  if (typeof id !== 'number' || !Number.isInteger(id)) throw new HttpFailure(422, 'Invalid request', { errors: [{ resource: 'Issue', field: 'sub_issue_id', code: 'invalid' }] });
  return id;
}

const list: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'read');
  const parent = issueOf(ctx, repo);
  const subs = (parent.subIssueIds ?? []).map((id) => byId(ctx, id)).filter((s): s is { repo: FakeRepo; issue: FakeIssue } => s !== undefined);
  return paginated(ctx, subs, (s) => issueShape(ctx, s.repo, s.issue));
};

const add: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'write');
  const parent = issueOf(ctx, repo);
  const id = subIssueId(ctx);
  const sub = byId(ctx, id);
  if (!sub || sub.repo.owner.toLowerCase() !== repo.owner.toLowerCase()) throw notFound();
  if (sub.issue.id === parent.id) throw new HttpFailure(422, 'Validation Failed', { errors: [{ message: 'An issue cannot be a sub-issue of itself' }] });
  if (parentOf(ctx, id)) throw new HttpFailure(422, 'Validation Failed', { errors: [{ message: 'Issue may not contain duplicate sub-issues and Sub issue may only have one parent' }] });
  parent.subIssueIds = [...(parent.subIssueIds ?? []), id];
  return json(issueShape(ctx, repo, parent), 201);
};

const remove: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'write');
  const parent = issueOf(ctx, repo);
  const id = subIssueId(ctx);
  if (!parent.subIssueIds?.includes(id)) throw notFound();
  parent.subIssueIds = parent.subIssueIds.filter((x) => x !== id);
  return json(issueShape(ctx, repo, parent));
};

export function subIssueRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/issues/:number/sub_issues', list);
  router.post('/repos/:owner/:repo/issues/:number/sub_issues', add);
  router.delete('/repos/:owner/:repo/issues/:number/sub_issue', remove);
}
