import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import { literalPathspec, resolveRepoPath } from '../git/repo-paths.js';
import type { GitRepository } from '../git/repository.js';
import { hasCommits } from '../git/revisions.js';
import { readStatus } from '../git/status.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

const files = z
  .array(z.string().min(1).max(4096))
  .min(1)
  .max(1000)
  .describe('Paths relative to the top of the repository (or absolute inside it); "." means every change. Deleted files can be named to stage their deletion.');

const addInput = z.object({ repo_path: repoPath, files });
const resetInput = z.object({ repo_path: repoPath, files: files.optional().describe('Only unstage these paths; omitted: unstage everything.') });

/** Checks every path (inside the work tree, symlinks followed) and turns them into literal pathspecs. */
async function pathspecs(repo: GitRepository, paths: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of paths) out.push(literalPathspec((await resolveRepoPath(repo, p)).relative));
  return out;
}

async function stagedSummary(repo: GitRepository, signal: AbortSignal): Promise<string> {
  const status = await readStatus(repo, signal);
  if (status.staged.length === 0) return 'Nothing is staged now.';
  const shown = status.staged.slice(0, 50).map((e) => `  ${`${e.change}:`.padEnd(14)}${e.from ? `${e.from} -> ` : ''}${e.path}`);
  if (status.staged.length > 50) shown.push(`  … and ${status.staged.length - 50} more`);
  return `Staged now (${status.staged.length}):\n${shown.join('\n')}`;
}

export function gitAdd(ws: Workspace): ToolDefinition<typeof addInput> {
  return {
    name: 'git_add',
    toolset: 'commit',
    description: 'Stages files for the next commit (git add). Paths must lie inside the repository; ignored files are refused.',
    input: addInput,
    annotations: { title: 'Stage files', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ repo_path, files: paths }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const specs = await pathspecs(repo, paths);
      const result = await repo.write(['add', '--', ...specs], 'git add', { signal: ctx.signal });
      if (!result.ok) {
        const unmatched = /pathspec '(?::\([^)]*\))?(.*?)' did not match any files/.exec(result.stderr);
        if (unmatched) throw ToolError.notFound(`${JSON.stringify(unmatched[1])} matches no file with changes in ${repo.name}. git_status lists what changed.`);
        if (/ignored by one of your .gitignore files/.test(result.stderr)) {
          throw ToolError.conflict('One of the paths is ignored (.gitignore), so it was not staged; nothing was staged. Leave it out, or change .gitignore if it belongs in the repository.');
        }
        throw repo.failure(result, 'git add');
      }
      return `Staged ${paths.length === 1 ? paths[0] : `${paths.length} paths`} in ${repo.name}.\n${await stagedSummary(repo, ctx.signal)}`;
    },
  };
}

export function gitReset(ws: Workspace): ToolDefinition<typeof resetInput> {
  return {
    name: 'git_reset',
    toolset: 'commit',
    description: 'Unstages changes (git reset, mixed): everything, or only `files`. The changes stay in the working tree; only what was staged is forgotten.',
    input: resetInput,
    // Staged content that differs from the working tree exists nowhere else once unstaged.
    annotations: { title: 'Unstage changes', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async ({ repo_path, files: paths }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const specs = paths ? await pathspecs(repo, paths) : [];
      // Before the first commit there is no HEAD to reset to: removing entries from the index is the same thing.
      const args = (await hasCommits(repo, ctx.signal))
        ? ['reset', '--quiet', ...(specs.length > 0 ? ['--', ...specs] : [])]
        : ['rm', '--cached', '-r', '--quiet', '--ignore-unmatch', '--', ...(specs.length > 0 ? specs : [':/'])];
      const result = await repo.write(args, 'git reset', { signal: ctx.signal });
      if (!result.ok) throw repo.failure(result, 'git reset');
      return `Unstaged ${paths ? (paths.length === 1 ? paths[0] : `${paths.length} paths`) : 'everything'} in ${repo.name}; the working tree is unchanged.\n${await stagedSummary(repo, ctx.signal)}`;
    },
  };
}
