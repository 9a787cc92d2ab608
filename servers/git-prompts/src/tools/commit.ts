import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import { hasChanges } from '../git/diff.js';
import { currentBranch } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

const input = z.object({
  repo_path: repoPath,
  message: z.string().min(1).max(20_000).describe('The commit message: a summary line, then optionally a blank line and a body.'),
});
/** With --allow-author: an author other than the user's identity (who stays the committer). */
const inputWithAuthor = input.extend({
  author: z.string().min(3).max(512).optional().describe('The author, as "Name <email>" (default: your own identity). You stay the committer.'),
});
const output = z.object({ repository: z.string(), commit: z.string(), branch: z.string().optional(), summary: z.string() });

export function gitCommit(ws: Workspace): ToolDefinition<typeof inputWithAuthor, typeof output> {
  return {
    name: 'git_commit',
    toolset: 'commit',
    description:
      "Commits the staged changes with a message. Refuses when nothing is staged. The repository's hooks never run. The commit is signed if your own global git configuration says so, or (with --allow-signing) when the repository asks for it, always with your own signing program; otherwise the answer says it was made unsigned.",
    // The author argument exists only when the operator allowed it.
    input: (ws.config.allowAuthor ? inputWithAuthor : input) as typeof inputWithAuthor,
    output,
    annotations: { title: 'Commit staged changes', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ repo_path, message, author }, ctx) => {
      if (author !== undefined && !/^[^<>\n\r\0]+ <[^<>\s]+>$/.test(author.trim())) throw ToolError.invalidArgument(`author must look like "Name <email>"; got ${JSON.stringify(author)}.`);
      const text = message.trim();
      if (text === '') throw ToolError.invalidArgument('The commit message is empty.');
      const repo = await ws.resolve(ctx, repo_path);
      // A merge in progress may be concluded with nothing staged beyond the merge itself.
      const merging = await fs.stat(path.join(repo.gitDir, 'MERGE_HEAD')).then(() => true, () => false);
      if (!merging && !(await hasChanges(repo, 'staged', ctx.signal))) {
        throw ToolError.conflict(`Nothing is staged in ${repo.name}, so there is nothing to commit. Stage changes with git_add first (git_status shows what changed).`);
      }
      const result = await repo.write(['commit', '--no-verify', '--quiet', '--cleanup=strip', ...(author !== undefined ? [`--author=${author.trim()}`] : []), '--file=-'], 'git commit', { input: `${text}\n`, signal: ctx.signal });
      if (!result.ok) {
        if (/Please tell me who you are|empty ident name|unable to auto-detect email/.test(result.stderr)) {
          throw ToolError.conflict('git does not know who you are. Set your name and email in your global git configuration (git config --global user.name "Your Name"; git config --global user.email you@example.com) and try again.');
        }
        if (/gpg failed to sign|error: cannot run|failed to write commit object|signing failed/i.test(result.stderr)) {
          throw ToolError.conflict(`The commit could not be signed as your global git configuration asks (commit.gpgSign): ${repo.failure(result, 'signing').message}`);
        }
        throw repo.failure(result, 'git commit');
      }
      const [head, branch] = await Promise.all([repo.read(['rev-parse', 'HEAD'], 'git rev-parse', { signal: ctx.signal }), currentBranch(repo, ctx.signal)]);
      const commit = head.trim();
      const summary = text.split('\n')[0]!;
      return {
        text: `Committed ${commit.slice(0, 12)}${branch ? ` on ${branch}` : ' (detached HEAD)'} in ${repo.name}${author !== undefined ? ` (author: ${author.trim()})` : ''}: ${summary}${
          result.unsignedAsked ? '\nCommitted unsigned: the repository asks for signed commits (commit.gpgSign), and the server was not started with --allow-signing.' : ''
        }`,
        structured: { repository: repo.name, commit, ...(branch ? { branch } : {}), summary },
      };
    },
  };
}
