import { type Handler, HttpFailure, type RouteContext, type Router, body, invalid, json, notFound, paginated, repoFor, str, wantsMedia } from './http.js';
import { association, issueShape, labelShape } from './issues.js';
import { repoFields } from './repos.js';
import type { PullRequest, PullRequestFile, PullRequestListItem, PullRequestMerge, Review, ReviewComment } from './shapes.js';
import { type FakeIssue, type FakeRepo, type FakeReview, type FakeReviewComment, unifiedPatch } from './state.js';
import { fileChanges } from './git.js';
import { maybeUser, requireViewer, simpleUser } from './users.js';

type Side = PullRequest['head'];

function headRepoOf(ctx: RouteContext, repo: FakeRepo, issue: FakeIssue): FakeRepo {
  const [owner = '', name = ''] = issue.pull!.headRepo.split('/');
  return ctx.state.repo(owner, name) ?? repo;
}

function side(ctx: RouteContext, repo: FakeRepo, branch: string): Side {
  const sha = repo.refs.get(`heads/${branch}`) ?? '0'.repeat(40);
  return {
    label: `${repo.owner}:${branch}`,
    ref: branch,
    repo: repoFields(ctx, repo) as unknown as Side['repo'],
    sha,
    user: simpleUser(ctx, repo.owner),
  };
}

/** Files that differ between the base branch and the head branch (which may live in a fork). */
function diffFiles(ctx: RouteContext, repo: FakeRepo, issue: FakeIssue): { repo: FakeRepo; path: string; before?: string; after?: string }[] {
  const head = headRepoOf(ctx, repo, issue);
  const baseSha = repo.refs.get(`heads/${issue.pull!.base}`);
  const headSha = head.refs.get(`heads/${issue.pull!.head}`);
  const before = baseSha ? ctx.state.filesAt(repo, baseSha) : new Map<string, string>();
  const after = headSha ? ctx.state.filesAt(head, headSha) : new Map<string, string>();
  for (const [sha, blob] of head.blobs) if (!repo.blobs.has(sha)) repo.blobs.set(sha, blob);
  return [...new Set([...before.keys(), ...after.keys()])]
    .filter((p) => before.get(p) !== after.get(p))
    .sort()
    .map((path) => ({ repo, path, ...(before.has(path) ? { before: before.get(path)! } : {}), ...(after.has(path) ? { after: after.get(path)! } : {}) }));
}

function pullShape(ctx: RouteContext, repo: FakeRepo, issue: FakeIssue): PullRequest {
  const pull = issue.pull!;
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  const url = `${base}/pulls/${issue.number}`;
  const html = ctx.web(`/${repo.owner}/${repo.name}/pull/${issue.number}`);
  const files = fileChanges(repo, ctx, diffFiles(ctx, repo, issue));
  const headRepo = headRepoOf(ctx, repo, issue);
  const shape = issueShape(ctx, repo, issue);
  return {
    url,
    id: issue.id,
    node_id: `PR_${issue.id}`,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    issue_url: `${base}/issues/${issue.number}`,
    commits_url: `${url}/commits`,
    review_comments_url: `${url}/comments`,
    review_comment_url: `${base}/pulls/comments{/number}`,
    comments_url: `${base}/issues/${issue.number}/comments`,
    statuses_url: `${base}/statuses/${headRepo.refs.get(`heads/${pull.head}`) ?? ''}`,
    number: issue.number,
    state: issue.state,
    locked: false,
    title: issue.title,
    user: shape.user ?? simpleUser(ctx, 'ghost'),
    body: issue.body,
    labels: issue.labels.map((name) => labelShape(ctx, repo, name)),
    milestone: null,
    active_lock_reason: null,
    created_at: issue.createdAt,
    updated_at: issue.updatedAt,
    closed_at: issue.closedAt,
    merged_at: pull.mergedAt,
    merge_commit_sha: pull.mergeCommit,
    assignee: shape.assignee,
    assignees: shape.assignees ?? [],
    requested_reviewers: [],
    requested_teams: [],
    head: side(ctx, headRepo, pull.head),
    base: side(ctx, repo, pull.base),
    _links: {
      comments: { href: `${base}/issues/${issue.number}/comments` },
      commits: { href: `${url}/commits` },
      statuses: { href: `${base}/statuses` },
      html: { href: html },
      issue: { href: `${base}/issues/${issue.number}` },
      review_comments: { href: `${url}/comments` },
      review_comment: { href: `${base}/pulls/comments{/number}` },
      self: { href: url },
    },
    author_association: association(repo, issue.author),
    auto_merge: null,
    draft: pull.draft,
    merged: pull.merged,
    mergeable: pull.merged ? null : pull.mergeable,
    rebaseable: pull.mergeable,
    mergeable_state: pull.merged ? 'unknown' : pull.mergeable === false ? 'dirty' : 'clean',
    merged_by: maybeUser(ctx, pull.mergedBy),
    comments: repo.comments.filter((c) => c.issue === issue.number).length,
    review_comments: repo.reviewComments.filter((c) => c.pull === issue.number).length,
    maintainer_can_modify: false,
    commits: 1,
    additions: files.reduce((n, f) => n + f.additions, 0),
    deletions: files.reduce((n, f) => n + f.deletions, 0),
    changed_files: files.length,
  };
}

function pullOf(ctx: RouteContext, repo: FakeRepo): FakeIssue {
  const issue = repo.issues.find((i) => i.number === Number(ctx.req.params.number) && i.pull);
  if (!issue) throw notFound();
  return issue;
}

function unifiedDiff(ctx: RouteContext, repo: FakeRepo, issue: FakeIssue): string {
  return diffFiles(ctx, repo, issue)
    .map((f) => {
      const text = (sha: string | undefined): string | undefined => (sha ? repo.blobs.get(sha)!.toString('utf8') : undefined);
      const { patch } = unifiedPatch(text(f.before), text(f.after));
      return `diff --git a/${f.path} b/${f.path}\n--- ${f.before ? `a/${f.path}` : '/dev/null'}\n+++ ${f.after ? `b/${f.path}` : '/dev/null'}\n${patch}\n`;
    })
    .join('');
}

const listPulls: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const state = ctx.req.query.get('state') ?? 'open';
  const head = ctx.req.query.get('head');
  const baseBranch = ctx.req.query.get('base');
  const found = repo.issues
    .filter((i) => i.pull && (state === 'all' || i.state === state))
    .filter((i) => !head || `${i.pull!.headRepo.split('/')[0]}:${i.pull!.head}`.toLowerCase() === head.toLowerCase())
    .filter((i) => !baseBranch || i.pull!.base === baseBranch)
    .sort((a, b) => b.number - a.number);
  return paginated(ctx, found, (i): PullRequestListItem => pullShape(ctx, repo, i) as unknown as PullRequestListItem);
};

const createPull: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  if (!ctx.viewer) throw new HttpFailure(401, 'Requires authentication');
  if (!ctx.token?.canWrite) throw new HttpFailure(403, 'Resource not accessible by personal access token', { headers: { 'x-accepted-github-permissions': 'pull_requests=write' } });
  const fields = body(ctx);
  const title = str(fields.title);
  const headSpec = str(fields.head) ?? '';
  const baseBranch = str(fields.base) ?? '';
  if (!title) throw invalid('Validation Failed', [{ resource: 'PullRequest', code: 'missing_field', field: 'title' }]);
  const [headOwner, headBranch] = headSpec.includes(':') ? (headSpec.split(':') as [string, string]) : [repo.owner, headSpec];
  const headRepo = headOwner.toLowerCase() === repo.owner.toLowerCase() ? repo : [...ctx.state.repos.values()].find((r) => r.owner.toLowerCase() === headOwner.toLowerCase() && r.parent === `${repo.owner}/${repo.name}`);
  if (!repo.refs.has(`heads/${baseBranch}`)) throw invalid('Validation Failed', [{ resource: 'PullRequest', code: 'invalid', field: 'base' }]);
  if (!headRepo || !headRepo.refs.has(`heads/${headBranch}`)) throw invalid('Validation Failed', [{ resource: 'PullRequest', code: 'invalid', field: 'head' }]);
  if (headRepo === repo && headBranch === baseBranch) throw invalid('Validation Failed', [{ resource: 'PullRequest', code: 'custom', message: `No commits between ${baseBranch} and ${headBranch}` }]);
  if (repo.issues.some((i) => i.pull && i.state === 'open' && i.pull.head === headBranch && i.pull.headRepo === `${headRepo.owner}/${headRepo.name}` && i.pull.base === baseBranch)) {
    throw invalid('Validation Failed', [{ resource: 'PullRequest', code: 'custom', message: `A pull request already exists for ${headOwner}:${headBranch}.` }]);
  }
  const issue = ctx.state.addPull(repo, { title, head: headBranch, base: baseBranch, body: str(fields.body) ?? null, author: ctx.viewer.login, draft: fields.draft === true, headRepo: `${headRepo.owner}/${headRepo.name}` });
  return json(pullShape(ctx, repo, issue), 201);
};

const getPull: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const issue = pullOf(ctx, repo);
  if (wantsMedia(ctx, 'diff')) return { status: 200, headers: { 'content-type': 'application/vnd.github.diff; charset=utf-8' }, body: unifiedDiff(ctx, repo, issue) };
  return json(pullShape(ctx, repo, issue));
};

const listFiles: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const issue = pullOf(ctx, repo);
  return paginated(ctx, fileChanges(repo, ctx, diffFiles(ctx, repo, issue)), (f): PullRequestFile => f);
};

const merge: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const issue = pullOf(ctx, repo);
  const pull = issue.pull!;
  const fields = body(ctx);
  const headRepo = headRepoOf(ctx, repo, issue);
  const headSha = headRepo.refs.get(`heads/${pull.head}`)!;
  if (pull.merged || issue.state === 'closed' || pull.mergeable === false) throw new HttpFailure(405, 'Pull Request is not mergeable');
  const sha = str(fields.sha);
  if (sha && sha !== headSha) throw new HttpFailure(409, 'Head branch was modified. Review and try the merge again.');
  const method = str(fields.merge_method) ?? 'merge';
  if (!['merge', 'squash', 'rebase'].includes(method)) throw invalid('Validation Failed', [{ resource: 'PullRequest', code: 'invalid', field: 'merge_method' }]);
  const baseSha = repo.refs.get(`heads/${pull.base}`)!;
  const headTree = headRepo.commits.get(headSha)!.tree;
  for (const [s, tree] of headRepo.trees) repo.trees.set(s, tree);
  for (const [s, blob] of headRepo.blobs) repo.blobs.set(s, blob);
  const message = str(fields.commit_message) ?? `Merge pull request #${issue.number}`;
  const mergeSha = ctx.state.putCommit(repo, headTree, method === 'merge' ? [baseSha, headSha] : [baseSha], message, ctx.viewer!.login);
  repo.refs.set(`heads/${pull.base}`, mergeSha);
  Object.assign(pull, { merged: true, mergedAt: ctx.state.now(), mergedBy: ctx.viewer!.login, mergeCommit: mergeSha });
  issue.state = 'closed';
  issue.closedAt = pull.mergedAt;
  const answer: PullRequestMerge = { sha: mergeSha, merged: true, message: 'Pull Request successfully merged' };
  return json(answer);
};

const updateBranch: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const issue = pullOf(ctx, repo);
  const expected = str(body(ctx).expected_head_sha);
  const headSha = headRepoOf(ctx, repo, issue).refs.get(`heads/${issue.pull!.head}`);
  if (expected && expected !== headSha) throw invalid("expected head sha didn't match current head ref.");
  return json({ message: 'Updating pull request branch.', url: ctx.web(`/${repo.owner}/${repo.name}/pull/${issue.number}`) }, 202);
};

function reviewShape(ctx: RouteContext, repo: FakeRepo, review: FakeReview): Review {
  const html = ctx.web(`/${repo.owner}/${repo.name}/pull/${review.pull}`);
  return {
    id: review.id,
    node_id: `PRR_${review.id}`,
    user: maybeUser(ctx, review.author),
    body: review.body,
    state: review.state,
    html_url: `${html}#pullrequestreview-${review.id}`,
    pull_request_url: ctx.api(`/repos/${repo.owner}/${repo.name}/pulls/${review.pull}`),
    _links: { html: { href: `${html}#pullrequestreview-${review.id}` }, pull_request: { href: ctx.api(`/repos/${repo.owner}/${repo.name}/pulls/${review.pull}`) } },
    submitted_at: review.submittedAt,
    commit_id: review.commitId,
    author_association: association(repo, review.author),
  };
}

function reviewCommentShape(ctx: RouteContext, repo: FakeRepo, c: FakeReviewComment): ReviewComment {
  const api = ctx.api(`/repos/${repo.owner}/${repo.name}/pulls`);
  const html = ctx.web(`/${repo.owner}/${repo.name}/pull/${c.pull}#discussion_r${c.id}`);
  return {
    url: `${api}/comments/${c.id}`,
    pull_request_review_id: c.reviewId,
    id: c.id,
    node_id: `PRRC_${c.id}`,
    diff_hunk: '@@ -1 +1 @@',
    path: c.path,
    ...(c.line !== null ? { position: c.line, original_position: c.line } : {}),
    commit_id: c.commitId,
    original_commit_id: c.commitId,
    user: simpleUser(ctx, c.author ?? 'ghost'),
    body: c.body,
    created_at: c.createdAt,
    updated_at: c.createdAt,
    html_url: html,
    pull_request_url: `${api}/${c.pull}`,
    author_association: association(repo, c.author),
    _links: { self: { href: `${api}/comments/${c.id}` }, html: { href: html }, pull_request: { href: `${api}/${c.pull}` } },
    line: c.line ?? undefined,
    original_line: c.line ?? undefined,
    side: 'RIGHT',
  };
}

const createReview: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const viewer = requireViewer(ctx);
  if (!ctx.token?.canWrite) throw new HttpFailure(403, 'Resource not accessible by personal access token', { headers: { 'x-accepted-github-permissions': 'pull_requests=write' } });
  const issue = pullOf(ctx, repo);
  const fields = body(ctx);
  const event = str(fields.event);
  const text = str(fields.body) ?? '';
  const comments = Array.isArray(fields.comments) ? (fields.comments as Record<string, unknown>[]) : [];
  const states = { APPROVE: 'APPROVED', REQUEST_CHANGES: 'CHANGES_REQUESTED', COMMENT: 'COMMENTED' } as const;
  if (event !== undefined && !(event in states)) throw invalid('Validation Failed', [{ resource: 'PullRequestReview', code: 'invalid', field: 'event' }]);
  if (event === 'APPROVE' && issue.author?.toLowerCase() === viewer.login.toLowerCase()) throw invalid('Unprocessable Entity', ['Can not approve your own pull request']);
  if ((event === 'REQUEST_CHANGES' || event === 'COMMENT') && !text && comments.length === 0) throw invalid('Unprocessable Entity', [`Review Can not request changes on or comment on a pull request without a body.`]);
  const changed = new Set(diffFiles(ctx, repo, issue).map((f) => f.path));
  for (const c of comments) if (!changed.has(String(c.path))) throw invalid('Unprocessable Entity', ['Pull request review thread path is invalid']);
  const headSha = headRepoOf(ctx, repo, issue).refs.get(`heads/${issue.pull!.head}`)!;
  const review: FakeReview = {
    id: ctx.state.id(),
    pull: issue.number,
    author: viewer.login,
    state: event ? states[event as keyof typeof states] : 'PENDING',
    body: text,
    commitId: headSha,
    submittedAt: ctx.state.now(),
  };
  repo.reviews.push(review);
  for (const c of comments) {
    repo.reviewComments.push({ id: ctx.state.id(), pull: issue.number, reviewId: review.id, author: viewer.login, path: String(c.path), line: typeof c.line === 'number' ? c.line : null, body: String(c.body ?? ''), commitId: headSha, createdAt: review.submittedAt });
  }
  return json(reviewShape(ctx, repo, review));
};

const listReviews: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const issue = pullOf(ctx, repo);
  // A pending review is its author's alone.
  const visible = repo.reviews.filter((r) => r.pull === issue.number && (r.state !== 'PENDING' || r.author === ctx.viewer?.login));
  return paginated(ctx, visible, (r) => reviewShape(ctx, repo, r));
};

const listReviewComments: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const issue = pullOf(ctx, repo);
  return paginated(ctx, repo.reviewComments.filter((c) => c.pull === issue.number), (c) => reviewCommentShape(ctx, repo, c));
};

export function pullRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/pulls', listPulls);
  router.post('/repos/:owner/:repo/pulls', createPull);
  router.get('/repos/:owner/:repo/pulls/:number', getPull);
  router.get('/repos/:owner/:repo/pulls/:number/files', listFiles);
  router.put('/repos/:owner/:repo/pulls/:number/merge', merge);
  router.put('/repos/:owner/:repo/pulls/:number/update-branch', updateBranch);
  router.get('/repos/:owner/:repo/pulls/:number/reviews', listReviews);
  router.post('/repos/:owner/:repo/pulls/:number/reviews', createReview);
  router.get('/repos/:owner/:repo/pulls/:number/comments', listReviewComments);
}
