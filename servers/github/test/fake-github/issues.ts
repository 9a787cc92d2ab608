import { type Handler, HttpFailure, type RouteContext, type Router, body, invalid, json, notFound, paginated, repoFor, str } from './http.js';
import type { Issue, IssueComment, IssueSearchItem, Label } from './shapes.js';
import type { FakeComment, FakeIssue, FakeRepo } from './state.js';
import { inScope, matchesWords, parseQuery } from './search-query.js';
import { maybeUser, requireViewer, simpleUser } from './users.js';

type AuthorAssociation = Issue['author_association'];

export function association(repo: FakeRepo, login: string | null): NonNullable<AuthorAssociation> {
  if (!login) return 'NONE';
  if (login.toLowerCase() === repo.owner.toLowerCase()) return 'OWNER';
  const role = repo.collaborators.get(login.toLowerCase());
  if (role === 'admin' || role === 'maintain' || role === 'write') return 'MEMBER';
  if (role) return 'COLLABORATOR';
  return 'NONE';
}

export function labelShape(ctx: RouteContext, repo: FakeRepo, name: string): Label {
  const label = repo.labels.find((l) => l.name.toLowerCase() === name.toLowerCase());
  return {
    id: label?.id ?? 0,
    node_id: `LA_${label?.id ?? 0}`,
    url: ctx.api(`/repos/${repo.owner}/${repo.name}/labels/${encodeURIComponent(name)}`),
    name: label?.name ?? name,
    description: label?.description ?? null,
    color: label?.color ?? 'ededed',
    default: false,
  };
}

export function issueShape(ctx: RouteContext, repo: FakeRepo, issue: FakeIssue): Issue {
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  const url = `${base}/issues/${issue.number}`;
  const kind = issue.pull ? 'pull' : 'issues';
  return {
    id: issue.id,
    node_id: `I_${issue.id}`,
    url,
    repository_url: base,
    labels_url: `${url}/labels{/name}`,
    comments_url: `${url}/comments`,
    events_url: `${url}/events`,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/${kind}/${issue.number}`),
    number: issue.number,
    state: issue.state,
    state_reason: issue.stateReason,
    title: issue.title,
    body: issue.body,
    user: maybeUser(ctx, issue.author),
    labels: issue.labels.map((name) => labelShape(ctx, repo, name)),
    assignee: issue.assignees[0] ? simpleUser(ctx, issue.assignees[0]) : null,
    assignees: issue.assignees.map((a) => simpleUser(ctx, a)),
    milestone: null,
    locked: false,
    active_lock_reason: null,
    comments: repo.comments.filter((c) => c.issue === issue.number).length,
    closed_at: issue.closedAt,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    author_association: association(repo, issue.author),
    ...(issue.pull
      ? {
          draft: issue.pull.draft,
          pull_request: {
            url: `${base}/pulls/${issue.number}`,
            html_url: ctx.web(`/${repo.owner}/${repo.name}/pull/${issue.number}`),
            diff_url: ctx.web(`/${repo.owner}/${repo.name}/pull/${issue.number}.diff`),
            patch_url: ctx.web(`/${repo.owner}/${repo.name}/pull/${issue.number}.patch`),
            merged_at: issue.pull.mergedAt,
          },
        }
      : {}),
  };
}

function commentShape(ctx: RouteContext, repo: FakeRepo, comment: FakeComment): IssueComment {
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  return {
    id: comment.id,
    node_id: `IC_${comment.id}`,
    url: `${base}/issues/comments/${comment.id}`,
    body: comment.body,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/issues/${comment.issue}#issuecomment-${comment.id}`),
    user: maybeUser(ctx, comment.author),
    created_at: comment.createdAt,
    updated_at: comment.createdAt,
    issue_url: `${base}/issues/${comment.issue}`,
    author_association: association(repo, comment.author),
  };
}

/** Issues on a repository with issues turned off answer 410, as on GitHub. */
export function issuesRepo(ctx: RouteContext, access: 'read' | 'write'): FakeRepo {
  const repo = repoFor(ctx, access === 'write' ? 'read' : access);
  if (!repo.hasIssues) throw new HttpFailure(410, 'Issues are disabled for this repo');
  if (access === 'write') {
    if (!ctx.viewer) throw new HttpFailure(401, 'Requires authentication');
    if (!ctx.token?.canWrite) throw new HttpFailure(403, 'Resource not accessible by personal access token', { headers: { 'x-accepted-github-permissions': 'issues=write' } });
  }
  return repo;
}

export function issueOf(ctx: RouteContext, repo: FakeRepo): FakeIssue {
  const issue = repo.issues.find((i) => i.number === Number(ctx.req.params.number));
  if (!issue) throw notFound();
  return issue;
}

function checkPeople(ctx: RouteContext, repo: FakeRepo, logins: unknown, field: string): string[] {
  if (logins === undefined) return [];
  if (!Array.isArray(logins)) throw invalid('Validation Failed', [{ resource: 'Issue', code: 'invalid', field }]);
  for (const login of logins) {
    if (typeof login !== 'string' || !ctx.state.permissionOf(repo, login)) throw invalid('Validation Failed', [{ resource: 'Issue', code: 'invalid', field, value: login }]);
  }
  return logins as string[];
}

function ensureLabels(ctx: RouteContext, repo: FakeRepo, names: unknown): string[] {
  if (names === undefined) return [];
  if (!Array.isArray(names) || names.some((n) => typeof n !== 'string')) throw invalid('Validation Failed', [{ resource: 'Issue', code: 'invalid', field: 'labels' }]);
  for (const name of names as string[]) {
    if (!repo.labels.some((l) => l.name.toLowerCase() === name.toLowerCase())) repo.labels.push({ id: ctx.state.id(), name, color: 'ededed', description: null });
  }
  return names as string[];
}

const listIssues: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'read');
  const state = ctx.req.query.get('state') ?? 'open';
  const labels = (ctx.req.query.get('labels') ?? '').split(',').map((l) => l.trim().toLowerCase()).filter(Boolean);
  const since = ctx.req.query.get('since');
  const found = repo.issues
    .filter((i) => state === 'all' || i.state === state)
    .filter((i) => labels.every((l) => i.labels.some((x) => x.toLowerCase() === l)))
    .filter((i) => !since || i.updatedAt >= since)
    .sort((a, b) => b.number - a.number);
  return paginated(ctx, found, (i) => issueShape(ctx, repo, i));
};

const createIssue: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'write');
  const fields = body(ctx);
  const title = str(fields.title);
  if (!title) throw invalid('Validation Failed', [{ resource: 'Issue', code: 'missing_field', field: 'title' }]);
  const assignees = checkPeople(ctx, repo, fields.assignees, 'assignees');
  const labels = ensureLabels(ctx, repo, fields.labels);
  const issue = ctx.state.addIssue(repo, { title, body: str(fields.body) ?? null, author: ctx.viewer!.login, labels, assignees });
  return json(issueShape(ctx, repo, issue), 201);
};

const getIssue: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'read');
  return json(issueShape(ctx, repo, issueOf(ctx, repo)));
};

const updateIssue: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'write');
  const issue = issueOf(ctx, repo);
  const role = ctx.state.permissionOf(repo, ctx.viewer!.login);
  const isAuthor = issue.author?.toLowerCase() === ctx.viewer!.login.toLowerCase();
  if (!isAuthor && (!role || role === 'read')) throw new HttpFailure(403, 'Must have push access to update this issue.', { headers: { 'x-accepted-github-permissions': 'issues=write' } });
  const fields = body(ctx);
  if (fields.title !== undefined) {
    if (!str(fields.title)) throw invalid('Validation Failed', [{ resource: 'Issue', code: 'missing_field', field: 'title' }]);
    issue.title = str(fields.title)!;
  }
  if (fields.body !== undefined) issue.body = str(fields.body) ?? null;
  if (fields.state !== undefined) {
    if (fields.state !== 'open' && fields.state !== 'closed') throw invalid('Validation Failed', [{ resource: 'Issue', code: 'invalid', field: 'state', value: fields.state }]);
    issue.state = fields.state;
    issue.closedAt = fields.state === 'closed' ? ctx.state.now() : null;
    issue.stateReason = fields.state === 'closed' ? ((str(fields.state_reason) as FakeIssue['stateReason']) ?? 'completed') : 'reopened';
  }
  if (fields.labels !== undefined) issue.labels = ensureLabels(ctx, repo, fields.labels);
  if (fields.assignees !== undefined) issue.assignees = checkPeople(ctx, repo, fields.assignees, 'assignees');
  issue.updatedAt = ctx.state.now();
  return json(issueShape(ctx, repo, issue));
};

const listComments: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'read');
  const issue = issueOf(ctx, repo);
  return paginated(ctx, repo.comments.filter((c) => c.issue === issue.number), (c) => commentShape(ctx, repo, c));
};

const createComment: Handler = (ctx) => {
  const repo = issuesRepo(ctx, 'write');
  const issue = issueOf(ctx, repo);
  const text = str(body(ctx).body);
  if (!text) throw invalid('Validation Failed', [{ resource: 'IssueComment', code: 'missing_field', field: 'body' }]);
  const comment: FakeComment = { id: ctx.state.id(), issue: issue.number, author: requireViewer(ctx).login, body: text, createdAt: ctx.state.now() };
  repo.comments.push(comment);
  return json(commentShape(ctx, repo, comment), 201);
};

const listLabels: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  return paginated(ctx, repo.labels, (l) => labelShape(ctx, repo, l.name));
};

/** Issues and pull requests for /search/issues: words in title or body, scope, is:, state:, label:, author:. */
const searchIssues: Handler = (ctx) => {
  const query = parseQuery(ctx.req.query.get('q') ?? '');
  const has = (key: string, value: string): boolean => query.qualifiers.some((q) => !q.negated && q.key === key && q.value.toLowerCase() === value);
  const kinds = query.qualifiers.filter((q) => q.key === 'is' || q.key === 'type').map((q) => q.value.toLowerCase());
  const wantPr = kinds.includes('pr') || kinds.includes('pull-request');
  const wantIssue = kinds.includes('issue');
  if (!wantPr && !wantIssue) throw invalid('Query must include \'is:issue\' or \'is:pull-request\'');
  const found: { repo: FakeRepo; issue: FakeIssue }[] = [];
  for (const repo of ctx.state.repos.values()) {
    if (repo.private && !ctx.state.permissionOf(repo, ctx.viewer?.login)) continue;
    if (!inScope(query, `${repo.owner}/${repo.name}`)) continue;
    for (const issue of repo.issues) {
      if (wantPr !== Boolean(issue.pull) && !(wantPr && wantIssue)) continue;
      if ((has('is', 'open') || has('state', 'open')) && issue.state !== 'open') continue;
      if ((has('is', 'closed') || has('state', 'closed')) && issue.state !== 'closed') continue;
      const labels = query.qualifiers.filter((q) => q.key === 'label' && !q.negated).map((q) => q.value.toLowerCase());
      if (!labels.every((l) => issue.labels.some((x) => x.toLowerCase() === l))) continue;
      const author = query.qualifiers.find((q) => q.key === 'author' && !q.negated)?.value.toLowerCase();
      if (author && issue.author?.toLowerCase() !== author) continue;
      if (!matchesWords(query.words, [issue.title, issue.body ?? ''])) continue;
      found.push({ repo, issue });
    }
  }
  return paginated(
    ctx,
    found,
    ({ repo, issue }): IssueSearchItem => ({ ...(issueShape(ctx, repo, issue) as unknown as IssueSearchItem), score: 1 }),
    (items) => ({ total_count: found.length, incomplete_results: false, items }),
  );
};

export function issueRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/issues', listIssues);
  router.post('/repos/:owner/:repo/issues', createIssue);
  router.get('/repos/:owner/:repo/issues/:number', getIssue);
  router.patch('/repos/:owner/:repo/issues/:number', updateIssue);
  router.get('/repos/:owner/:repo/issues/:number/comments', listComments);
  router.post('/repos/:owner/:repo/issues/:number/comments', createComment);
  router.get('/repos/:owner/:repo/labels', listLabels);
  router.get('/search/issues', searchIssues);
}
