import { z } from 'zod';
import type { PromptDefinition } from '@suite/shared';
import { commitInstructions, commitStyle } from '../commit-message.js';
import { hasChanges } from '../git/diff.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, optionalRepository, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  changes: z.string().max(200_000).optional().describe('The changes to describe (a diff or a description). Omitted: the staged changes of the repository.'),
  repo: repoArgument,
});

export function gitCommitPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'git-commit',
    title: 'Write a commit message',
    description: 'Writes a commit message for the staged changes (attached as their diff), in the style of the repository’s recent commits. Or pass `changes` to describe those instead.',
    args,
    complete: { repo: repoCompleter(ws) },
    get: async ({ changes, repo: repoName }, ctx) => {
      if (changes !== undefined && changes.trim() !== '') {
        const repo = await optionalRepository(ws, ctx, repoName);
        const style = repo ? await commitStyle(repo, ctx.signal) : undefined;
        return { description: 'Write a commit message for the given changes', messages: [say(`${commitInstructions('these changes', style)}\n\nThe changes:\n\n${changes}`)] };
      }
      const repo = await ws.resolve(ctx, repoName, 'repo');
      const [staged, style] = await Promise.all([hasChanges(repo, 'staged', ctx.signal), commitStyle(repo, ctx.signal)]);
      if (!staged) {
        return {
          description: `Nothing is staged in ${repo.name}`,
          messages: [
            say(
              `Nothing is staged in ${repo.name}, so there is no commit message to write yet. Its status is attached: suggest which of the changes belong together in one commit, and how to stage them (git add <files>, or the git_add tool when it is available). Then run this prompt again.`,
            ),
            ...(await embed(ctx, gitUri.status(repo.name))),
          ],
        };
      }
      return {
        description: `Commit message for the staged changes in ${repo.name}`,
        messages: [say(commitInstructions(`the staged changes in ${repo.name} (their diff is attached)`, style)), ...(await embed(ctx, gitUri.staged(repo.name)))],
      };
    },
  };
}
