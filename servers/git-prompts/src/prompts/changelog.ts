import { z } from 'zod';
import { countOf, type PromptDefinition } from '@suite/shared';
import { isConventional } from '../commit-message.js';
import { completeRef } from '../completion.js';
import { readLog, type Commit } from '../git/log.js';
import { hasCommits, lastTag, resolveRange } from '../git/revisions.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  from: z.string().max(256).optional().describe('The tag (or commit) the changelog starts after (default: the last tag).'),
  repo: repoArgument,
});

const MAX_COMMITS = 300;

const GROUPS: [string, RegExp][] = [
  ['Breaking changes', /^[a-z]+(\([^)]*\))?!:/i],
  ['Features', /^feat/i],
  ['Fixes', /^fix/i],
  ['Performance', /^perf/i],
  ['Documentation', /^docs/i],
  ['Refactoring', /^refactor/i],
  ['Other (tests, build, CI, chores)', /^(test|tests|build|ci|chore|style|revert|deps)/i],
];

/** The commits grouped by Conventional Commit type, breaking changes first; the rest under "Not typed". */
export function groupByType(commits: Commit[]): string {
  const groups = new Map<string, string[]>();
  for (const c of commits) {
    if (c.parents.length > 1) continue;
    const breaking = /^BREAKING[ -]CHANGE:/m.test(c.body);
    const group = isConventional(c.subject) ? (breaking ? 'Breaking changes' : (GROUPS.find(([, re]) => re.test(c.subject))?.[0] ?? 'Other (tests, build, CI, chores)')) : 'Not typed';
    groups.set(group, [...(groups.get(group) ?? []), `  - ${c.subject} (${c.hash.slice(0, 10)})`]);
  }
  return [...GROUPS.map(([name]) => name), 'Not typed']
    .filter((name) => groups.has(name))
    .map((name) => `${name}:\n${groups.get(name)!.join('\n')}`)
    .join('\n\n');
}

const INSTRUCTIONS = [
  'Write the changelog entry in the Keep a Changelog style: "### Added", "### Changed", "### Fixed", "### Removed", "### Security" sections, breaking changes first and marked as such.',
  'Write for users: what changed for them, not how. Merge related commits into one line; leave out internal work (refactoring, tests, CI) unless users notice it.',
  'Use the commit messages attached; do not invent changes.',
].join('\n');

export function changelogPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'changelog',
    title: 'Write a changelog entry',
    description: 'Writes the changelog entry for the commits since a tag (default: the last tag), grouped by Conventional Commit type when the history uses it.',
    args,
    complete: { from: (value, context, ctx) => completeRef(ws, ctx, context.arguments.repo, value), repo: repoCompleter(ws) },
    get: async ({ from, repo: repoName }, ctx) => {
      const repo = await ws.resolve(ctx, repoName, 'repo');
      const start = from?.trim() || (await lastTag(repo, ctx.signal));
      const range = start ? await resolveRange(repo, `${start}..HEAD`, ctx.signal) : undefined;
      const { commits, more } = await readLog(repo, { maxCount: MAX_COMMITS, ...(range ? { range: { from: range.from, to: range.to } } : {}), signal: ctx.signal });
      const since = start ? `since ${start}` : `of the whole history (no tag yet${more ? `; the ${countOf(MAX_COMMITS, 'newest commit')}` : ''})`;
      if (commits.length === 0 && !start && !(await hasCommits(repo, ctx.signal))) {
        return { description: `${repo.name} has no commits yet`, messages: [say(`${repo.name} has no commits yet, so there is nothing for a changelog.`)] };
      }
      if (commits.length === 0) {
        return { description: `No changes ${since}`, messages: [say(`There are no commits ${since} in ${repo.name}, so there is nothing for a changelog yet.`)] };
      }
      const typed = commits.filter((c) => c.parents.length < 2);
      const conventional = typed.length > 0 && typed.filter((c) => isConventional(c.subject)).length / typed.length >= 0.5;
      const messages = [
        say(`Write the changelog entry for the changes ${since} in ${repo.name} (${more ? `${commits.length}+ commits` : countOf(commits.length, 'commit')}, attached).\n\n${INSTRUCTIONS}`),
        ...(await embed(ctx, start ? gitUri.logRange(repo.name, `${start}..HEAD`) : gitUri.log(repo.name, MAX_COMMITS))),
      ];
      if (conventional) messages.push(say(`The history uses Conventional Commits; here are the commits grouped by type:\n\n${groupByType(commits)}`));
      return { description: `Changelog ${since} in ${repo.name}`, messages };
    },
  };
}
