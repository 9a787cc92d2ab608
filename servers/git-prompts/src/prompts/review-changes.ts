import { z } from 'zod';
import type { PromptDefinition } from '@suite/shared';
import { completeRef } from '../completion.js';
import { hasChanges } from '../git/diff.js';
import { hasCommits, resolveRevision } from '../git/revisions.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  base: z
    .string()
    .max(256)
    .optional()
    .describe("What to review: 'staged', 'unstaged', or a branch, tag or commit to review HEAD's changes since it (e.g. main). Default: the staged changes, else the unstaged ones, else the last commit."),
  focus: z.string().max(500).optional().describe('Something to look at especially, e.g. security, performance, error handling.'),
  repo: repoArgument,
});

const CHECKLIST = [
  'Review these changes as a careful senior engineer would before approving them.',
  'For each finding give the file and line, a severity (blocking, should fix, nit), what is wrong and a concrete fix.',
  'Look for: bugs and unhandled edge cases; error handling; security (injection, secrets, unchecked input, permissions); missing or weak tests for new behaviour; names and structure that will confuse the next reader; performance traps.',
  'Do not restate the diff. Say briefly what is good, and end with a verdict: approve, approve with changes, or needs another round.',
  'If the diff was cut (a note at its end names what was left out), say which files you could not review.',
].join('\n');

export function reviewChangesPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'review-changes',
    title: 'Review changes',
    description: 'A code review of the staged changes, the unstaged ones, or everything since a branch or tag (the diff is attached). With no argument: staged, else unstaged, else the last commit.',
    args,
    complete: {
      base: (value, context, ctx) => completeRef(ws, ctx, context.arguments.repo, value, ['staged', 'unstaged']),
      focus: (value) => ['security', 'performance', 'error handling', 'tests', 'readability'].filter((f) => f.startsWith(value.toLowerCase())),
      repo: repoCompleter(ws),
    },
    get: async ({ base, focus, repo: repoName }, ctx) => {
      const repo = await ws.resolve(ctx, repoName, 'repo');
      let what: string;
      let uri: string;
      const choice = base?.trim() || undefined;
      if (choice === 'staged' || (choice === undefined && (await hasChanges(repo, 'staged', ctx.signal)))) {
        [what, uri] = ['the staged changes', gitUri.staged(repo.name)];
      } else if (choice === 'unstaged' || (choice === undefined && (await hasChanges(repo, 'unstaged', ctx.signal)))) {
        [what, uri] = ['the unstaged changes', gitUri.unstaged(repo.name)];
      } else if (choice === undefined) {
        if (!(await hasCommits(repo, ctx.signal))) {
          return {
            description: `Nothing to review in ${repo.name}`,
            messages: [say(`${repo.name} has no commits yet and nothing staged or changed in its working tree, so there is nothing to review.`)],
          };
        }
        [what, uri] = ['the last commit (nothing is staged or changed in the working tree)', gitUri.show(repo.name, 'HEAD')];
      } else {
        // Checked here so a typo gets a clear answer rather than an error from the attached resource.
        await resolveRevision(repo, choice, { peel: 'commit', what: 'base', signal: ctx.signal });
        [what, uri] = [`the changes on HEAD since it left ${choice}`, gitUri.compare(repo.name, `${choice}...HEAD`)];
      }
      const intro = `Review ${what} in ${repo.name} (the diff is attached).${focus ? ` Pay special attention to ${focus}.` : ''}\n\n${CHECKLIST}`;
      return { description: `Review ${what} in ${repo.name}`, messages: [say(intro), ...(await embed(ctx, uri))] };
    },
  };
}
