import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { resolveRevision } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';

const input = z.object({
  repo_path: repoPath,
  branch_type: z.enum(['local', 'remote', 'all']).default('local').describe("Which branches: 'local' (default), 'remote' (remote-tracking) or 'all'."),
  contains: z.string().min(1).max(256).optional().describe('Only branches that contain this commit.'),
  not_contains: z.string().min(1).max(256).optional().describe('Only branches that do not contain this commit.'),
});

const output = z.object({
  repository: z.string(),
  branches: z.array(z.object({ name: z.string(), current: z.boolean(), commit: z.string(), upstream: z.string().optional(), subject: z.string() })),
});

export function gitBranch(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'git_branch',
    toolset: 'inspect',
    description: 'Lists branches (local, remote-tracking or all), optionally only those that contain, or do not contain, a commit. The current branch is marked with *.',
    input,
    output,
    annotations: { title: 'List branches', ...READ_ONLY },
    handler: async ({ repo_path, branch_type, contains, not_contains }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const opts = { peel: 'commit' as const, signal: ctx.signal };
      const filters: string[] = [];
      if (contains !== undefined) filters.push(`--contains=${await resolveRevision(repo, contains, { ...opts, what: 'contains commit' })}`);
      if (not_contains !== undefined) filters.push(`--no-contains=${await resolveRevision(repo, not_contains, { ...opts, what: 'not_contains commit' })}`);
      const patterns = branch_type === 'local' ? ['refs/heads'] : branch_type === 'remote' ? ['refs/remotes'] : ['refs/heads', 'refs/remotes'];
      const out = await repo.read(
        ['for-each-ref', '--format=%(HEAD)%00%(refname)%00%(objectname)%00%(upstream:short)%00%(contents:subject)', ...filters, ...patterns],
        'Listing branches',
        { signal: ctx.signal },
      );
      const branches = out
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [head = '', ref = '', commit = '', upstream = '', subject = ''] = line.split('\0');
          const name = ref.replace(/^refs\/(heads|remotes)\//, '');
          return { name, current: head === '*', commit, ...(upstream ? { upstream } : {}), subject, remoteHead: ref.startsWith('refs/remotes/') && ref.endsWith('/HEAD') };
        })
        .filter((b) => !b.remoteHead)
        .map(({ remoteHead: _, ...b }) => b);
      const text =
        branches.length === 0
          ? `No ${branch_type === 'all' ? '' : `${branch_type} `}branches in ${repo.name} match.`
          : branches.map((b) => `${b.current ? '*' : ' '} ${b.name}  ${b.commit.slice(0, 10)}${b.upstream ? ` [${b.upstream}]` : ''} ${b.subject}`).join('\n');
      return { text, structured: { repository: repo.name, branches } };
    },
  };
}
