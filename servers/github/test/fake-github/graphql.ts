import { graphqlOperationOf } from '@suite/test-kit';
import { type Handler, type RouteContext, json } from './http.js';
import type { FakeDiscussion, FakeDiscussionComment, FakeRepo, FakeReviewThread } from './state.js';

/**
 * GitHub's GraphQL endpoint (POST /graphql; /api/graphql beside Enterprise Server's /api/v3), for
 * the operations the server sends: dispatched by the operation's name, answering the shapes its
 * selections ask for. Failures as GitHub has them: 200 with an `errors` array typed NOT_FOUND or
 * FORBIDDEN (with the data that could be resolved, null elsewhere), 401 without a token, 400 for
 * a body that is not a query. Rate limits and broken bodies come from the router and faults.
 */

type Vars = Record<string, unknown>;

class GraphqlError extends Error {
  constructor(
    readonly type: 'NOT_FOUND' | 'FORBIDDEN' | 'UNPROCESSABLE',
    message: string,
    readonly path: string[],
  ) {
    super(message);
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isInteger(v) ? v : fallback);
const actor = (login: string | null): { login: string } | null => (login === null ? null : { login });

/** A connection page: `first` (at most 100) after an opaque cursor. */
function connection<T, R>(items: readonly T[], vars: { first?: unknown; after?: unknown }, render: (item: T) => R): { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; nodes: R[] } {
  const first = Math.min(100, Math.max(1, int(vars.first, 30)));
  const after = str(vars.after);
  const start = after ? Number(Buffer.from(after, 'base64').toString('utf8').replace(/^cursor:/, '')) + 1 : 0;
  const slice = items.slice(Number.isFinite(start) ? start : 0, (Number.isFinite(start) ? start : 0) + first);
  const end = (Number.isFinite(start) ? start : 0) + slice.length - 1;
  return {
    totalCount: items.length,
    pageInfo: { hasNextPage: end + 1 < items.length, endCursor: slice.length ? Buffer.from(`cursor:${end}`).toString('base64') : null },
    nodes: slice.map(render),
  };
}

/** Which fine-grained permission each operation needs, and whether it writes. */
const NEEDS: Record<string, { permission: 'discussions' | 'pull_requests'; write: boolean }> = {
  DiscussionCategories: { permission: 'discussions', write: false },
  ListDiscussions: { permission: 'discussions', write: false },
  GetDiscussion: { permission: 'discussions', write: false },
  DiscussionId: { permission: 'discussions', write: false },
  DiscussionReplyTarget: { permission: 'discussions', write: false },
  CreateDiscussion: { permission: 'discussions', write: true },
  AddDiscussionComment: { permission: 'discussions', write: true },
  PendingReview: { permission: 'pull_requests', write: false },
  StartPendingReview: { permission: 'pull_requests', write: true },
  AddPendingReviewComment: { permission: 'pull_requests', write: true },
  SubmitPendingReview: { permission: 'pull_requests', write: true },
  DeletePendingReview: { permission: 'pull_requests', write: true },
  ReviewThreads: { permission: 'pull_requests', write: false },
  ReviewThreadOf: { permission: 'pull_requests', write: false },
  ResolveReviewThread: { permission: 'pull_requests', write: true },
  UnresolveReviewThread: { permission: 'pull_requests', write: true },
};

interface Op {
  ctx: RouteContext;
  vars: Vars;
  name: string;
}

function forbidden(path: string[]): GraphqlError {
  return new GraphqlError('FORBIDDEN', 'Resource not accessible by personal access token', path);
}

/** The repository of `owner`/`name`, as the viewer may see it (a private one without access is NOT_FOUND, as on GitHub). */
function repository(op: Op, owner: unknown, name: unknown): FakeRepo {
  const repo = op.ctx.state.repo(str(owner), str(name));
  const role = repo ? op.ctx.state.permissionOf(repo, op.ctx.viewer?.login) : undefined;
  if (!repo || (repo.private && role === undefined)) throw new GraphqlError('NOT_FOUND', `Could not resolve to a Repository with the name '${str(owner)}/${str(name)}'.`, ['repository']);
  checkToken(op, ['repository']);
  return repo;
}

/** A fine-grained token's permission for the operation, and a read-only token's writes. */
function checkToken(op: Op, path: string[]): void {
  const need = NEEDS[op.name]!;
  const granted = op.ctx.token?.permissions ? (op.ctx.token.permissions[need.permission] ?? 'none') : undefined;
  if (granted === 'none' || (need.write && granted === 'read')) throw forbidden(path);
  if (need.write && !op.ctx.token?.canWrite) throw forbidden(path);
}

/** Every repository with its id, for node lookups. */
function repos(op: Op): FakeRepo[] {
  return [...op.ctx.state.repos.values()];
}

function discussionOf(op: Op, repo: FakeRepo, number: unknown): FakeDiscussion | undefined {
  return (repo.discussions ?? []).find((d) => d.number === number);
}

function commentShape(d: FakeDiscussion, c: FakeDiscussionComment, replies: number) {
  return {
    id: `DC_${c.id}`,
    body: c.body,
    createdAt: c.createdAt,
    isAnswer: d.answerId === c.id,
    author: actor(c.author),
    replies: connection(d.comments.filter((r) => r.replyTo === c.id), { first: replies }, (r) => ({ id: `DC_${r.id}`, body: r.body, createdAt: r.createdAt, author: actor(r.author) })),
  };
}

function findDiscussionComment(op: Op, id: string): { repo: FakeRepo; discussion: FakeDiscussion; comment: FakeDiscussionComment } | undefined {
  for (const repo of repos(op)) {
    for (const discussion of repo.discussions ?? []) {
      const comment = discussion.comments.find((c) => `DC_${c.id}` === id);
      if (comment) return { repo, discussion, comment };
    }
  }
  return undefined;
}

function findThread(op: Op, id: string): { repo: FakeRepo; thread: FakeReviewThread } | undefined {
  for (const repo of repos(op)) {
    const thread = (repo.reviewThreads ?? []).find((t) => `PRRT_${t.id}` === id);
    if (thread) return { repo, thread };
  }
  return undefined;
}

function findReview(op: Op, id: unknown): { repo: FakeRepo; review: FakeRepo['reviews'][number] } | undefined {
  for (const repo of repos(op)) {
    const review = repo.reviews.find((r) => `PRR_${r.id}` === id);
    // Someone else's pending review does not exist for the viewer.
    if (review && (review.state !== 'PENDING' || review.author === op.ctx.viewer?.login)) return { repo, review };
  }
  return undefined;
}

function pullOf(repo: FakeRepo, number: unknown): FakeRepo['issues'][number] | undefined {
  return repo.issues.find((i) => i.number === number && i.pull);
}

/** A thread is visible unless it belongs to someone else's pending review. */
function visibleThreads(op: Op, repo: FakeRepo, pull: number): FakeReviewThread[] {
  return (repo.reviewThreads ?? []).filter((t) => {
    if (t.pull !== pull) return false;
    const review = t.reviewId !== null ? repo.reviews.find((r) => r.id === t.reviewId) : undefined;
    return !review || review.state !== 'PENDING' || review.author === op.ctx.viewer?.login;
  });
}

const OPERATIONS: Record<string, (op: Op) => unknown> = {
  DiscussionCategories: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    return {
      repository: {
        id: `R_${repo.id}`,
        discussionCategories: connection(repo.discussionCategories ?? [], { first: 100 }, (c) => ({ id: `DIC_${c.id}`, name: c.name, slug: c.slug, description: c.description, isAnswerable: c.answerable })),
      },
    };
  },
  ListDiscussions: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const category = op.vars.categoryId;
    const all = (repo.discussions ?? []).filter((d) => category === null || category === undefined || `DIC_${d.categoryId}` === category).sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || b.number - a.number);
    const categoryName = (id: number): { name: string } | null => {
      const c = repo.discussionCategories?.find((x) => x.id === id);
      return c ? { name: c.name } : null;
    };
    return {
      repository: {
        discussions: connection(all, op.vars, (d) => ({
          number: d.number,
          title: d.title,
          author: actor(d.author),
          category: categoryName(d.categoryId),
          updatedAt: d.updatedAt,
          closed: d.closed,
          isAnswered: d.answerId !== null,
          comments: { totalCount: d.comments.filter((c) => c.replyTo === null).length },
        })),
      },
    };
  },
  GetDiscussion: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const d = discussionOf(op, repo, op.vars.number);
    if (!d) throw new GraphqlError('NOT_FOUND', `Could not resolve to a Discussion with the number of ${String(op.vars.number)}.`, ['repository', 'discussion']);
    const category = repo.discussionCategories?.find((c) => c.id === d.categoryId);
    return {
      repository: {
        discussion: {
          title: d.title,
          body: d.body,
          url: op.ctx.web(`/${repo.owner}/${repo.name}/discussions/${d.number}`),
          closed: d.closed,
          isAnswered: d.answerId !== null,
          createdAt: d.createdAt,
          author: actor(d.author),
          category: category ? { name: category.name } : null,
          comments: connection(
            d.comments.filter((c) => c.replyTo === null),
            op.vars,
            (c) => commentShape(d, c, int(op.vars.replies, 10)),
          ),
        },
      },
    };
  },
  DiscussionId: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const d = discussionOf(op, repo, op.vars.number);
    if (!d) throw new GraphqlError('NOT_FOUND', `Could not resolve to a Discussion with the number of ${String(op.vars.number)}.`, ['repository', 'discussion']);
    return { repository: { discussion: { id: `D_${d.id}` } } };
  },
  DiscussionReplyTarget: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const d = discussionOf(op, repo, op.vars.number);
    const found = findDiscussionComment(op, str(op.vars.comment));
    return {
      repository: { discussion: d ? { id: `D_${d.id}` } : null },
      node: found ? { discussion: { id: `D_${found.discussion.id}` }, replyTo: found.comment.replyTo !== null ? { id: `DC_${found.comment.replyTo}` } : null } : null,
    };
  },
  CreateDiscussion: (op) => {
    const repo = repos(op).find((r) => `R_${r.id}` === op.vars.repositoryId);
    if (!repo) throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.repositoryId)}'`, ['createDiscussion']);
    checkToken(op, ['createDiscussion']);
    const category = repo.discussionCategories?.find((c) => `DIC_${c.id}` === op.vars.categoryId);
    if (!category) throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.categoryId)}'`, ['createDiscussion']);
    const now = op.ctx.state.now();
    const number = Math.max(0, ...repo.issues.map((i) => i.number), ...(repo.discussions ?? []).map((d) => d.number)) + 1;
    const d: FakeDiscussion = { id: op.ctx.state.id(), number, title: str(op.vars.title), body: str(op.vars.body), author: op.ctx.viewer!.login, categoryId: category.id, createdAt: now, updatedAt: now, closed: false, answerId: null, comments: [] };
    (repo.discussions ??= []).push(d);
    return { createDiscussion: { discussion: { number, url: op.ctx.web(`/${repo.owner}/${repo.name}/discussions/${number}`) } } };
  },
  AddDiscussionComment: (op) => {
    const where = repos(op)
      .flatMap((repo) => (repo.discussions ?? []).map((d) => ({ repo, d })))
      .find((x) => `D_${x.d.id}` === op.vars.discussionId);
    if (!where) throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.discussionId)}'`, ['addDiscussionComment']);
    checkToken(op, ['addDiscussionComment']);
    let replyTo: number | null = null;
    if (op.vars.replyToId !== null && op.vars.replyToId !== undefined) {
      const parent = where.d.comments.find((c) => `DC_${c.id}` === op.vars.replyToId);
      if (!parent || parent.replyTo !== null) throw new GraphqlError('UNPROCESSABLE', 'Parent comment is not a top-level comment of this discussion', ['addDiscussionComment']);
      replyTo = parent.id;
    }
    const comment: FakeDiscussionComment = { id: op.ctx.state.id(), author: op.ctx.viewer!.login, body: str(op.vars.body), createdAt: op.ctx.state.now(), replyTo };
    where.d.comments.push(comment);
    where.d.updatedAt = comment.createdAt;
    return { addDiscussionComment: { comment: { id: `DC_${comment.id}`, url: op.ctx.web(`/${where.repo.owner}/${where.repo.name}/discussions/${where.d.number}#discussioncomment-${comment.id}`) } } };
  },
  PendingReview: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const pull = pullOf(repo, op.vars.number);
    if (!pull) throw new GraphqlError('NOT_FOUND', `Could not resolve to a PullRequest with the number of ${String(op.vars.number)}.`, ['repository', 'pullRequest']);
    const pending = repo.reviews.filter((r) => r.pull === pull.number && r.state === 'PENDING' && r.author === op.ctx.viewer?.login);
    return {
      viewer: { login: op.ctx.viewer!.login },
      repository: { pullRequest: { id: `PR_${pull.id}`, reviews: { nodes: pending.map((r) => ({ id: `PRR_${r.id}`, author: actor(r.author) })) } } },
    };
  },
  StartPendingReview: (op) => {
    const where = repos(op)
      .flatMap((repo) => repo.issues.filter((i) => i.pull).map((pull) => ({ repo, pull })))
      .find((x) => `PR_${x.pull.id}` === op.vars.pullRequestId);
    if (!where) throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.pullRequestId)}'`, ['addPullRequestReview']);
    checkToken(op, ['addPullRequestReview']);
    const head = where.repo.refs.get(`heads/${where.pull.pull!.head}`) ?? '';
    const commit = str(op.vars.commitOID) || head;
    if (!where.repo.commits.has(commit)) throw new GraphqlError('UNPROCESSABLE', `Could not resolve commit ${commit}`, ['addPullRequestReview']);
    const review = { id: op.ctx.state.id(), pull: where.pull.number, author: op.ctx.viewer!.login, state: 'PENDING' as const, body: str(op.vars.body), commitId: commit, submittedAt: op.ctx.state.now() };
    where.repo.reviews.push(review);
    return { addPullRequestReview: { pullRequestReview: { id: `PRR_${review.id}` } } };
  },
  AddPendingReviewComment: (op) => {
    const found = findReview(op, op.vars.pullRequestReviewId);
    if (!found || found.review.state !== 'PENDING') throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.pullRequestReviewId)}'`, ['addPullRequestReviewThread']);
    checkToken(op, ['addPullRequestReviewThread']);
    const pull = found.repo.issues.find((i) => i.number === found.review.pull)!;
    const changed = new Set(changedPaths(found.repo, pull));
    const path = str(op.vars.path);
    // GitHub answers a thread on a path outside the diff with a null thread and an error.
    if (!changed.has(path)) throw new GraphqlError('UNPROCESSABLE', 'Path could not be resolved', ['addPullRequestReviewThread']);
    const line = typeof op.vars.line === 'number' ? op.vars.line : null;
    const side = op.vars.side === 'LEFT' || op.vars.side === 'RIGHT' ? op.vars.side : null;
    const startSide = op.vars.startSide === 'LEFT' || op.vars.startSide === 'RIGHT' ? op.vars.startSide : null;
    const thread: FakeReviewThread = {
      id: op.ctx.state.id(),
      pull: pull.number,
      reviewId: found.review.id,
      path,
      line,
      startLine: typeof op.vars.startLine === 'number' ? op.vars.startLine : null,
      side,
      startSide,
      resolved: false,
      resolvedBy: null,
      outdated: false,
      comments: [{ id: op.ctx.state.id(), author: op.ctx.viewer!.login, body: str(op.vars.body), createdAt: op.ctx.state.now() }],
    };
    (found.repo.reviewThreads ??= []).push(thread);
    return { addPullRequestReviewThread: { thread: { id: `PRRT_${thread.id}` } } };
  },
  SubmitPendingReview: (op) => {
    const found = findReview(op, op.vars.pullRequestReviewId);
    if (!found || found.review.state !== 'PENDING') throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.pullRequestReviewId)}'`, ['submitPullRequestReview']);
    checkToken(op, ['submitPullRequestReview']);
    const states = { APPROVE: 'APPROVED', REQUEST_CHANGES: 'CHANGES_REQUESTED', COMMENT: 'COMMENTED' } as const;
    const event = str(op.vars.event) as keyof typeof states;
    if (!(event in states)) throw new GraphqlError('UNPROCESSABLE', `Invalid event ${event}`, ['submitPullRequestReview']);
    found.review.state = states[event];
    if (typeof op.vars.body === 'string') found.review.body = op.vars.body;
    found.review.submittedAt = op.ctx.state.now();
    const html = op.ctx.web(`/${found.repo.owner}/${found.repo.name}/pull/${found.review.pull}#pullrequestreview-${found.review.id}`);
    return { submitPullRequestReview: { pullRequestReview: { id: `PRR_${found.review.id}`, state: found.review.state, url: html } } };
  },
  DeletePendingReview: (op) => {
    const found = findReview(op, op.vars.pullRequestReviewId);
    if (!found || found.review.state !== 'PENDING') throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.pullRequestReviewId)}'`, ['deletePullRequestReview']);
    checkToken(op, ['deletePullRequestReview']);
    found.repo.reviews.splice(found.repo.reviews.indexOf(found.review), 1);
    found.repo.reviewThreads = (found.repo.reviewThreads ?? []).filter((t) => t.reviewId !== found.review.id);
    return { deletePullRequestReview: { pullRequestReview: { id: `PRR_${found.review.id}` } } };
  },
  ReviewThreads: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const pull = pullOf(repo, op.vars.number);
    if (!pull) throw new GraphqlError('NOT_FOUND', `Could not resolve to a PullRequest with the number of ${String(op.vars.number)}.`, ['repository', 'pullRequest']);
    const per = int(op.vars.comments, 10);
    return {
      repository: {
        pullRequest: {
          reviewThreads: connection(visibleThreads(op, repo, pull.number), op.vars, (t) => ({
            id: `PRRT_${t.id}`,
            isResolved: t.resolved,
            isOutdated: t.outdated,
            path: t.path,
            line: t.line,
            startLine: t.startLine,
            diffSide: t.side,
            resolvedBy: actor(t.resolvedBy),
            comments: { totalCount: t.comments.length, nodes: t.comments.slice(0, per).map((c) => ({ author: actor(c.author), body: c.body, createdAt: c.createdAt })) },
          })),
        },
      },
    };
  },
  ReviewThreadOf: (op) => {
    const repo = repository(op, op.vars.owner, op.vars.name);
    const pull = pullOf(repo, op.vars.number);
    const found = findThread(op, str(op.vars.thread));
    const threadPull = found ? found.repo.issues.find((i) => i.number === found.thread.pull) : undefined;
    return {
      repository: { pullRequest: pull ? { id: `PR_${pull.id}` } : null },
      node: found && threadPull ? { id: `PRRT_${found.thread.id}`, isResolved: found.thread.resolved, pullRequest: { id: `PR_${threadPull.id}` } } : null,
    };
  },
  ResolveReviewThread: (op) => setResolved(op, true),
  UnresolveReviewThread: (op) => setResolved(op, false),
};

function setResolved(op: Op, resolved: boolean): unknown {
  const field = resolved ? 'resolveReviewThread' : 'unresolveReviewThread';
  const found = findThread(op, str(op.vars.threadId));
  if (!found) throw new GraphqlError('NOT_FOUND', `Could not resolve to a node with the global id of '${str(op.vars.threadId)}'`, [field]);
  checkToken(op, [field]);
  const role = op.ctx.state.permissionOf(found.repo, op.ctx.viewer?.login);
  if (role === undefined || role === 'read' || role === 'triage') throw forbidden([field]);
  found.thread.resolved = resolved;
  found.thread.resolvedBy = resolved ? op.ctx.viewer!.login : null;
  return { [field]: { thread: { id: `PRRT_${found.thread.id}`, isResolved: resolved } } };
}

/** Paths a pull request changes: those whose blob differs between base and head. */
function changedPaths(repo: FakeRepo, pull: FakeRepo['issues'][number]): string[] {
  const filesAt = (ref: string): Map<string, string> => {
    const sha = repo.refs.get(`heads/${ref}`);
    const commit = sha ? repo.commits.get(sha) : undefined;
    return commit ? (repo.trees.get(commit.tree) ?? new Map<string, string>()) : new Map<string, string>();
  };
  const base = filesAt(pull.pull!.base);
  const head = filesAt(pull.pull!.head);
  return [...head.keys()].filter((p) => base.get(p) !== head.get(p));
}

export const graphqlHandler: Handler = (ctx) => {
  const operation = graphqlOperationOf(ctx.req.body);
  if (!operation) return json({ message: 'Problems parsing JSON', documentation_url: 'https://docs.github.com/graphql' }, 400);
  if (!ctx.viewer) return json({ message: 'This endpoint requires you to be authenticated.', documentation_url: 'https://docs.github.com/graphql/guides/forming-calls-with-graphql#authenticating-with-graphql' }, 401);
  const resolve = OPERATIONS[operation.name];
  if (!resolve) return json({ errors: [{ message: `No operation ${JSON.stringify(operation.name)} in this fake`, locations: [{ line: 1, column: 1 }] }] });
  try {
    return json({ data: resolve({ ctx, vars: operation.variables, name: operation.name }) });
  } catch (error) {
    if (!(error instanceof GraphqlError)) throw error;
    return json({ data: null, errors: [{ type: error.type, path: error.path, locations: [{ line: 2, column: 3 }], message: error.message }] });
  }
};
