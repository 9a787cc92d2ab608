import { z } from 'zod';
import { countOf, ToolError, type PromptDefinition } from '@suite/shared';
import { blame } from '../git/blame.js';
import { completeRef } from '../completion.js';
import { currentBranch, defaultBase, mergeBase, resolveRevision } from '../git/revisions.js';
import type { GitRepository } from '../git/repository.js';
import { gitUri } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { embed, repoArgument, repoCompleter, say } from './messages.js';

const args = z.object({
  branch: z.string().max(256).optional().describe('The branch to review (default: the current branch).'),
  base: z.string().max(256).optional().describe('What it is compared with (default: main, master, trunk or develop, or origin/HEAD).'),
  repo: repoArgument,
});

/** How many touched regions get their previous authors looked up (one git blame each). */
const MAX_BLAMED_FILES = 20;
const MAX_REGIONS_PER_FILE = 5;

/** The old-side line ranges of each modified file's hunks (`@@ -a,b +c,d @@`), from a zero-context diff. */
async function touchedRanges(repo: GitRepository, from: string, to: string, signal: AbortSignal): Promise<Map<string, { start: number; count: number }[]>> {
  const result = await repo.run(['diff', '--no-color', '--no-ext-diff', '--no-textconv', '--diff-filter=M', '-U0', from, to, '--'], { signal, maxOutputBytes: 4 * 1024 * 1024 });
  if (!result.ok) throw repo.failure(result, 'git diff');
  const ranges = new Map<string, { start: number; count: number }[]>();
  let file: string | undefined;
  for (const line of result.stdout.split('\n')) {
    if (line.startsWith('--- a/')) file = line.slice(6);
    else if (line.startsWith('--- ')) file = undefined;
    const hunk = /^@@ -(\d+)(?:,(\d+))? /.exec(line);
    if (hunk && file !== undefined) {
      const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
      if (count > 0) (ranges.get(file) ?? ranges.set(file, []).get(file)!).push({ start: Number(hunk[1]), count });
    }
  }
  return ranges;
}

export function reviewBranchPrompt(ws: Workspace): PromptDefinition<typeof args> {
  return {
    name: 'review-branch',
    title: 'Review a branch',
    description: 'A review of a branch against its base: the diff from where they diverged is attached, with the previous authors of the lines it changes (blame at the merge base), who may know why those lines were as they were.',
    args,
    complete: {
      branch: (value, context, ctx) => completeRef(ws, ctx, context.arguments.repo, value),
      base: (value, context, ctx) => completeRef(ws, ctx, context.arguments.repo, value),
      repo: repoCompleter(ws),
    },
    get: async ({ branch, base, repo: repoName }, ctx) => {
      const repo = await ws.resolve(ctx, repoName, 'repo');
      const name = branch?.trim() || (await currentBranch(repo, ctx.signal));
      if (!name) throw ToolError.invalidArgument(`HEAD is detached in ${repo.name}; name the branch to review.`);
      const target = base?.trim() || (await defaultBase(repo, ctx.signal));
      if (!target) throw ToolError.invalidArgument(`${repo.name} has no main, master, trunk or develop branch to compare ${name} with; give base.`);
      const [tip, baseOid] = await Promise.all([
        resolveRevision(repo, name, { peel: 'commit', what: 'branch', signal: ctx.signal }),
        resolveRevision(repo, target, { peel: 'commit', what: 'base', signal: ctx.signal }),
      ]);
      const forkPoint = await mergeBase(repo, baseOid, tip, ctx.signal);
      if (forkPoint === tip) {
        return { description: `${name} has nothing to review against ${target}`, messages: [say(`${name} in ${repo.name} has no commits that ${target} does not have, so there is nothing to review.`)] };
      }
      const ranges = await touchedRanges(repo, forkPoint, tip, ctx.signal);
      const authors: string[] = [];
      for (const [file, regions] of [...ranges].slice(0, MAX_BLAMED_FILES)) {
        for (const region of regions.slice(0, MAX_REGIONS_PER_FILE)) {
          const blamed = await blame(repo, forkPoint, file, { start: region.start, end: region.start + region.count - 1 }, ctx.signal).catch(() => undefined);
          if (!blamed) continue;
          const who = [...new Set(blamed.ranges.map((r) => `${r.author} (${r.commit.slice(0, 10)} ${r.date.slice(0, 10)}: ${r.summary})`))];
          authors.push(`- ${file} lines ${region.start}-${region.start + region.count - 1}: ${who.join('; ')}`);
        }
      }
      const skipped = ranges.size > MAX_BLAMED_FILES ? `\n(${countOf(ranges.size - MAX_BLAMED_FILES, 'more modified file')} not looked up.)` : '';
      const intro = [
        `Review the branch ${name} of ${repo.name} against ${target} (the diff from where they diverged, ${forkPoint.slice(0, 12)}, is attached).`,
        'For each finding give the file and line, a severity (blocking, should fix, nit), what is wrong and a concrete fix. End with a verdict.',
        authors.length > 0
          ? `The lines this branch changes were last changed by (blame at the merge base); mention who could confirm an intent you are unsure of:\n${authors.join('\n')}${skipped}`
          : 'The branch only adds or removes whole files: there are no previous authors of changed lines to name.',
      ].join('\n\n');
      return { description: `Review ${name} against ${target} in ${repo.name}`, messages: [say(intro), ...(await embed(ctx, gitUri.compare(repo.name, `${forkPoint}..${tip}`)))] };
    },
  };
}
