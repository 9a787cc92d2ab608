import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, pathSegment, repoParams, text } from '../params.js';
import { clip, count, firstLine, listing, nextPage, paging, parts, userText, when } from '../present.js';

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), { message: 'an ISO 8601 date, e.g. 2025-01-31 or 2025-01-31T12:00:00Z' });

export const listCommits = githubTool({
  name: 'list_commits',
  toolset: 'repos',
  description: 'Lists commits from sha, newest first.',
  input: z.object({
    ...repoParams,
    sha: text.optional(),
    path: text.optional(),
    since: isoDate.optional(),
    ...pageParams,
  }),
  annotations: { title: 'List commits', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async ({ owner, repo, sha, path, since, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.repos.listCommits({
      owner,
      repo,
      ...page,
      ...(sha ? { sha } : {}),
      ...(path ? { path } : {}),
      ...(since ? { since: new Date(since).toISOString() } : {}),
    });
    const lines = data.map((c) => `${c.sha.slice(0, 7)} ${when(c.commit.author?.date)} ${c.author?.login ? `@${c.author.login}` : (c.commit.author?.name ?? '?')}: ${firstLine(c.commit.message)}`);
    return listing(`Commits of ${fullName(owner, repo)}${sha ? ` at ${sha}` : ''}${path ? ` touching ${path}` : ''}:`, lines, nextPage(headers.link, page.page));
  },
});

export const getCommit = githubTool({
  name: 'get_commit',
  toolset: 'repos',
  description: 'A commit: message, author, files and diff.',
  input: z.object({ ...repoParams, sha: pathSegment, include_diff: z.boolean().optional() }),
  aliases: { includeDiff: 'include_diff' },
  annotations: { title: 'Get commit', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Contents: read',
  run: async ({ owner, repo, sha, include_diff: includeDiff = true }, { api, config }) => {
    const { data: c } = await api.rest.repos.getCommit({ owner, repo, ref: sha });
    const files = c.files ?? [];
    const head = [
      `Commit ${c.sha} in ${fullName(owner, repo)}`,
      parts(`author ${c.author?.login ? `@${c.author.login}` : (c.commit.author?.name ?? '?')}`, when(c.commit.author?.date), c.parents.length > 1 ? `merge of ${c.parents.map((p) => p.sha.slice(0, 7)).join(', ')}` : ''),
      c.stats ? `${files.length} files changed, +${c.stats.additions ?? 0} -${c.stats.deletions ?? 0}` : '',
      `Message:\n${userText(c.commit.message, config.limits.maxTextChars)}`,
      'Files:',
      ...files.map((f) => `${f.status} ${f.previous_filename ? `${f.previous_filename} -> ` : ''}${f.filename} (+${count(f.additions)} -${count(f.deletions)})`),
    ].filter(Boolean);
    if (!includeDiff) return head.join('\n');
    // Diffs are code: shown exactly as GitHub has them, never sanitised, only capped.
    const diff = files.map((f) => `--- ${f.filename}\n${f.patch ?? '(no patch: binary or too large for GitHub to show)'}`).join('\n');
    return `${head.join('\n')}\n\nDiff:\n${clip(diff, config.limits.maxDiffChars)}`;
  },
});
