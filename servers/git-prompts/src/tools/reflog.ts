import { z } from 'zod';
import { countOf, ToolError, type ToolDefinition } from '@suite/shared';
import { cutOutput } from '../git/repository.js';
import { checkRevisionText } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';

const input = z.object({
  repo_path: repoPath,
  ref: z.string().min(1).max(256).default('HEAD').describe('Whose reflog: HEAD (default), a branch such as main, or refs/stash.'),
  max_count: z.number().int().min(1).max(1000).default(30).describe('How many entries, newest first (default 30, at most 1,000).'),
});
const entry = z.object({ selector: z.string(), commit: z.string(), action: z.string(), date: z.string(), subject: z.string() });
const output = z.object({ repository: z.string(), ref: z.string(), entries: z.array(entry), more: z.boolean() });

export function gitReflog(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'git_reflog',
    toolset: 'inspect',
    description: 'Shows where a ref (HEAD by default, or a branch) has pointed, newest first: each move with its commit, what moved it (commit, checkout, rebase, reset, …) and when. The way back to work a reset or rebase seemed to lose.',
    input,
    output,
    annotations: { title: 'Show the reflog', ...READ_ONLY },
    handler: async ({ repo_path, ref, max_count }, ctx) => {
      checkRevisionText(ref, 'ref');
      if (!/^[A-Za-z0-9._/-]+$/.test(ref) || ref.includes('..')) throw ToolError.invalidArgument(`${JSON.stringify(ref)} is not a ref name (HEAD, a branch such as main, or refs/…).`);
      const repo = await ws.resolve(ctx, repo_path);
      // One git call: the reflog is walked by the name given (HEAD, main, refs/stash); an unknown name is git's complaint.
      const name = ref;
      // With --date, %gd names each entry by its time (HEAD@{2024-05-01T…}); its index is its position.
      const result = await repo.run(['log', '--walk-reflogs', '-z', `--max-count=${max_count + 1}`, '--date=iso-strict', '--format=%gd%x00%H%x00%gs%x00%s', '--end-of-options', name, '--'], { signal: ctx.signal });
      if (!result.ok) {
        if (/unknown revision|ambiguous argument|bad revision/i.test(result.stderr)) throw ToolError.notFound(`There is no ref ${ref} in ${repo.name}; git_branch lists the branches.`);
        if (/no reflog|does not have any commits/i.test(result.stderr)) return { text: `${ref} has no reflog in ${repo.name}.`, structured: { repository: repo.name, ref: name, entries: [], more: false } };
        throw repo.failure(result, 'git reflog');
      }
      const { text, cut } = cutOutput(result, '\0');
      const fields = text.split('\0');
      const entries: z.infer<typeof entry>[] = [];
      for (let i = 0; i + 4 <= fields.length; i += 4) {
        const dated = /^(.*)@\{(.*)\}$/.exec(fields[i]!.replace(/^\n/, ''));
        const commit = fields[i + 1]!;
        if (!dated || !/^[0-9a-f]{40}/.test(commit)) break;
        entries.push({ selector: `${dated[1]}@{${entries.length}}`, commit, action: fields[i + 2]!, date: dated[2]!, subject: fields[i + 3]! });
      }
      const more = cut || entries.length > max_count;
      const shown = entries.slice(0, max_count);
      const lines = shown.map((e) => `${e.selector}  ${e.commit.slice(0, 12)}  ${e.date.slice(0, 19)}  ${e.action}`);
      const out = shown.length === 0 ? `${ref} has no reflog entries in ${repo.name}.` : `Reflog of ${ref} in ${repo.name} (${countOf(shown.length, 'entry', 'entries')}${more ? ', more exist: raise max_count' : ''}):\n${lines.join('\n')}`;
      return { text: out, structured: { repository: repo.name, ref: name, entries: shown, more } };
    },
  };
}
