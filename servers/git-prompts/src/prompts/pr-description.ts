import { z } from 'zod';
import { countOf, ToolError, type PromptDefinition } from '@suite/shared';
import { completeRef } from '../completion.js';
import { BASE_CANDIDATES, currentBranch, defaultBase, hasCommits, resolveRevision } from '../git/revisions.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  base: z.string().max(256).optional().describe('The branch the pull request goes into (default: the default branch, e.g. main).'),
  repo: repoArgument,
});

const INSTRUCTIONS = [
  'Write the pull request description from the commits and the diff attached:',
  '- A title of at most 72 characters.',
  '- Summary: what the change does and why, in a short paragraph.',
  '- Changes: the notable changes as bullets, grouped by area.',
  '- Testing: how it was tested, or how a reviewer can check it.',
  '- Notes for reviewers, only when there are any: risks, breaking changes, migrations, follow-ups.',
  'Use Markdown. Say only what the commits and the diff support; if the diff was cut (a note at its end says so), rely on the commit messages for the rest.',
].join('\n');

export function prDescriptionPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'pr-description',
    title: 'Write a pull request description',
    description: 'Writes a pull request description for the current branch from its commits and its diff against the base branch (both attached).',
    args,
    complete: { base: (value, context, ctx) => completeRef(ws, ctx, context.arguments.repo, value), repo: repoCompleter(ws) },
    get: async ({ base, repo: repoName }, ctx) => {
      const repo = await ws.resolve(ctx, repoName, 'repo');
      const current = await currentBranch(repo, ctx.signal);
      if (!(await hasCommits(repo, ctx.signal))) {
        return {
          description: `${repo.name} has no commits yet`,
          messages: [say(`${repo.name} has no commits yet${current ? ` (${current} is still to be born)` : ''}, so there is no pull request to describe. Commit the work first.`)],
        };
      }
      const target = base?.trim() || (await defaultBase(repo, ctx.signal));
      if (!target) {
        if (current && BASE_CANDIDATES.includes(current)) {
          throw ToolError.invalidArgument(
            `${repo.name} is on ${current}, which is the branch a pull request would go into, and there is no other base to compare it with. Switch to the branch of the pull request (git_checkout), or give base.`,
          );
        }
        throw ToolError.invalidArgument(`${repo.name} has no main, master, trunk or develop branch (and no origin/HEAD) to compare with; give base.`);
      }
      const baseOid = await resolveRevision(repo, target, { peel: 'commit', what: 'base', signal: ctx.signal });
      const branch = current ?? 'HEAD';
      const count = Number((await repo.read(['rev-list', '--count', `${baseOid}..HEAD`], 'git rev-list', { signal: ctx.signal })).trim());
      if (count === 0) {
        return {
          description: `${branch} has nothing to merge into ${target}`,
          messages: [say(`${branch} in ${repo.name} has no commits that ${target} does not have, so there is nothing to describe yet. Commit the work on ${branch} first (or name another base).`)],
        };
      }
      return {
        description: `Pull request: ${branch} into ${target}`,
        messages: [
          say(`Write a pull request description for merging ${branch} into ${target} in ${repo.name} (${countOf(count, 'commit')}).\n\n${INSTRUCTIONS}`),
          ...(await embed(ctx, gitUri.logRange(repo.name, `${target}..HEAD`))),
          ...(await embed(ctx, gitUri.compare(repo.name, `${target}...HEAD`))),
        ],
      };
    },
  };
}
