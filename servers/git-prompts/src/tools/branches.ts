import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import type { GitRepository } from '../git/repository.js';
import { checkRevisionText, currentBranch, listRefs, resolveRevision } from '../git/revisions.js';
import { parseStatus } from '../git/status.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

const createInput = z.object({
  repo_path: repoPath,
  branch_name: z.string().min(1).max(200).describe('The new branch, e.g. feature/login.'),
  base_branch: z.string().min(1).max(256).optional().describe('Where it starts: a branch, tag or commit (default: the current commit).'),
});
const checkoutInput = z.object({ repo_path: repoPath, branch_name: z.string().min(1).max(200).describe('An existing local branch.') });

/** A branch name git accepts (`check-ref-format`), never one read as an option. */
async function checkBranchName(repo: GitRepository, name: string, signal: AbortSignal): Promise<void> {
  checkRevisionText(name, 'branch name');
  const valid = await repo.run(['check-ref-format', `refs/heads/${name}`], { signal });
  if (!valid.ok || name.includes('@{') || name === 'HEAD') {
    throw ToolError.invalidArgument(`${JSON.stringify(name)} is not a valid branch name (no spaces, "..", "~", "^", ":", "?", "*", "[", "\\" or trailing "/" or ".lock").`);
  }
}

async function branchExists(repo: GitRepository, name: string, signal: AbortSignal): Promise<boolean> {
  return (await repo.run(['rev-parse', '--verify', '--quiet', `refs/heads/${name}`], { signal })).ok;
}

export function gitCreateBranch(ws: Workspace): ToolDefinition<typeof createInput> {
  return {
    name: 'git_create_branch',
    toolset: 'branches',
    description: 'Creates a branch from the current commit or from base_branch. It does not switch to it (git_checkout does).',
    input: createInput,
    annotations: { title: 'Create a branch', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ repo_path, branch_name, base_branch }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      await checkBranchName(repo, branch_name, ctx.signal);
      if (await branchExists(repo, branch_name, ctx.signal)) throw ToolError.conflict(`A branch named ${branch_name} already exists in ${repo.name}.`);
      const base = base_branch ?? 'HEAD';
      const oid = await resolveRevision(repo, base, { peel: 'commit', what: 'base branch', signal: ctx.signal }).catch((error: unknown) => {
        if (base_branch === undefined) throw ToolError.conflict(`${repo.name} has no commits yet; commit once before creating branches.`);
        throw error;
      });
      // An empty old value: the ref must not exist, checked under git's own lock (no race with another process).
      const result = await repo.write(['update-ref', '-m', `branch: Created from ${base}`, `refs/heads/${branch_name}`, oid, ''], 'Creating the branch', { signal: ctx.signal });
      if (!result.ok) {
        if (/reference already exists|unable to lock|cannot lock ref/.test(result.stderr)) throw ToolError.conflict(`The branch ${branch_name} could not be created: ${repo.failure(result, 'git').message}`);
        throw repo.failure(result, 'Creating the branch');
      }
      return `Created branch ${branch_name} at ${oid.slice(0, 12)} (from ${base}) in ${repo.name}. Switch to it with git_checkout.`;
    },
  };
}

export function gitCheckout(ws: Workspace): ToolDefinition<typeof checkoutInput> {
  return {
    name: 'git_checkout',
    toolset: 'branches',
    description: 'Switches to an existing local branch. Refuses while there are uncommitted changes to tracked files, so no work is ever discarded or carried along by surprise.',
    input: checkoutInput,
    annotations: { title: 'Switch branches', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: async ({ repo_path, branch_name }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      checkRevisionText(branch_name, 'branch name');
      if (!(await branchExists(repo, branch_name, ctx.signal))) {
        const refs = await listRefs(repo, ctx.signal);
        const remote = refs.remotes.find((r) => r.endsWith(`/${branch_name}`));
        throw ToolError.notFound(
          remote
            ? `There is no local branch ${branch_name}, but there is ${remote}. Create it with git_create_branch (branch_name ${branch_name}, base_branch ${remote}), then switch.`
            : `There is no local branch ${branch_name} in ${repo.name}. Local branches: ${refs.branches.slice(0, 20).join(', ') || 'none'}.`,
        );
      }
      if ((await currentBranch(repo, ctx.signal)) === branch_name) return `Already on ${branch_name} in ${repo.name}.`;
      const status = parseStatus(await repo.read(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--ignore-submodules=dirty'], 'git status', { signal: ctx.signal }));
      const dirty = [...status.staged, ...status.unstaged, ...status.conflicted].map((e) => e.path);
      if (dirty.length > 0) {
        throw ToolError.conflict(
          `${repo.name} has uncommitted changes (${[...new Set(dirty)].slice(0, 10).join(', ')}${dirty.length > 10 ? ', …' : ''}). Commit them (git_commit) or stash them yourself before switching branches; nothing was changed.`,
        );
      }
      const result = await repo.write(['checkout', '--quiet', '--no-guess', branch_name, '--'], 'git checkout', { signal: ctx.signal });
      if (!result.ok) {
        if (/untracked working tree files would be overwritten/.test(result.stderr)) {
          throw ToolError.conflict(`Switching to ${branch_name} would overwrite untracked files: ${repo.failure(result, 'git checkout').message} Move them away first; nothing was changed.`);
        }
        throw repo.failure(result, 'git checkout');
      }
      return `Switched to branch ${branch_name} in ${repo.name}.`;
    },
  };
}
