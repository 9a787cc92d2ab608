import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { describeStatus, readStatus } from '../git/status.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';

const input = z.object({ repo_path: repoPath });
const entry = z.object({ path: z.string(), from: z.string().optional(), change: z.string() });
const output = z.object({
  repository: z.string(),
  branch: z.string().optional(),
  head: z.string().optional(),
  upstream: z.string().optional(),
  ahead: z.number().int().optional(),
  behind: z.number().int().optional(),
  staged: z.array(entry),
  unstaged: z.array(entry),
  untracked: z.array(entry),
  conflicted: z.array(entry),
  complete: z.boolean().describe('False when git listed more than the server reads (64 MiB): the lists then hold only what was read.'),
});

export function gitStatus(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'git_status',
    toolset: 'inspect',
    description: 'Shows the working tree status: the branch and its upstream, and the staged, unstaged, untracked and conflicted files.',
    input,
    output,
    annotations: { title: 'Show the working tree status', ...READ_ONLY },
    handler: async ({ repo_path }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const status = await readStatus(repo, ctx.signal);
      const { branch, head, upstream, ahead, behind, staged, unstaged, untracked, conflicted, cutAt } = status;
      return {
        text: describeStatus(status, repo.name),
        structured: {
          repository: repo.name,
          ...(branch !== undefined ? { branch } : {}),
          ...(head !== undefined ? { head } : {}),
          ...(upstream !== undefined ? { upstream } : {}),
          ...(ahead !== undefined ? { ahead } : {}),
          ...(behind !== undefined ? { behind } : {}),
          staged,
          unstaged,
          untracked,
          conflicted,
          complete: cutAt === undefined,
        },
      };
    },
  };
}
