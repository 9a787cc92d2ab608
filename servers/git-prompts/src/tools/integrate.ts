import { z } from 'zod';
import { ToolError, type ToolDefinition } from '@suite/shared';
import { describeConflicts, operationInProgress, readConflicts, type Operation } from '../git/operations.js';
import type { GitRepository } from '../git/repository.js';
import { currentBranch, resolveRevision } from '../git/revisions.js';
import { parseStatus } from '../git/status.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';

/**
 * merge, rebase, cherry-pick and revert: start one, or go on with (`continue`, `skip`) or abandon
 * (`abort`) the one in progress. A stop on conflicts is an answer, not an error: the conflicted
 * files with their hunks (both sides and the merge base: diff3 markers), and what to do next. No
 * editor ever opens: messages are the ones git prepares (GIT_EDITOR=":", git's "do not edit").
 */

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false } as const;
const action = (extra: readonly string[]) =>
  z
    .enum(['start', 'continue', 'abort', ...extra] as [string, ...string[]])
    .default('start')
    .describe(`start (default), or for the one in progress: continue (after resolving conflicts and staging them with git_add), abort (back to where it started)${extra.includes('skip') ? ', skip (drop the commit that stopped it)' : ''}.`);

/** Conflict markers with the merge base's text between them. */
const DIFF3 = ['-c', 'merge.conflictStyle=diff3'];

async function headLine(repo: GitRepository, signal: AbortSignal): Promise<string> {
  const [head, branch] = await Promise.all([repo.read(['rev-parse', 'HEAD'], 'git rev-parse', { signal }), currentBranch(repo, signal)]);
  return `${branch ? `${branch} is` : 'HEAD (detached) is'} at ${head.trim().slice(0, 12)}`;
}

/** Refuses to start while another operation is in progress, or with tracked changes in the way. */
async function checkCanStart(repo: GitRepository, what: string, signal: AbortSignal): Promise<void> {
  const operation = await operationInProgress(repo);
  if (operation) throw ToolError.conflict(`${repo.name} is in the middle of ${operation.what}; finish it first (${operation.finish}).`);
  const status = parseStatus(await repo.read(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--ignore-submodules=dirty'], 'git status', { signal }));
  if (status.staged.length + status.unstaged.length + status.conflicted.length > 0) {
    throw ToolError.conflict(`${repo.name} has uncommitted changes to tracked files; ${what} needs a clean working tree. Commit them, or put them aside with git_stash_push, then try again. Nothing was changed.`);
  }
}

/** After a command that may have stopped: conflicts as data, or the failure. */
async function stoppedOrFailed(repo: GitRepository, result: { ok: boolean; stderr: string; stdout: string; exitCode: number | null }, what: string, signal: AbortSignal): Promise<string> {
  const conflicts = await readConflicts(repo, signal);
  if (conflicts.files.length > 0) return `${what} stopped with conflicts in ${repo.name}.\n${describeConflicts(conflicts)}`;
  const operation = await operationInProgress(repo);
  if (operation && /empty|nothing to commit|allow-empty/i.test(result.stderr + result.stdout)) {
    return `${what} stopped in ${repo.name}: the commit it is at would be empty (its changes are already there). Go on with ${operation.tool ?? 'the operation'} action skip, or abort.`;
  }
  if (/would be overwritten|untracked working tree files/.test(result.stderr)) {
    throw ToolError.conflict(`${what} did not start: ${repo.failure(result, what).message} Move those files away (or commit them) first; nothing was changed.`);
  }
  throw repo.failure(result, what);
}

async function goOn(repo: GitRepository, tool: NonNullable<Operation['tool']>, command: string, verb: 'continue' | 'abort' | 'skip', signal: AbortSignal): Promise<string> {
  const operation = await operationInProgress(repo);
  if (!operation || operation.tool !== tool) {
    throw ToolError.conflict(operation ? `${repo.name} is in the middle of ${operation.what}, not ${command}: use ${operation.finish}.` : `There is no ${command} in progress in ${repo.name}.`);
  }
  if (verb === 'continue') {
    const unresolved = (await readConflicts(repo, signal)).files;
    if (unresolved.length > 0) {
      return `${command} cannot continue in ${repo.name}: ${unresolved.length === 1 ? 'a file is' : `${unresolved.length} files are`} still unmerged. Resolve and stage them with git_add first.\n${describeConflicts(await readConflicts(repo, signal))}`;
    }
  }
  // A merge is concluded by committing (git merge --continue is exactly that).
  const args = tool === 'git_merge' && verb === 'continue' ? ['commit', '--no-verify', '--no-edit', '--quiet'] : [...DIFF3, command, `--${verb}`];
  const result = await repo.write(args, `git ${command} --${verb}`, { signal, acceptMessage: true });
  if (!result.ok) return stoppedOrFailed(repo, result, `git ${command} --${verb}`, signal);
  const still = await operationInProgress(repo);
  if (still && verb !== 'abort') {
    const conflicts = await readConflicts(repo, signal);
    if (conflicts.files.length > 0) return `${command} went on and stopped again with conflicts in ${repo.name}.\n${describeConflicts(conflicts)}`;
  }
  return `${verb === 'abort' ? `Aborted the ${command}` : verb === 'skip' ? `Skipped the commit and went on with the ${command}` : `The ${command} went on and finished`} in ${repo.name}; ${await headLine(repo, signal)}.`;
}

const mergeInput = z.object({
  repo_path: repoPath,
  action: action([]),
  branch: z.string().min(1).max(256).optional().describe('For start: the branch, tag or commit to merge into the current branch.'),
  fast_forward: z.enum(['allow', 'never', 'only']).default('allow').describe('allow (default: fast-forward when possible, else a merge commit), never (always a merge commit), only (refuse unless it fast-forwards).'),
  message: z.string().min(1).max(20_000).optional().describe("The merge commit's message (default: git's \"Merge branch …\")."),
});

export function gitMerge(ws: Workspace): ToolDefinition<typeof mergeInput> {
  return {
    name: 'git_merge',
    toolset: 'integrate',
    description: 'Merges a branch into the current one (git merge), or continues or aborts the merge in progress. Conflicts are returned as data: the files, each conflict with both sides and the merge base, and what to do next.',
    input: mergeInput,
    annotations: { title: 'Merge a branch', ...WRITE },
    handler: async ({ repo_path, action: verb, branch, fast_forward, message }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      if (verb !== 'start') return goOn(repo, 'git_merge', 'merge', verb as 'continue' | 'abort', ctx.signal);
      if (branch === undefined) throw ToolError.invalidArgument('Say which branch to merge (branch).');
      await checkCanStart(repo, 'a merge', ctx.signal);
      const oid = await resolveRevision(repo, branch, { peel: 'commit', what: 'branch', signal: ctx.signal });
      const ff = fast_forward === 'never' ? ['--no-ff'] : fast_forward === 'only' ? ['--ff-only'] : ['--ff'];
      // The name the user gave goes into the default message, never onto the command line as an argument of its own.
      const text = message ?? `Merge ${/^[0-9a-f]{7,64}$/.test(branch) ? `commit ${branch}` : `branch '${branch}'`}`;
      const result = await repo.write([...DIFF3, 'merge', '--no-verify', '--no-stat', '--no-edit', '--no-verify-signatures', '--no-autostash', ...ff, `--message=${text}`, oid], 'git merge', { signal: ctx.signal });
      if (!result.ok) {
        if (fast_forward === 'only' && /Not possible to fast-forward|not possible to fast-forward/i.test(result.stderr)) {
          throw ToolError.conflict(`${branch} cannot be fast-forwarded into the current branch of ${repo.name} (the two have diverged); nothing was changed. Merge with fast_forward allow, or rebase.`);
        }
        return stoppedOrFailed(repo, result, `Merging ${branch}`, ctx.signal);
      }
      if (/Already up to date/i.test(result.stdout + result.stderr)) return `${branch} is already merged into ${repo.name}'s current branch; nothing changed.`;
      return `Merged ${branch} in ${repo.name}; ${await headLine(repo, ctx.signal)}.`;
    },
  };
}

const rebaseInput = z.object({
  repo_path: repoPath,
  action: action(['skip']),
  onto: z.string().min(1).max(256).optional().describe('For start: the branch, tag or commit to replay the current branch onto (non-interactive).'),
});

export function gitRebase(ws: Workspace): ToolDefinition<typeof rebaseInput> {
  return {
    name: 'git_rebase',
    toolset: 'integrate',
    description: 'Replays the current branch onto another branch or commit (git rebase, non-interactive), or continues, skips or aborts the rebase in progress. A stop on conflicts is returned as data (files, hunks with both sides and the base, what to do next).',
    input: rebaseInput,
    annotations: { title: 'Rebase the current branch', ...WRITE, destructiveHint: true },
    handler: async ({ repo_path, action: verb, onto }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      if (verb !== 'start') return goOn(repo, 'git_rebase', 'rebase', verb as 'continue' | 'abort' | 'skip', ctx.signal);
      if (onto === undefined) throw ToolError.invalidArgument('Say what to rebase onto (onto).');
      await checkCanStart(repo, 'a rebase', ctx.signal);
      const oid = await resolveRevision(repo, onto, { peel: 'commit', what: 'onto', signal: ctx.signal });
      const before = await headLine(repo, ctx.signal);
      const result = await repo.write([...DIFF3, 'rebase', '--merge', '--no-autostash', '--no-autosquash', '--no-verify', '--quiet', oid], 'git rebase', { signal: ctx.signal, acceptMessage: true });
      if (!result.ok) return stoppedOrFailed(repo, result, `Rebasing onto ${onto}`, ctx.signal);
      return `Rebased onto ${onto} in ${repo.name} (before: ${before}); ${await headLine(repo, ctx.signal)}.`;
    },
  };
}

const commitsInput = (verb: string) =>
  z.object({
    repo_path: repoPath,
    action: action(['skip']),
    commits: z.array(z.string().min(1).max(256)).min(1).max(100).optional().describe(`For start: the commits to ${verb}, in order.`),
  });

function pickTool(ws: Workspace, kind: 'cherry-pick' | 'revert'): ToolDefinition<ReturnType<typeof commitsInput>> {
  const tool = kind === 'cherry-pick' ? 'git_cherry_pick' : 'git_revert';
  return {
    name: tool,
    toolset: 'integrate',
    description:
      kind === 'cherry-pick'
        ? 'Applies the changes of existing commits on top of the current branch (git cherry-pick), or continues, skips or aborts the one in progress. Conflicts are returned as data.'
        : 'Makes new commits that undo existing ones (git revert, with git\'s "Revert …" messages), or continues, skips or aborts the one in progress. Conflicts are returned as data.',
    input: commitsInput(kind === 'cherry-pick' ? 'apply' : 'undo'),
    annotations: { title: kind === 'cherry-pick' ? 'Cherry-pick commits' : 'Revert commits', ...WRITE },
    handler: async ({ repo_path, action: verb, commits }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      if (verb !== 'start') return goOn(repo, tool, kind, verb as 'continue' | 'abort' | 'skip', ctx.signal);
      if (commits === undefined) throw ToolError.invalidArgument(`Say which commits to ${kind} (commits).`);
      await checkCanStart(repo, `a ${kind}`, ctx.signal);
      const oids: string[] = [];
      for (const c of commits) oids.push(await resolveRevision(repo, c, { peel: 'commit', what: 'commit', signal: ctx.signal }));
      const args = kind === 'cherry-pick' ? [...DIFF3, 'cherry-pick', '--no-rerere-autoupdate', ...oids] : [...DIFF3, 'revert', '--no-edit', '--no-rerere-autoupdate', ...oids];
      const result = await repo.write(args, `git ${kind}`, { signal: ctx.signal, acceptMessage: true });
      if (!result.ok) return stoppedOrFailed(repo, result, `The ${kind}`, ctx.signal);
      return `${kind === 'cherry-pick' ? 'Cherry-picked' : 'Reverted'} ${oids.length === 1 ? oids[0]!.slice(0, 12) : `${oids.length} commits`} in ${repo.name}; ${await headLine(repo, ctx.signal)}.`;
    },
  };
}

export const gitCherryPick = (ws: Workspace) => pickTool(ws, 'cherry-pick');
export const gitRevert = (ws: Workspace) => pickTool(ws, 'revert');
