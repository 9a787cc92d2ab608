import { z } from 'zod';
import { countOf, ToolError, type ToolDefinition } from '@suite/shared';
import { renderDiff } from '../git/diff.js';
import { describeConflicts, readConflicts } from '../git/operations.js';
import { literalPathspec, resolveRepoPath } from '../git/repo-paths.js';
import { listStash, stashEntry } from '../git/stash.js';
import type { Workspace } from '../workspace.js';
import { contextLines, READ_ONLY, repoPath } from './arguments.js';
import { gitlinksUnder } from './stage.js';

const index = z.number().int().min(0).max(100_000).default(0).describe('Which entry: 0 is the newest (stash@{0}).');
const entry = z.object({ index: z.number().int(), name: z.string(), commit: z.string(), message: z.string(), date: z.string(), base: z.string() });

const listInput = z.object({ repo_path: repoPath });
const listOutput = z.object({ repository: z.string(), entries: z.array(entry), complete: z.boolean() });

export function gitStashList(ws: Workspace): ToolDefinition<typeof listInput, typeof listOutput> {
  return {
    name: 'git_stash_list',
    toolset: 'inspect',
    description: 'Lists the stash, newest first: each entry with its message, date and the commit it was made on.',
    input: listInput,
    output: listOutput,
    annotations: { title: 'List the stash', ...READ_ONLY },
    handler: async ({ repo_path }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const { entries, cut } = await listStash(repo, ctx.signal);
      const text =
        entries.length === 0
          ? `The stash of ${repo.name} is empty.`
          : `Stash of ${repo.name} (${countOf(entries.length, 'entry', 'entries')}${cut ? ', list cut: more exist' : ''}):\n${entries.map((e) => `${e.name}  ${e.date.slice(0, 10)}  ${e.message}`).join('\n')}`;
      return { text, structured: { repository: repo.name, entries, complete: !cut } };
    },
  };
}

const showInput = z.object({ repo_path: repoPath, index, context_lines: contextLines });

export function gitStashShow(ws: Workspace): ToolDefinition<typeof showInput> {
  return {
    name: 'git_stash_show',
    toolset: 'inspect',
    description: 'Shows what a stash entry holds: its diff against the commit it was made on (within the diff budget), and the untracked files it saved.',
    input: showInput,
    annotations: { title: 'Show a stash entry', ...READ_ONLY },
    handler: async ({ repo_path, index: n, context_lines }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const stash = await stashEntry(repo, n, ctx.signal);
      const diff = await renderDiff(repo, { source: { kind: 'commits', from: stash.base, to: stash.commit }, budget: ws.config.budget, contextLines: context_lines, signal: ctx.signal });
      const parts = [`stash@{${n}} in ${repo.name} (${stash.commit.slice(0, 12)}, made on ${stash.base.slice(0, 12)}):`, diff.text || '(no changes to tracked files)\n'];
      if (stash.untracked) {
        const listed = (await repo.read(['ls-tree', '-r', '-z', '--name-only', stash.untracked, '--'], 'git ls-tree', { signal: ctx.signal, maxOutputBytes: 1024 * 1024 })).split('\0').filter(Boolean);
        parts.push(`Untracked files saved with it (${listed.length}):\n${listed.slice(0, 200).map((p) => `  ${p}`).join('\n')}${listed.length > 200 ? `\n  … and ${listed.length - 200} more` : ''}\n`);
      }
      return parts.join('\n');
    },
  };
}

const WRITE = { readOnlyHint: false, openWorldHint: false } as const;

const pushInput = z.object({
  repo_path: repoPath,
  message: z.string().min(1).max(2000).optional().describe('A message for the entry (default: git\'s "WIP on <branch>").'),
  paths: z.array(z.string().min(1).max(4096)).min(1).max(1000).optional().describe('Only these paths (relative to the top of the repository).'),
  include_untracked: z.boolean().default(false).describe('Also stash untracked files (not ignored ones), and remove them from the working tree.'),
  keep_index: z.boolean().default(false).describe('Leave what is staged in the index (and the working tree) as it is.'),
});

export function gitStashPush(ws: Workspace): ToolDefinition<typeof pushInput> {
  return {
    name: 'git_stash_push',
    toolset: 'stash',
    description: 'Saves the uncommitted changes (staged and not) on the stash and returns the working tree to HEAD (git stash push). Nothing is lost: git_stash_apply or git_stash_pop bring them back.',
    input: pushInput,
    annotations: { title: 'Stash changes', ...WRITE, destructiveHint: false, idempotentHint: false },
    handler: async ({ repo_path, message, paths, include_untracked, keep_index }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const specs: string[] = [];
      for (const p of paths ?? []) specs.push(literalPathspec((await resolveRepoPath(repo, p)).relative));
      if (specs.length === 0) specs.push(':/');
      // git stash looks into every submodule it meets to see whether it is dirty, with a git that reads
      // the submodule's own configuration: submodules are left out (their commits stay as they are).
      const gitlinks = await gitlinksUnder(repo, specs, ctx.signal);
      const args = [
        'stash',
        'push',
        '--quiet',
        ...(include_untracked ? ['--include-untracked'] : []),
        ...(keep_index ? ['--keep-index'] : []),
        ...(message ? [`--message=${message}`] : []),
        '--',
        ...specs,
        ...gitlinks.map((p) => `:(exclude,top,literal)${p}`),
      ];
      const before = (await listStash(repo, ctx.signal)).entries[0]?.commit;
      const result = await repo.write(args, 'git stash push', { signal: ctx.signal });
      if (!result.ok) {
        if (/did not match any file/.test(result.stderr)) throw ToolError.notFound('One of the paths matches no tracked file; nothing was stashed.');
        throw repo.failure(result, 'git stash push');
      }
      const after = (await listStash(repo, ctx.signal)).entries[0];
      if (!after || after.commit === before) return `No local changes to stash in ${repo.name}${paths ? ' for those paths' : ''}; nothing was saved.`;
      return `Stashed as stash@{0} (${after.commit.slice(0, 12)}: ${after.message}) in ${repo.name}. git_stash_pop brings the changes back.`;
    },
  };
}

const applyInput = z.object({
  repo_path: repoPath,
  index,
  restore_index: z.boolean().default(false).describe('Also restore what was staged as staged (git stash apply --index).'),
});

/** apply and pop differ in whether the entry is dropped after a clean apply. */
function applyTool(ws: Workspace, pop: boolean): ToolDefinition<typeof applyInput> {
  const verb = pop ? 'pop' : 'apply';
  return {
    name: `git_stash_${verb}`,
    toolset: 'stash',
    description: pop
      ? 'Applies a stash entry to the working tree and drops it from the stash when it applied without conflicts (git stash pop). On conflicts the entry is kept and the conflicts are returned as data.'
      : 'Applies a stash entry to the working tree and keeps it on the stash (git stash apply). Conflicts are returned as data (files, hunks, what to do next).',
    input: applyInput,
    annotations: { title: pop ? 'Pop a stash entry' : 'Apply a stash entry', ...WRITE, destructiveHint: pop, idempotentHint: false },
    handler: async ({ repo_path, index: n, restore_index }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const stash = await stashEntry(repo, n, ctx.signal);
      const args = ['-c', 'merge.conflictStyle=diff3', 'stash', verb, '--quiet', ...(restore_index ? ['--index'] : []), `stash@{${n}}`];
      const result = await repo.write(args, `git stash ${verb}`, { signal: ctx.signal });
      if (result.ok) {
        return `Applied stash@{${n}} (${stash.commit.slice(0, 12)}) to the working tree of ${repo.name}${pop ? ` and dropped it (recover it with: git stash store ${stash.commit})` : '; it stays on the stash'}.`;
      }
      const conflicts = await readConflicts(repo, ctx.signal);
      if (conflicts.files.length > 0) {
        return `Applying stash@{${n}} in ${repo.name} stopped with conflicts; the entry stays on the stash.\n${describeConflicts({ ...conflicts, next: `${conflicts.next} Then drop the entry with git_stash_drop when you no longer need it.` })}`;
      }
      if (/would be overwritten|already exists, no checkout|could not restore untracked/.test(result.stderr)) {
        throw ToolError.conflict(`stash@{${n}} was not applied: ${repo.failure(result, 'git stash').message} Commit or stash those changes first; nothing was changed.`);
      }
      throw repo.failure(result, `git stash ${verb}`);
    },
  };
}

export const gitStashApply = (ws: Workspace): ToolDefinition<typeof applyInput> => applyTool(ws, false);
export const gitStashPop = (ws: Workspace): ToolDefinition<typeof applyInput> => applyTool(ws, true);

const dropInput = z.object({ repo_path: repoPath, index: index.describe('Which entry to drop: 0 is the newest (stash@{0}). Required: say it.') });

export function gitStashDrop(ws: Workspace): ToolDefinition<typeof dropInput> {
  return {
    name: 'git_stash_drop',
    toolset: 'stash',
    description: 'Removes one stash entry (git stash drop). The answer gives its commit, from which it can be recovered while git keeps the object.',
    input: dropInput,
    annotations: { title: 'Drop a stash entry', ...WRITE, destructiveHint: true, idempotentHint: false },
    handler: async ({ repo_path, index: n }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const stash = await stashEntry(repo, n, ctx.signal);
      const result = await repo.write(['stash', 'drop', '--quiet', `stash@{${n}}`], 'git stash drop', { signal: ctx.signal });
      if (!result.ok) throw repo.failure(result, 'git stash drop');
      return `Dropped stash@{${n}} (${stash.commit.slice(0, 12)}) from ${repo.name}. To recover it: git stash store -m "recovered" ${stash.commit}`;
    },
  };
}
