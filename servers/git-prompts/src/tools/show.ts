import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { showRevision } from '../git/show.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';

const input = z.object({
  repo_path: repoPath,
  revision: z.string().min(1).max(256).describe('What to show: a commit, branch or tag (HEAD, main, v1.2.0, a1b2c3d), or a file at a revision (HEAD:src/app.ts).'),
});

export function gitShow(ws: Workspace): ToolDefinition<typeof input> {
  return {
    name: 'git_show',
    toolset: 'inspect',
    description:
      'Shows a commit (message and diff against its first parent, within the diff budget), a tag, a directory listing (HEAD:src) or a file as it was at a revision (HEAD:path/to/file).',
    input,
    annotations: { title: 'Show a commit or a file at a revision', ...READ_ONLY },
    handler: async ({ repo_path, revision }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      return (await showRevision(repo, revision, ws.config.budget, ctx.signal)).text;
    },
  };
}
