import { z } from 'zod';
import type { ToolDefinition } from '@suite/shared';
import { renderDiff, type DiffSource } from '../git/diff.js';
import { resolveRepoPath } from '../git/repo-paths.js';
import type { GitRepository } from '../git/repository.js';
import { resolveRevision } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { contextLines, diffPath, READ_ONLY, repoPath } from './arguments.js';

const worktreeInput = z.object({ repo_path: repoPath, context_lines: contextLines, path: diffPath });
const targetInput = z.object({
  repo_path: repoPath,
  target: z.string().min(1).max(256).describe('The branch, tag or commit to compare the working tree with (e.g. main, v1.2.0, HEAD~3).'),
  context_lines: contextLines,
  path: diffPath,
});

const BUDGET_NOTE = 'Large diffs are cut to a budget (per file and in all); lock and generated files are left out; binary files are summarised. The end of the output names what was left out.';

/** One of the three diff tools: they differ only in what they compare. */
function diffTool<I extends typeof worktreeInput | typeof targetInput>(
  name: string,
  title: string,
  description: string,
  input: I,
  source: (args: z.output<I>, repo: GitRepository, signal: AbortSignal) => Promise<{ source: DiffSource; label: string }>,
  ws: Workspace,
): ToolDefinition<I> {
  return {
    name,
    toolset: 'inspect',
    description: `${description} ${BUDGET_NOTE}`,
    input,
    annotations: { title, ...READ_ONLY },
    handler: async (args, ctx) => {
      const { repo_path, context_lines, path } = args;
      const repo = await ws.resolve(ctx, repo_path);
      const only = path !== undefined ? (await resolveRepoPath(repo, path)).relative : undefined;
      const { source: diffSource, label } = await source(args, repo, ctx.signal);
      const diff = await renderDiff(repo, {
        source: diffSource,
        budget: ws.config.budget,
        contextLines: context_lines,
        ...(only !== undefined ? { path: only } : {}),
        signal: ctx.signal,
        seeMore: `To see one of these files, call ${name} again with path set to it.`,
      });
      if (diff.files.length === 0) return `No ${label} in ${repo.name}${only !== undefined ? ` for ${only}` : ''}.`;
      return `${label[0]!.toUpperCase()}${label.slice(1)} in ${repo.name}:\n${diff.text}`;
    },
  };
}

export function gitDiffUnstaged(ws: Workspace): ToolDefinition<typeof worktreeInput> {
  return diffTool('git_diff_unstaged', 'Show unstaged changes', 'Shows the changes in the working tree that are not staged yet (git diff).', worktreeInput, async () => ({ source: { kind: 'unstaged' }, label: 'unstaged changes' }), ws);
}

export function gitDiffStaged(ws: Workspace): ToolDefinition<typeof worktreeInput> {
  return diffTool('git_diff_staged', 'Show staged changes', 'Shows the changes staged for the next commit (git diff --cached).', worktreeInput, async () => ({ source: { kind: 'staged' }, label: 'staged changes' }), ws);
}

export function gitDiff(ws: Workspace): ToolDefinition<typeof targetInput> {
  return diffTool(
    'git_diff',
    'Compare with a branch or commit',
    'Shows the differences between the working tree and a branch, tag or commit (git diff <target>).',
    targetInput,
    async ({ target }, repo, signal) => ({ source: { kind: 'worktree', against: await resolveRevision(repo, target, { peel: 'commit', what: 'target', signal }) }, label: `changes against ${target}` }),
    ws,
  );
}
