import { z } from 'zod';
import { countOf, type PromptDefinition } from '@suite/shared';
import { completeRange } from '../completion.js';
import { hasCommits, lastTag, resolveRange } from '../git/revisions.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  range: z.string().max(256).optional().describe('The commits to summarise: A..B, or a tag or branch for everything since it (default: since the last tag).'),
  repo: repoArgument,
});

const RECENT_WITHOUT_TAG = 50;

const INSTRUCTIONS = [
  'Summarise these changes for someone who has not followed the work:',
  '- One paragraph with the big picture first.',
  '- Then the notable changes grouped by theme (features, fixes, internal work), one sentence each.',
  '- Call out breaking changes and anything users or other developers must do.',
  'Stay under 300 words, and say only what the commits support.',
].join('\n');

export function summarizeChangesPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'summarize-changes',
    title: 'Summarise changes',
    description: 'Summarises the commits of a range (default: everything since the last tag), with their messages and a diff summary attached.',
    args,
    complete: { range: (value, context, ctx) => completeRange(ws, ctx, context.arguments.repo, value), repo: repoCompleter(ws) },
    get: async ({ range, repo: repoName }, ctx) => {
      const repo = await ws.resolve(ctx, repoName, 'repo');
      let spec = range?.trim() || undefined;
      let since: string;
      if (spec === undefined) {
        if (!(await hasCommits(repo, ctx.signal))) {
          return { description: `${repo.name} has no commits yet`, messages: [say(`${repo.name} has no commits yet, so there are no changes to summarise. Commit some work first.`)] };
        }
        const tag = await lastTag(repo, ctx.signal);
        if (tag === undefined) {
          const total = Number((await repo.read(['rev-list', '--count', `--max-count=${RECENT_WITHOUT_TAG}`, 'HEAD'], 'git rev-list', { signal: ctx.signal })).trim());
          const which = total === 1 ? 'the only commit' : total < RECENT_WITHOUT_TAG ? `all ${countOf(total, 'commit')}` : `the last ${countOf(RECENT_WITHOUT_TAG, 'commit')}`;
          return {
            description: `${which[0]!.toUpperCase()}${which.slice(1)} of ${repo.name}`,
            messages: [
              say(`Summarise the recent work in ${repo.name}: ${which} ${total === 1 ? 'is' : 'are'} attached (the repository has no tag to start from).\n\n${INSTRUCTIONS}`),
              ...(await embed(ctx, gitUri.log(repo.name, RECENT_WITHOUT_TAG))),
            ],
          };
        }
        spec = `${tag}..HEAD`;
        since = `since ${tag}`;
      } else {
        since = spec.includes('..') ? `in ${spec}` : `since ${spec}`;
      }
      const resolved = await resolveRange(repo, spec.includes('..') ? spec : `${spec}..HEAD`, ctx.signal);
      const count = Number((await repo.read(['rev-list', '--count', `${resolved.from}..${resolved.to}`, '--'], 'git rev-list', { signal: ctx.signal })).trim());
      if (count === 0) {
        return {
          description: `No commits ${since} in ${repo.name}`,
          messages: [say(`There are no commits ${since} in ${repo.name}, so there is nothing to summarise. Name another range (for example an older tag, or main..your-branch).`)],
        };
      }
      const stat = (await repo.read(['diff', '--shortstat', '--no-ext-diff', '--no-textconv', resolved.from, resolved.to, '--'], 'git diff', { signal: ctx.signal })).trim();
      return {
        description: `Summary of the changes ${since} in ${repo.name}`,
        messages: [
          say(`Summarise the changes ${since} in ${repo.name}. Their ${countOf(count, 'commit')} ${count === 1 ? 'is' : 'are'} attached${stat ? `; in all: ${stat}` : ''}.\n\n${INSTRUCTIONS}`),
          ...(await embed(ctx, gitUri.logRange(repo.name, spec))),
        ],
      };
    },
  };
}
