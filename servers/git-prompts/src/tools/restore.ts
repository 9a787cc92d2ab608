import { z } from 'zod';
import { countOf, ToolError, type ToolDefinition } from '@suite/shared';
import { literalPathspec, resolveRepoPath } from '../git/repo-paths.js';
import type { GitRepository } from '../git/repository.js';
import { resolveRevision } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

const paths = z.array(z.string().min(1).max(4096)).min(1).max(1000);

async function pathspecs(repo: GitRepository, list: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const p of list) out.push(literalPathspec((await resolveRepoPath(repo, p)).relative));
  return out;
}

const restoreInput = z.object({
  repo_path: repoPath,
  paths: paths.describe('Files or directories to restore (relative to the top of the repository).'),
  source: z.string().min(1).max(256).optional().describe('Restore from this branch, tag or commit (default: the index for the working tree, HEAD for staged).'),
  staged: z.boolean().default(false).describe('Restore the index (unstage) instead of the working tree.'),
  worktree: z.boolean().optional().describe('Restore the working tree (default: true unless staged is set; set both to restore both).'),
});

export function gitRestore(ws: Workspace): ToolDefinition<typeof restoreInput> {
  return {
    name: 'git_restore',
    toolset: 'restore',
    description:
      'Restores files (git restore): the working tree from the index (discarding unstaged edits), or from a revision with source; with staged, the index from HEAD or source. Uncommitted edits to those files are lost.',
    input: restoreInput,
    annotations: { title: 'Restore files', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async ({ repo_path, paths: list, source, staged, worktree }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const specs = await pathspecs(repo, list);
      const toWorktree = worktree ?? !staged;
      if (!toWorktree && !staged) throw ToolError.invalidArgument('Nothing to restore: set worktree, staged, or both.');
      const oid = source !== undefined ? await resolveRevision(repo, source, { peel: 'commit', what: 'source', signal: ctx.signal }) : undefined;
      const args = ['restore', '--quiet', ...(oid ? [`--source=${oid}`] : []), ...(staged ? ['--staged'] : []), ...(toWorktree ? ['--worktree'] : []), '--', ...specs];
      const result = await repo.write(args, 'git restore', { signal: ctx.signal });
      if (!result.ok) {
        const unmatched = /pathspec '(?::\([^)]*\))?(.*?)' did not match any file/.exec(result.stderr);
        if (unmatched) throw ToolError.notFound(`${JSON.stringify(unmatched[1])} matches no file ${oid ? `at ${source}` : 'known to git'}; nothing was restored.`);
        if (/is unmerged/.test(result.stderr)) throw ToolError.conflict(`One of the paths has an unresolved conflict; restore it from a revision (source) or resolve it. Nothing was restored.`);
        throw repo.failure(result, 'git restore');
      }
      const where = staged && toWorktree ? 'the index and the working tree' : staged ? 'the index' : 'the working tree';
      return `Restored ${list.length === 1 ? list[0] : countOf(list.length, 'path')} in ${where} of ${repo.name} from ${source ?? (staged ? 'HEAD' : 'the index')}.`;
    },
  };
}

const cleanInput = z.object({
  repo_path: repoPath,
  dry_run: z.boolean().default(true).describe('Only list what would be removed (default true). Set false to remove.'),
  directories: z.boolean().default(false).describe('Also untracked directories (git clean -d).'),
  ignored: z.boolean().default(false).describe('Also ignored files (git clean -x): build output, dependencies, local settings.'),
  paths: paths.optional().describe('Only under these paths.'),
});

export function gitClean(ws: Workspace): ToolDefinition<typeof cleanInput> {
  return {
    name: 'git_clean',
    toolset: 'restore',
    description:
      'Lists (dry_run, the default) or removes untracked files (git clean): optionally untracked directories and ignored files. Removed files are not recoverable through git; nested repositories are never removed.',
    input: cleanInput,
    annotations: { title: 'Remove untracked files', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: async ({ repo_path, dry_run, directories, ignored, paths: list }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const specs = list ? await pathspecs(repo, list) : [];
      const args = ['clean', dry_run ? '--dry-run' : '--force', ...(directories ? ['-d'] : []), ...(ignored ? ['-x'] : []), '--', ...specs];
      const result = await repo.write(args, 'git clean', { signal: ctx.signal });
      if (!result.ok) throw repo.failure(result, 'git clean');
      const names = result.stdout
        .split('\n')
        .map((l) => /^(?:Would remove|Removing) (.*)$/.exec(l)?.[1])
        .filter((n): n is string => n !== undefined);
      if (names.length === 0) return `Nothing to clean in ${repo.name}${directories ? '' : ' (untracked directories are left alone unless directories is set)'}.`;
      const listed = `${names.slice(0, 200).map((n) => `  ${n}`).join('\n')}${names.length > 200 ? `\n  … and ${names.length - 200} more` : ''}`;
      return dry_run
        ? `Would remove ${countOf(names.length, 'path')} from ${repo.name} (dry run; nothing was removed: call again with dry_run false to remove them):\n${listed}`
        : `Removed ${countOf(names.length, 'path')} from ${repo.name}:\n${listed}`;
    },
  };
}
