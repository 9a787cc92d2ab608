import { z } from 'zod';
import { ToolError } from '@suite/shared';
import { githubTool } from '../github-tool.js';
import { graphql, nextCursor, pageArgs } from '../github-graphql.js';
import type { GithubCall } from '../github-session.js';
import { fullName, issueNumberField, pageParams, repoParams, text } from '../params.js';
import { count, hiddenNote, listing, parts, userLine, userText, when, who } from '../present.js';

/**
 * Discussions, which only GitHub's GraphQL API has. Lists page by cursor (`after`), not by page
 * number. Bodies and comments are cleaned like every answer (upstream-hygiene.ts) and capped.
 */

type Login = { login?: string | null } | null;
interface Page<T> {
  totalCount?: number | null;
  pageInfo?: { hasNextPage?: boolean | null; endCursor?: string | null } | null;
  nodes?: (T | null)[] | null;
}
interface Category {
  id: string;
  name: string;
  slug?: string | null;
  description?: string | null;
  isAnswerable?: boolean | null;
}

const cursorParams = { after: z.string().optional(), per_page: pageParams.per_page };

/** Replies shown under each comment of get_discussion; more are counted, not shown. */
const REPLIES_SHOWN = 5;

const CATEGORIES = `query DiscussionCategories($owner: String!, $name: String!) {
  repository(owner: $owner, name: $name) { id discussionCategories(first: 100) { nodes { id name slug description isAnswerable } } }
}`;

async function categories(call: GithubCall, owner: string, repo: string): Promise<{ repositoryId: string; categories: Category[] }> {
  const data = await graphql<{ repository: { id: string; discussionCategories: Page<Category> } | null }>(call, { owner, repo }, CATEGORIES, { owner, name: repo });
  if (!data.repository) throw ToolError.notFound(`The repository ${fullName(owner, repo)} was not found.`);
  return { repositoryId: data.repository.id, categories: (data.repository.discussionCategories.nodes ?? []).filter((c): c is Category => c !== null) };
}

/** A category by name or slug, case-insensitively; a miss names the ones there are. */
async function categoryNamed(call: GithubCall, owner: string, repo: string, wanted: string): Promise<{ repositoryId: string; category: Category }> {
  const found = await categories(call, owner, repo);
  const key = wanted.trim().toLowerCase();
  const category = found.categories.find((c) => c.name.toLowerCase() === key || c.slug?.toLowerCase() === key);
  if (!category) {
    const names = found.categories.map((c) => userLine(c.name)).join(', ');
    throw ToolError.notFound(`${fullName(owner, repo)} has no discussion category ${JSON.stringify(wanted)}${names ? `; it has: ${names}` : ' (discussions may be off)'}.`);
  }
  return { repositoryId: found.repositoryId, category };
}

export const listDiscussionCategories = githubTool({
  name: 'list_discussion_categories',
  toolset: 'discussions',
  description: "A repository's discussion categories.",
  input: z.object({ ...repoParams }),
  annotations: { title: 'Discussion categories', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Discussions: read',
  run: async ({ owner, repo }, call) => {
    const found = await categories(call, owner, repo);
    const lines = found.categories.map((c) => parts(userLine(c.name), c.slug ? `slug ${userLine(c.slug)}` : '', c.isAnswerable ? 'answerable' : '', userLine(c.description)));
    return listing(`Discussion categories of ${fullName(owner, repo)}:`, lines, '', 'None (discussions may be off).');
  },
});

const LIST = `query ListDiscussions($owner: String!, $name: String!, $first: Int!, $after: String, $categoryId: ID) {
  repository(owner: $owner, name: $name) {
    discussions(first: $first, after: $after, categoryId: $categoryId, orderBy: {field: UPDATED_AT, direction: DESC}) {
      totalCount pageInfo { hasNextPage endCursor }
      nodes { number title author { login } category { name } updatedAt closed isAnswered comments { totalCount } }
    }
  }
}`;

interface DiscussionItem {
  number: number;
  title: string;
  author: Login;
  category: { name: string } | null;
  updatedAt: string;
  closed: boolean;
  isAnswered: boolean | null;
  comments: { totalCount: number };
}

export const listDiscussions = githubTool({
  name: 'list_discussions',
  toolset: 'discussions',
  description: 'Discussions, recently updated first; category by name or slug.',
  input: z.object({ ...repoParams, category: z.string().optional(), ...cursorParams }),
  annotations: { title: 'List discussions', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Discussions: read',
  run: async ({ owner, repo, category, ...rest }, call) => {
    const categoryId = category !== undefined ? (await categoryNamed(call, owner, repo, category)).category.id : null;
    const data = await graphql<{ repository: { discussions: Page<DiscussionItem> } | null }>(call, { owner, repo }, LIST, { owner, name: repo, ...pageArgs(rest), categoryId });
    if (!data.repository) throw ToolError.notFound(`The repository ${fullName(owner, repo)} was not found.`);
    const page = data.repository.discussions;
    const nodes = (page.nodes ?? []).filter((d): d is DiscussionItem => d !== null);
    const { items, hidden } = await call.trusted(owner, repo, nodes, (d) => d.author?.login);
    const lines = items.map((d) =>
      parts(`#${d.number} ${userLine(d.title)}`, who(d.author), d.category ? userLine(d.category.name) : '', d.closed ? 'closed' : 'open', d.isAnswered ? 'answered' : '', `${count(d.comments.totalCount)} comments`, `updated ${when(d.updatedAt)}`),
    );
    return listing(`Discussions in ${fullName(owner, repo)}${category !== undefined ? ` (${userLine(category)})` : ''}:`, lines, `${hiddenNote(hidden)}${nextCursor(page.pageInfo, nodes.length, page.totalCount)}`);
  },
});

const GET = `query GetDiscussion($owner: String!, $name: String!, $number: Int!, $first: Int!, $after: String, $replies: Int!) {
  repository(owner: $owner, name: $name) {
    discussion(number: $number) {
      title body url closed isAnswered createdAt author { login } category { name }
      comments(first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor }
        nodes { id body createdAt isAnswer author { login } replies(first: $replies) { totalCount nodes { id body createdAt author { login } } } }
      }
    }
  }
}`;

interface Reply {
  id: string;
  body: string;
  createdAt: string;
  author: Login;
}
interface DiscussionComment extends Reply {
  isAnswer: boolean | null;
  replies: Page<Reply>;
}
interface Discussion {
  title: string;
  body: string;
  url: string;
  closed: boolean;
  isAnswered: boolean | null;
  createdAt: string;
  author: Login;
  category: { name: string } | null;
  comments: Page<DiscussionComment>;
}

export const getDiscussion = githubTool({
  name: 'get_discussion',
  toolset: 'discussions',
  description: 'A discussion, a page of its comments and their first replies.',
  input: z.object({ ...repoParams, discussion_number: issueNumberField, ...cursorParams }),
  annotations: { title: 'Get discussion', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Discussions: read',
  run: async ({ owner, repo, discussion_number, ...rest }, call) => {
    const data = await graphql<{ repository: { discussion: Discussion | null } | null }>(call, { owner, repo }, GET, { owner, name: repo, number: discussion_number, ...pageArgs(rest, 20), replies: REPLIES_SHOWN });
    const d = data.repository?.discussion;
    if (!d) throw ToolError.notFound(`Not found: discussion #${discussion_number} in ${fullName(owner, repo)}. Check the number (list_discussions).`);
    await call.requireTrusted(owner, repo, d.author?.login, `discussion #${discussion_number}`);
    const max = call.config.limits.maxTextChars;
    const nodes = (d.comments.nodes ?? []).filter((c): c is DiscussionComment => c !== null);
    const { items, hidden } = await call.trusted(owner, repo, nodes, (c) => c.author?.login);
    const blocks: string[] = [];
    for (const c of items) {
      const replies = (c.replies.nodes ?? []).filter((r): r is Reply => r !== null);
      const shown = await call.trusted(owner, repo, replies, (r) => r.author?.login);
      const lines = [`[${c.id}] ${who(c.author)} at ${when(c.createdAt)}${c.isAnswer ? ' (answer)' : ''}:\n${userText(c.body, max)}`];
      for (const r of shown.items) lines.push(`  reply [${r.id}] ${who(r.author)} at ${when(r.createdAt)}:\n  ${userText(r.body, max).replace(/\n/g, '\n  ')}`);
      const more = (c.replies.totalCount ?? replies.length) - shown.items.length;
      if (more > 0) lines.push(`  [${more} more ${more === 1 ? 'reply' : 'replies'} not shown]`);
      blocks.push(lines.join('\n'));
    }
    const head = [
      `Discussion ${fullName(owner, repo)}#${discussion_number}: ${userLine(d.title)}`,
      parts(who(d.author), d.category ? userLine(d.category.name) : '', d.closed ? 'closed' : 'open', d.isAnswered ? 'answered' : '', when(d.createdAt)),
      d.url,
      '',
      userText(d.body, max),
      '',
      `Comments (${d.comments.totalCount ?? nodes.length}):`,
    ].join('\n');
    return `${head}\n${blocks.length ? blocks.join('\n\n') : 'None.'}${hiddenNote(hidden)}${nextCursor(d.comments.pageInfo, nodes.length, d.comments.totalCount)}`;
  },
});

const CREATE = `mutation CreateDiscussion($repositoryId: ID!, $categoryId: ID!, $title: String!, $body: String!) {
  createDiscussion(input: {repositoryId: $repositoryId, categoryId: $categoryId, title: $title, body: $body}) { discussion { number url } }
}`;

export const createDiscussion = githubTool({
  name: 'create_discussion',
  toolset: 'discussions',
  description: 'Starts a discussion in a category (name or slug).',
  input: z.object({ ...repoParams, category: text, title: text, body: text }),
  annotations: { title: 'Create discussion', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Discussions: write',
  run: async ({ owner, repo, category, title, body }, call) => {
    const target = await categoryNamed(call, owner, repo, category);
    const data = await graphql<{ createDiscussion: { discussion: { number: number; url: string } } }>(call, { owner, repo }, CREATE, {
      repositoryId: target.repositoryId,
      categoryId: target.category.id,
      title,
      body,
    });
    const created = data.createDiscussion.discussion;
    return `Created discussion ${fullName(owner, repo)}#${created.number} in ${userLine(target.category.name)}: ${created.url}`;
  },
});

const DISCUSSION_ID = `query DiscussionId($owner: String!, $name: String!, $number: Int!) {
  repository(owner: $owner, name: $name) { discussion(number: $number) { id } }
}`;
const REPLY_TARGET = `query DiscussionReplyTarget($owner: String!, $name: String!, $number: Int!, $comment: ID!) {
  repository(owner: $owner, name: $name) { discussion(number: $number) { id } }
  node(id: $comment) { ... on DiscussionComment { discussion { id } replyTo { id } } }
}`;
const COMMENT = `mutation AddDiscussionComment($discussionId: ID!, $body: String!, $replyToId: ID) {
  addDiscussionComment(input: {discussionId: $discussionId, body: $body, replyToId: $replyToId}) { comment { id url } }
}`;

export const addDiscussionComment = githubTool({
  name: 'add_discussion_comment',
  toolset: 'discussions',
  description: 'Comments on a discussion; with reply_to (a comment id from get_discussion), replies.',
  input: z.object({ ...repoParams, discussion_number: issueNumberField, body: text, reply_to: z.string().optional() }),
  annotations: { title: 'Comment on discussion', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Discussions: write',
  run: async ({ owner, repo, discussion_number, body, reply_to }, call) => {
    const missing = (): ToolError => ToolError.notFound(`Not found: discussion #${discussion_number} in ${fullName(owner, repo)}. Check the number (list_discussions).`);
    let discussionId: string;
    if (reply_to === undefined) {
      const data = await graphql<{ repository: { discussion: { id: string } | null } | null }>(call, { owner, repo }, DISCUSSION_ID, { owner, name: repo, number: discussion_number });
      discussionId = data.repository?.discussion?.id ?? '';
      if (!discussionId) throw missing();
    } else {
      // The comment must be a top-level comment of this very discussion: an id alone could name one anywhere.
      const data = await graphql<{ repository: { discussion: { id: string } | null } | null; node: { discussion?: { id: string } | null; replyTo?: { id: string } | null } | null }>(
        call,
        { owner, repo },
        REPLY_TARGET,
        { owner, name: repo, number: discussion_number, comment: reply_to },
      );
      discussionId = data.repository?.discussion?.id ?? '';
      if (!discussionId) throw missing();
      if (data.node?.discussion?.id !== discussionId) throw ToolError.notFound(`${JSON.stringify(reply_to)} is not a comment of discussion #${discussion_number} in ${fullName(owner, repo)}; get_discussion shows the ids.`);
      if (data.node.replyTo) throw ToolError.invalidArgument(`${JSON.stringify(reply_to)} is itself a reply; GitHub nests replies one level deep, so reply to the comment it answers (${data.node.replyTo.id}).`);
    }
    const data = await graphql<{ addDiscussionComment: { comment: { id: string; url: string } } }>(call, { owner, repo }, COMMENT, { discussionId, body, replyToId: reply_to ?? null });
    const comment = data.addDiscussionComment.comment;
    return `${reply_to ? 'Replied' : 'Commented'} on ${fullName(owner, repo)}#${discussion_number} (comment ${comment.id}): ${comment.url}`;
  },
});
