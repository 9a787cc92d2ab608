import { z } from 'zod';
import type { PromptDefinition } from '@suite/shared';
import { describeConflicts, readConflicts } from '../git/operations.js';
import type { Workspace } from '../workspace.js';
import { repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({ repo: repoArgument });

const INSTRUCTIONS = [
  'Resolve each conflict below. For every hunk you get our side, their side and, when git recorded it, the merge base (what both started from):',
  '- Work out what each side changed relative to the base, and keep both intentions where they are compatible.',
  '- When they truly contradict each other, say which side you keep and why, or ask.',
  '- Give the full resolved text of each conflicted region (no conflict markers), file by file.',
  'Then the way to continue is given at the end: write the files, stage them with git_add, and call the tool named there with action continue.',
].join('\n');

export function resolveConflictsPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'resolve-conflicts',
    title: 'Resolve conflicts',
    description: 'The conflicts of the merge, rebase, cherry-pick, revert or stash apply in progress: each conflicted hunk with both sides and the merge base, and how to continue afterwards.',
    args,
    complete: { repo: repoCompleter(ws) },
    get: async ({ repo: repoName }, ctx) => {
      const repo = await ws.resolve(ctx, repoName, 'repo');
      const report = await readConflicts(repo, ctx.signal);
      if (report.files.length === 0) {
        return {
          description: `No conflicts in ${repo.name}`,
          messages: [say(`There are no conflicted files in ${repo.name}${report.operation ? ` (${report.operation} is in progress: ${report.next})` : ''}, so there is nothing to resolve.`)],
        };
      }
      return {
        description: `Resolve the conflicts in ${repo.name}`,
        messages: [say(`${INSTRUCTIONS}\n\n${describeConflicts(report)}`)],
      };
    },
  };
}
