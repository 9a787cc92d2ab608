import { promises as fs } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { countOf, isInside, ToolError, type ToolDefinition } from '@suite/shared';
import type { GitRepository } from '../git/repository.js';
import { resolveRevision } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';
import { branchNameProblem } from './branches.js';

export interface Worktree {
  path: string;
  head?: string;
  branch?: string;
  bare: boolean;
  detached: boolean;
  locked?: string;
  prunable?: string;
  main: boolean;
}

/** Parses `git worktree list --porcelain -z`: attribute lines NUL-terminated, an empty one between worktrees. */
export function parseWorktrees(text: string): Worktree[] {
  const out: Worktree[] = [];
  let current: Worktree | undefined;
  for (const line of text.split('\0')) {
    if (line === '') {
      if (current) out.push(current);
      current = undefined;
      continue;
    }
    const space = line.indexOf(' ');
    const key = space === -1 ? line : line.slice(0, space);
    const value = space === -1 ? '' : line.slice(space + 1);
    if (key === 'worktree') current = { path: value, bare: false, detached: false, main: out.length === 0 };
    else if (!current) continue;
    else if (key === 'HEAD') current.head = value;
    else if (key === 'branch') current.branch = value.replace(/^refs\/heads\//, '');
    else if (key === 'bare') current.bare = true;
    else if (key === 'detached') current.detached = true;
    else if (key === 'locked') current.locked = value || 'locked';
    else if (key === 'prunable') current.prunable = value || 'prunable';
  }
  if (current) out.push(current);
  return out;
}

async function listWorktrees(repo: GitRepository, signal: AbortSignal): Promise<Worktree[]> {
  return parseWorktrees(await repo.read(['worktree', 'list', '--porcelain', '-z'], 'git worktree list', { signal }));
}

const listInput = z.object({ repo_path: repoPath });
const worktree = z.object({
  path: z.string(),
  head: z.string().optional(),
  branch: z.string().optional(),
  bare: z.boolean(),
  detached: z.boolean(),
  locked: z.string().optional(),
  prunable: z.string().optional(),
  main: z.boolean(),
});
const listOutput = z.object({ repository: z.string(), worktrees: z.array(worktree) });

export function gitWorktreeList(ws: Workspace): ToolDefinition<typeof listInput, typeof listOutput> {
  return {
    name: 'git_worktree_list',
    toolset: 'inspect',
    description: 'Lists the worktrees of the repository (the main one first): path, branch or detached commit, locked or prunable. Any of them can be given as repo_path when it lies inside the allowed directories.',
    input: listInput,
    output: listOutput,
    annotations: { title: 'List worktrees', ...READ_ONLY },
    handler: async ({ repo_path }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const worktrees = await listWorktrees(repo, ctx.signal);
      const lines = worktrees.map(
        (w) => `${w.path}  ${w.head ? w.head.slice(0, 12) : '(no commit)'}  ${w.bare ? '(bare)' : w.branch ? `[${w.branch}]` : '(detached HEAD)'}${w.main ? '  main worktree' : ''}${w.locked ? `  locked: ${w.locked}` : ''}${w.prunable ? `  prunable: ${w.prunable}` : ''}`,
      );
      return { text: `Worktrees of ${repo.name} (${countOf(worktrees.length, 'worktree')}):\n${lines.join('\n')}`, structured: { repository: repo.name, worktrees } };
    },
  };
}

const addInput = z.object({
  repo_path: repoPath,
  path: z.string().min(1).max(4096).describe('Where the new worktree goes: a directory that does not exist yet (or is empty), inside the allowed directories. Relative paths are relative to the first allowed directory.'),
  branch: z.string().min(1).max(200).optional().describe('An existing local branch to check out there (it must not be checked out elsewhere).'),
  new_branch: z.string().min(1).max(200).optional().describe('Create this branch (from commit) and check it out there.'),
  commit: z.string().min(1).max(256).optional().describe('The commit to start from (default HEAD); with neither branch nor new_branch, the worktree gets a detached HEAD there.'),
});

export function gitWorktreeAdd(ws: Workspace): ToolDefinition<typeof addInput> {
  return {
    name: 'git_worktree_add',
    toolset: 'worktrees',
    description: 'Adds a worktree: a second working tree of the same repository in another directory (inside the allowed directories), on an existing branch, a new branch, or a detached commit.',
    input: addInput,
    annotations: { title: 'Add a worktree', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ repo_path, path: target, branch, new_branch, commit }, ctx) => {
      if (branch !== undefined && new_branch !== undefined) throw ToolError.invalidArgument('Give branch (an existing one) or new_branch (to create), not both.');
      if (branch !== undefined && commit !== undefined) throw ToolError.invalidArgument('commit goes with new_branch or alone (detached); an existing branch is checked out where it is.');
      const repo = await ws.resolve(ctx, repo_path);
      const guard = await ctx.paths();
      const resolved = await guard.resolve(target);
      if (resolved.exists) {
        const stat = await fs.stat(resolved.real);
        if (!stat.isDirectory() || (await fs.readdir(resolved.real)).length > 0) throw ToolError.conflict(`${target} already exists and is not an empty directory; give a new path.`);
      }
      if (isInside(resolved.real, repo.top) || isInside(resolved.real, repo.commonDir)) {
        throw ToolError.invalidArgument(`${target} is inside the working tree or git directory of ${repo.name}; put the worktree beside it (for example ${path.join(path.dirname(repo.top), `${path.basename(repo.top)}-${new_branch ?? branch ?? 'worktree'}`.replace(/\//g, '-'))}).`);
      }
      for (const name of [branch, new_branch]) {
        if (name === undefined) continue;
        const problem = branchNameProblem(name);
        if (problem) throw ToolError.invalidArgument(`${JSON.stringify(name)} is not a valid branch name: ${problem}.`);
      }
      const args = ['worktree', 'add', '--quiet'];
      if (branch !== undefined) {
        if (!(await repo.run(['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { signal: ctx.signal })).ok) throw ToolError.notFound(`There is no local branch ${branch} in ${repo.name}.`);
        args.push('--', resolved.real, branch);
      } else {
        const start = await resolveRevision(repo, commit ?? 'HEAD', { peel: 'commit', what: 'commit', signal: ctx.signal });
        if (new_branch !== undefined) {
          if ((await repo.run(['rev-parse', '--verify', '--quiet', `refs/heads/${new_branch}`], { signal: ctx.signal })).ok) throw ToolError.conflict(`A branch named ${new_branch} already exists in ${repo.name}; give it as branch to check it out.`);
          args.push('-b', new_branch, '--', resolved.real, start);
        } else args.push('--detach', '--', resolved.real, start);
      }
      const result = await repo.write(args, 'git worktree add', { signal: ctx.signal });
      if (!result.ok) {
        if (/is already (checked out|used by worktree)/.test(result.stderr)) throw ToolError.conflict(`${branch} is already checked out in another worktree; a branch can be checked out in one worktree at a time.`);
        throw repo.failure(result, 'git worktree add');
      }
      return `Added a worktree of ${repo.name} at ${resolved.real} (${new_branch ? `new branch ${new_branch}` : branch ? `branch ${branch}` : 'detached HEAD'}). Give that path as repo_path to work in it.`;
    },
  };
}

const removeInput = z.object({
  repo_path: repoPath,
  path: z.string().min(1).max(4096).describe('The worktree to remove (as git_worktree_list shows it). Not the main worktree.'),
  force: z.boolean().default(false).describe('Remove it even with uncommitted changes or untracked files in it (they are lost).'),
});

export function gitWorktreeRemove(ws: Workspace): ToolDefinition<typeof removeInput> {
  return {
    name: 'git_worktree_remove',
    toolset: 'worktrees',
    description: 'Removes a linked worktree (its directory and git\'s record of it). Refuses when it has uncommitted changes or untracked files unless force is set; its branch and commits stay in the repository.',
    input: removeInput,
    annotations: { title: 'Remove a worktree', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: async ({ repo_path, path: target, force }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const resolved = await (await ctx.paths()).resolve(target, { mustExist: true });
      const worktrees = await listWorktrees(repo, ctx.signal);
      const found = worktrees.find((w) => w.path === resolved.real);
      if (!found) throw ToolError.notFound(`${target} is not a worktree of ${repo.name}; git_worktree_list lists them.`);
      if (found.main) throw ToolError.invalidArgument(`${target} is the main worktree of ${repo.name}; only linked worktrees can be removed.`);
      const result = await repo.write(['worktree', 'remove', ...(force ? ['--force'] : []), '--', resolved.real], 'git worktree remove', { signal: ctx.signal });
      if (!result.ok) {
        if (/contains modified or untracked files|is dirty/.test(result.stderr)) throw ToolError.conflict(`The worktree at ${target} has uncommitted changes or untracked files; nothing was removed. Commit or stash them there, or set force to discard them.`);
        if (/is locked/.test(result.stderr)) throw ToolError.conflict(`The worktree at ${target} is locked (${found.locked ?? 'no reason given'}); unlock it with git worktree unlock first.`);
        throw repo.failure(result, 'git worktree remove');
      }
      return `Removed the worktree at ${resolved.real} from ${repo.name}${found.branch ? `; branch ${found.branch} is kept` : ''}.`;
    },
  };
}
