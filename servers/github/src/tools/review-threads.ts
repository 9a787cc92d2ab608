import { z } from 'zod';
import { ToolError } from '@suite/shared';
import { githubTool } from '../github-tool.js';
import { graphql, nextCursor, pageArgs } from '../github-graphql.js';
import type { GithubCall } from '../github-session.js';
import { fullName, issueNumberField, pageParams, positiveInt, repoParams, text } from '../params.js';
import { hiddenNote, listing, parts, userText, when, who } from '../present.js';
import { filePathField } from '../repo-paths.js';

/**
 * A pending review (the viewer's own draft of a review, which only they see) built up comment by
 * comment on lines or ranges, then submitted; and review threads with their resolved state. Both
 * through GitHub's GraphQL API, which alone has comments on a pending review and resolving.
 */

const prParams = { ...repoParams, pull_number: issueNumberField };
const side = z.enum(['LEFT', 'RIGHT']);

const PENDING = `query PendingReview($owner: String!, $name: String!, $number: Int!) {
  viewer { login }
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { id reviews(first: 20, states: PENDING) { nodes { id author { login } } } } }
}`;

interface PendingAnswer {
  viewer: { login: string };
  repository: { pullRequest: { id: string; reviews: { nodes: ({ id: string; author: { login: string } | null } | null)[] | null } } | null } | null;
}

/** The pull request's id and the viewer's pending review on it, if any (GitHub shows a pending review to its author alone). */
async function pendingReview(call: GithubCall, owner: string, repo: string, number: number): Promise<{ pullRequestId: string; reviewId: string | undefined }> {
  const data = await graphql<PendingAnswer>(call, { owner, repo }, PENDING, { owner, name: repo, number });
  const pull = data.repository?.pullRequest;
  if (!pull) throw ToolError.notFound(`Not found: pull request #${number} in ${fullName(owner, repo)}. Check the number.`);
  const mine = (pull.reviews.nodes ?? []).find((r) => r?.author?.login?.toLowerCase() === data.viewer.login.toLowerCase());
  return { pullRequestId: pull.id, reviewId: mine?.id };
}

async function requirePending(call: GithubCall, owner: string, repo: string, number: number): Promise<string> {
  const { reviewId } = await pendingReview(call, owner, repo, number);
  if (!reviewId) throw ToolError.notFound(`You have no pending review on ${fullName(owner, repo)}#${number}: start one with create_pending_pull_request_review.`);
  return reviewId;
}

const START = `mutation StartPendingReview($pullRequestId: ID!, $commitOID: GitObjectID, $body: String) {
  addPullRequestReview(input: {pullRequestId: $pullRequestId, commitOID: $commitOID, body: $body}) { pullRequestReview { id } }
}`;

export const createPendingPullRequestReview = githubTool({
  name: 'create_pending_pull_request_review',
  toolset: 'review_threads',
  description: 'Starts your pending review of a PR (at commit_id, default head).',
  input: z.object({ ...prParams, commit_id: z.string().optional(), body: z.string().optional() }),
  annotations: { title: 'Start pending review', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number, commit_id, body }, call) => {
    const pending = await pendingReview(call, owner, repo, pull_number);
    if (pending.reviewId) {
      throw ToolError.conflict(`You already have a pending review on ${fullName(owner, repo)}#${pull_number}: add comments to it, submit it or delete it.`);
    }
    const data = await graphql<{ addPullRequestReview: { pullRequestReview: { id: string } } }>(call, { owner, repo }, START, { pullRequestId: pending.pullRequestId, commitOID: commit_id ?? null, body: body ?? null });
    return `Started a pending review ${data.addPullRequestReview.pullRequestReview.id} of ${fullName(owner, repo)}#${pull_number}; only you see it until it is submitted.`;
  },
});

const ADD_THREAD = `mutation AddPendingReviewComment($pullRequestReviewId: ID!, $path: String!, $body: String!, $line: Int, $side: DiffSide, $startLine: Int, $startSide: DiffSide, $subjectType: PullRequestReviewThreadSubjectType) {
  addPullRequestReviewThread(input: {pullRequestReviewId: $pullRequestReviewId, path: $path, body: $body, line: $line, side: $side, startLine: $startLine, startSide: $startSide, subjectType: $subjectType}) { thread { id } }
}`;

export const addPendingReviewComment = githubTool({
  name: 'add_pending_review_comment',
  toolset: 'review_threads',
  description: 'Comments in your pending review on line (or start_line..line) of side (RIGHT: new code); no line: the file.',
  input: z.object({ ...prParams, path: filePathField, body: text, line: positiveInt.optional(), side: side.optional(), start_line: positiveInt.optional(), start_side: side.optional() }),
  annotations: { title: 'Comment in pending review', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number, path, body, line, side: lineSide, start_line, start_side }, call) => {
    if (line === undefined && (start_line !== undefined || lineSide !== undefined || start_side !== undefined)) {
      throw ToolError.invalidArgument('side, start_line and start_side need line: give the last line of the comment, or none of them for a comment on the whole file.');
    }
    if (start_line !== undefined && line !== undefined && start_line >= line) throw ToolError.invalidArgument(`start_line (${start_line}) must come before line (${line}); for one line, leave start_line out.`);
    const reviewId = await requirePending(call, owner, repo, pull_number);
    const data = await graphql<{ addPullRequestReviewThread: { thread: { id: string } | null } }>(call, { owner, repo }, ADD_THREAD, {
      pullRequestReviewId: reviewId,
      path,
      body,
      line: line ?? null,
      side: line !== undefined ? (lineSide ?? 'RIGHT') : null,
      startLine: start_line ?? null,
      startSide: start_line !== undefined ? (start_side ?? lineSide ?? 'RIGHT') : null,
      subjectType: line === undefined ? 'FILE' : 'LINE',
    });
    const thread = data.addPullRequestReviewThread.thread;
    if (!thread) throw ToolError.invalidArgument(`GitHub did not add the comment on ${path}: the line may not be part of the diff of ${fullName(owner, repo)}#${pull_number}.`);
    const where = line === undefined ? path : `${path}:${start_line !== undefined ? `${start_line}-` : ''}${line} (${lineSide ?? 'RIGHT'})`;
    return `Added a comment on ${where} to your pending review of ${fullName(owner, repo)}#${pull_number} (thread ${thread.id}).`;
  },
});

const SUBMIT = `mutation SubmitPendingReview($pullRequestReviewId: ID!, $event: PullRequestReviewEvent!, $body: String) {
  submitPullRequestReview(input: {pullRequestReviewId: $pullRequestReviewId, event: $event, body: $body}) { pullRequestReview { id state url } }
}`;

export const submitPendingPullRequestReview = githubTool({
  name: 'submit_pending_pull_request_review',
  toolset: 'review_threads',
  description: 'Submits your pending review with its comments.',
  input: z.object({ ...prParams, event: z.enum(['APPROVE', 'REQUEST_CHANGES', 'COMMENT']), body: z.string().optional() }),
  annotations: { title: 'Submit pending review', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number, event, body }, call) => {
    const reviewId = await requirePending(call, owner, repo, pull_number);
    const data = await graphql<{ submitPullRequestReview: { pullRequestReview: { state: string; url: string } } }>(call, { owner, repo }, SUBMIT, { pullRequestReviewId: reviewId, event, body: body ?? null });
    const review = data.submitPullRequestReview.pullRequestReview;
    return `Submitted your review of ${fullName(owner, repo)}#${pull_number} (${review.state}): ${review.url}`;
  },
});

const DELETE = `mutation DeletePendingReview($pullRequestReviewId: ID!) {
  deletePullRequestReview(input: {pullRequestReviewId: $pullRequestReviewId}) { pullRequestReview { id } }
}`;

export const deletePendingPullRequestReview = githubTool({
  name: 'delete_pending_pull_request_review',
  toolset: 'review_threads',
  description: 'Deletes your pending review and its comments.',
  input: z.object({ ...prParams }),
  annotations: { title: 'Delete pending review', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number }, call) => {
    const reviewId = await requirePending(call, owner, repo, pull_number);
    await graphql(call, { owner, repo }, DELETE, { pullRequestReviewId: reviewId });
    return `Deleted your pending review of ${fullName(owner, repo)}#${pull_number} and its comments.`;
  },
});

/** Comments shown per thread; more are counted, not shown. */
const THREAD_COMMENTS = 10;

const THREADS = `query ReviewThreads($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String, $comments: Int!) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor }
        nodes { id isResolved isOutdated path line startLine diffSide resolvedBy { login } comments(first: $comments) { totalCount nodes { author { login } body createdAt } } }
      }
    }
  }
}`;

interface ThreadComment {
  author: { login?: string | null } | null;
  body: string;
  createdAt: string;
}
interface Thread {
  id: string;
  isResolved: boolean;
  isOutdated: boolean;
  path: string;
  line: number | null;
  startLine: number | null;
  diffSide: string | null;
  resolvedBy: { login?: string | null } | null;
  comments: { totalCount: number | null; nodes: (ThreadComment | null)[] | null };
}
interface ThreadPage {
  totalCount: number | null;
  pageInfo: { hasNextPage: boolean; endCursor: string | null } | null;
  nodes: (Thread | null)[] | null;
}

export const listReviewThreads = githubTool({
  name: 'list_review_threads',
  toolset: 'review_threads',
  description: "A PR's review threads: id, resolved, outdated, place, first comments.",
  input: z.object({ ...prParams, after: z.string().optional(), per_page: pageParams.per_page }),
  annotations: { title: 'Review threads', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: read',
  run: async ({ owner, repo, pull_number, ...rest }, call) => {
    const data = await graphql<{ repository: { pullRequest: { reviewThreads: ThreadPage } | null } | null }>(call, { owner, repo }, THREADS, {
      owner,
      name: repo,
      number: pull_number,
      ...pageArgs(rest, 20),
      comments: THREAD_COMMENTS,
    });
    const page = data.repository?.pullRequest?.reviewThreads;
    if (!page) throw ToolError.notFound(`Not found: pull request #${pull_number} in ${fullName(owner, repo)}. Check the number.`);
    const max = call.config.limits.maxTextChars;
    const threads = (page.nodes ?? []).filter((t): t is Thread => t !== null);
    let hidden = 0;
    const blocks: string[] = [];
    for (const t of threads) {
      const comments = (t.comments.nodes ?? []).filter((c): c is ThreadComment => c !== null);
      const kept = await call.trusted(owner, repo, comments, (c) => c.author?.login);
      hidden += kept.hidden;
      const place = `${t.path}${t.line !== null ? `:${t.startLine !== null && t.startLine !== t.line ? `${t.startLine}-` : ''}${t.line}` : ''}${t.diffSide ? ` (${t.diffSide})` : ''}`;
      const head = parts(`[${t.id}] ${place}`, t.isResolved ? `resolved${t.resolvedBy?.login ? ` by @${t.resolvedBy.login}` : ''}` : 'unresolved', t.isOutdated ? 'outdated' : '');
      const lines = kept.items.map((c) => `  ${who(c.author)} at ${when(c.createdAt)}:\n  ${userText(c.body, max).replace(/\n/g, '\n  ')}`);
      const more = (t.comments.totalCount ?? comments.length) - comments.length;
      if (more > 0) lines.push(`  [${more} more comments not shown]`);
      blocks.push([head, ...lines].join('\n'));
    }
    return listing(`Review threads of ${fullName(owner, repo)}#${pull_number}:`, blocks.length ? [blocks.join('\n\n')] : [], `${hiddenNote(hidden)}${nextCursor(page.pageInfo, threads.length, page.totalCount)}`);
  },
});

const THREAD_OF = `query ReviewThreadOf($owner: String!, $name: String!, $number: Int!, $thread: ID!) {
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { id } }
  node(id: $thread) { ... on PullRequestReviewThread { id isResolved pullRequest { id } } }
}`;
const RESOLVE = `mutation ResolveReviewThread($threadId: ID!) { resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } } }`;
const UNRESOLVE = `mutation UnresolveReviewThread($threadId: ID!) { unresolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } } }`;

export const resolveReviewThread = githubTool({
  name: 'resolve_review_thread',
  toolset: 'review_threads',
  description: 'Resolves a review thread, or reopens it (resolved: false).',
  input: z.object({ ...prParams, thread_id: text, resolved: z.boolean().optional() }),
  annotations: { title: 'Resolve review thread', readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  permission: 'Pull requests: write',
  run: async ({ owner, repo, pull_number, thread_id, resolved = true }, call) => {
    // The id alone could name a thread anywhere: it must be one of this pull request's.
    const data = await graphql<{ repository: { pullRequest: { id: string } | null } | null; node: { id?: string; isResolved?: boolean; pullRequest?: { id: string } | null } | null }>(
      call,
      { owner, repo },
      THREAD_OF,
      { owner, name: repo, number: pull_number, thread: thread_id },
    );
    const pull = data.repository?.pullRequest;
    if (!pull) throw ToolError.notFound(`Not found: pull request #${pull_number} in ${fullName(owner, repo)}. Check the number.`);
    if (!data.node?.pullRequest || data.node.pullRequest.id !== pull.id) {
      throw ToolError.notFound(`${JSON.stringify(thread_id)} is not a review thread of ${fullName(owner, repo)}#${pull_number}; list_review_threads shows the ids.`);
    }
    const what = resolved ? 'resolved' : 'unresolved';
    if (data.node.isResolved === resolved) return `Thread ${thread_id} on ${fullName(owner, repo)}#${pull_number} was already ${what}.`;
    await graphql(call, { owner, repo }, resolved ? RESOLVE : UNRESOLVE, { threadId: thread_id });
    return `Thread ${thread_id} on ${fullName(owner, repo)}#${pull_number} is now ${what}.`;
  },
});
