import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { checkDate, describeCommits, readLog } from '../git/log.js';
import { resolveRepoPath } from '../git/repo-paths.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';

const DATE_FORMS = "ISO 8601 (2024-01-15T14:30:25), relative ('2 weeks ago', 'yesterday') or absolute ('2024-01-15', 'Jan 15 2024')";

const input = z.object({
  repo_path: repoPath,
  max_count: z.number().int().min(1).max(1000).default(10).describe('Most commits to show (default 10).'),
  start_timestamp: z.string().max(64).optional().describe(`Only commits after this date: ${DATE_FORMS}.`),
  end_timestamp: z.string().max(64).optional().describe(`Only commits before this date: ${DATE_FORMS}.`),
  author: z.string().min(1).max(200).optional().describe('Only commits whose author name or email contains this text (case-insensitive).'),
  path: z.string().min(1).max(4096).optional().describe('Only commits that touch this file or directory (relative to the top of the repository; deleted files work too).'),
});

const output = z.object({
  repository: z.string(),
  commits: z.array(
    z.object({ hash: z.string(), parents: z.array(z.string()), author: z.string(), email: z.string(), date: z.string(), subject: z.string(), body: z.string() }),
  ),
  more: z.boolean().describe('More commits match than max_count allowed.'),
});

export function gitLog(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'git_log',
    toolset: 'inspect',
    description: 'Shows the commit history of the current branch, newest first, optionally filtered by date range, author and path. The output has the same shape whatever the filters.',
    input,
    output,
    annotations: { title: 'Show the commit history', ...READ_ONLY },
    handler: async ({ repo_path, max_count, start_timestamp, end_timestamp, author, path }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const since = start_timestamp !== undefined ? await checkDate(repo, start_timestamp, 'start_timestamp', ctx.signal) : undefined;
      const until = end_timestamp !== undefined ? await checkDate(repo, end_timestamp, 'end_timestamp', ctx.signal) : undefined;
      const only = path !== undefined ? (await resolveRepoPath(repo, path)).relative : undefined;
      const { commits, more } = await readLog(repo, {
        maxCount: max_count,
        ...(since ? { since } : {}),
        ...(until ? { until } : {}),
        ...(author ? { author } : {}),
        ...(only ? { path: only } : {}),
        signal: ctx.signal,
      });
      const text =
        commits.length === 0
          ? `No commits in ${repo.name} match.`
          : `Commit history of ${repo.name}:\n${describeCommits(commits)}${more ? `\n(More commits match: raise max_count above ${max_count} to see them.)` : ''}`;
      return { text, structured: { repository: repo.name, commits, more } };
    },
  };
}
