import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import type { GitRepository } from '../git/repository.js';
import { currentBranch, listRefs, resolveRevision } from '../git/revisions.js';
import { parseStatus } from '../git/status.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

const createInput = z.object({
  repo_path: repoPath,
  branch_name: z.string().min(1).max(200).describe('The new branch, e.g. feature/login.'),
  base_branch: z.string().min(1).max(256).optional().describe('Where it starts: a branch, tag or commit (default: the current commit).'),
});
const checkoutInput = z.object({ repo_path: repoPath, branch_name: z.string().min(1).max(200).describe('An existing local branch.') });

/**
 * Why git would refuse this branch name (the rules of `git check-ref-format --branch`), or why this
 * server does: a leading `-` (read as an option) and a leading `refs/` (`refs/heads/x` would create
 * `refs/heads/refs/heads/x`, surely not what was meant). Undefined when the name is fine.
 */
export function branchNameProblem(name: string): string | undefined {
  if (name.length === 0) return 'it is empty';
  if (name.startsWith('-')) return 'it starts with "-", which git would read as an option';
  if (/^refs\//i.test(name)) return 'it starts with "refs/"; give the short name of the branch, as git_branch lists it (without refs/heads/)';
  if (name === 'HEAD' || name === '@') return `"${name}" is reserved by git`;
  // eslint-disable-next-line no-control-regex
  const bad = /[\x00-\x20\x7f~^:?*[\\]/.exec(name);
  if (bad) return `it contains ${bad[0] === ' ' ? 'a space' : bad[0].charCodeAt(0) < 0x20 || bad[0] === '\x7f' ? 'a control character' : `"${bad[0]}"`}, which git does not allow in a branch name`;
  if (name.includes('..')) return 'it contains "..", which git reads as a range';
  if (name.includes('@{')) return 'it contains "@{", which git reads as a reflog reference';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'it begins or ends with "/", or has an empty part between two slashes';
  if (name.endsWith('.')) return 'it ends with "."';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return `its part "${part}" begins with ".", which git does not allow`;
    if (part.endsWith('.lock')) return `its part "${part}" ends with ".lock", which git reserves for its lock files`;
  }
  return undefined;
}

/** A branch name git accepts (`check-ref-format --branch`), never one read as an option; the refusal says why. */
async function checkBranchName(repo: GitRepository, name: string, signal: AbortSignal): Promise<void> {
  const problem = branchNameProblem(name) ?? ((await repo.run(['check-ref-format', '--branch', name], { signal })).ok ? undefined : 'git check-ref-format refuses it');
  if (problem) throw ToolError.invalidArgument(`${JSON.stringify(name)} is not a valid branch name: ${problem}.`);
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
      await checkBranchName(repo, branch_name, ctx.signal);
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
