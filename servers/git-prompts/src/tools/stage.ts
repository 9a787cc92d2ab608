import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { countOf, ToolError, type ToolDefinition } from '@suite/shared';
import { literalPathspec, resolveRepoPath } from '../git/repo-paths.js';
import type { GitRepository } from '../git/repository.js';
import { operationInProgress } from '../git/operations.js';
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

/**
 * The submodules (gitlinks of the index) these pathspecs reach. `git add` would start a `git status`
 * inside each one to see whether its work tree is dirty, and that git reads the submodule's own
 * configuration (its filters and drivers): they are left out of `git add` and staged by their commit.
 */
export async function gitlinksUnder(repo: GitRepository, specs: readonly string[], signal: AbortSignal): Promise<string[]> {
  const listed = await repo.read(['ls-files', '-z', '--stage', '--', ...specs], 'git ls-files', { signal, maxOutputBytes: 256 * 1024 * 1024 });
  const gitlinks = new Set<string>();
  for (const record of listed.split('\0')) {
    // "<mode> <oid> <stage>\t<path>"
    if (!record.startsWith('160000 ')) continue;
    const tab = record.indexOf('\t');
    if (tab !== -1) gitlinks.add(record.slice(tab + 1));
  }
  return [...gitlinks];
}

/** Stages submodules by the commit their work tree has checked out, without running git inside them. */
async function stageGitlinks(repo: GitRepository, gitlinks: readonly string[], signal: AbortSignal): Promise<void> {
  const update: string[] = [];
  for (const gitlink of gitlinks) {
    const dir = path.join(repo.top, gitlink);
    const [dirStat, dotGit] = await Promise.all([fs.lstat(dir).catch(() => undefined), fs.lstat(path.join(dir, '.git')).catch(() => undefined)]);
    // Deleted: stage the deletion. Checked out: stage its commit. Not initialised (an empty directory): nothing changed.
    if (!dirStat || (dirStat.isDirectory() && dotGit)) update.push(gitlink);
  }
  if (update.length === 0) return;
  const result = await repo.write(['update-index', '--add', '--remove', '--', ...update], 'git add', { signal });
  if (!result.ok) throw repo.failure(result, 'git add');
}

async function stagedSummary(repo: GitRepository, signal: AbortSignal): Promise<string> {
  const status = await readStatus(repo, signal);
  if (status.staged.length === 0) return 'Nothing is staged now.';
  const shown = status.staged.slice(0, 50).map((e) => `  ${`${e.change}:`.padEnd(14)}${e.from ? `${e.from} -> ` : ''}${e.path}`);
  if (status.staged.length > 50) shown.push(`  … and ${status.staged.length - 50} more`);
  return `Staged now (${status.cutAt !== undefined ? 'at least ' : ''}${status.staged.length}):\n${shown.join('\n')}`;
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
      const gitlinks = await gitlinksUnder(repo, specs, ctx.signal);
      const result = await repo.write(['add', '--', ...specs, ...gitlinks.map((p) => `:(exclude,top,literal)${p}`)], 'git add', { signal: ctx.signal });
      if (!result.ok) {
        const unmatched = /pathspec '(?::\([^)]*\))?(.*?)' did not match any files/.exec(result.stderr);
        if (unmatched) throw ToolError.notFound(`${JSON.stringify(unmatched[1])} matches no file with changes in ${repo.name}. git_status lists what changed.`);
        if (/ignored by one of your .gitignore files/.test(result.stderr)) {
          throw ToolError.conflict('One of the paths is ignored (.gitignore), so it was not staged; nothing was staged. Leave it out, or change .gitignore if it belongs in the repository.');
        }
        throw repo.failure(result, 'git add');
      }
      await stageGitlinks(repo, gitlinks, ctx.signal);
      return `Staged ${paths.length === 1 ? paths[0] : countOf(paths.length, 'path')} in ${repo.name}.\n${await stagedSummary(repo, ctx.signal)}`;
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
      // A whole-index reset ends a merge (MERGE_HEAD and MERGE_MSG are removed) and forgets the conflicts of
      // any operation; unstaging a conflicted path forgets its conflict. Neither may happen as a side effect.
      const operation = await operationInProgress(repo);
      if (operation) {
        if (specs.length === 0) {
          throw ToolError.conflict(
            `${repo.name} is in the middle of ${operation.what}; unstaging everything would discard its state (and its conflicts), so nothing was changed. Finish it (${operation.finish}), or name the files to unstage.`,
          );
        }
        const conflicted = (await repo.read(['ls-files', '-z', '--unmerged', '--', ...specs], 'git ls-files', { signal: ctx.signal }))
          .split('\0')
          .filter(Boolean)
          .map((record) => record.slice(record.indexOf('\t') + 1));
        if (conflicted.length > 0) {
          const names = [...new Set(conflicted)];
          throw ToolError.conflict(
            `${repo.name} is in the middle of ${operation.what} and ${names.slice(0, 10).join(', ')}${names.length > 10 ? ', …' : ''} ${names.length === 1 ? 'has a conflict' : 'have conflicts'}; unstaging would discard the conflict, so nothing was changed. Resolve it and stage the result with git_add, or finish the operation (${operation.finish}).`,
          );
        }
      }
      // Before the first commit, git reset empties the index (or the named paths of it): the same thing.
      // Not `git rm --cached`, which runs `git submodule foreach` inside every submodule it meets.
      const args = ['reset', '--quiet', ...(specs.length > 0 ? ['--', ...specs] : [])];
      const result = await repo.write(args, 'git reset', { signal: ctx.signal });
      if (!result.ok) throw repo.failure(result, 'git reset');
      const kept = operation ? ` The ${operation.what.replace(/^an? /, '')} in progress is kept.` : '';
      return `Unstaged ${paths ? (paths.length === 1 ? paths[0] : countOf(paths.length, 'path')) : 'everything'} in ${repo.name}; the working tree is unchanged.${kept}\n${await stagedSummary(repo, ctx.signal)}`;
    },
  };
}
