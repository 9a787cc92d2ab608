import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { countOf, isInside, ToolError, type RequestContext, type ToolDefinition } from '@suite/shared';
import { describeConflicts, operationInProgress, readConflicts } from '../git/operations.js';
import type { GitRepository } from '../git/repository.js';
import { currentBranch } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { repoPath } from './arguments.js';
import { branchNameProblem } from './branches.js';
import { redactUrl } from './remotes.js';

/**
 * fetch, pull and push: only with --allow-remote (and --allow-write: each changes refs). The remote
 * is one of the repository's named remotes, or a file://, https:// or ssh:// URL. The URL git will
 * really use (after the repository's url.<base>.insteadOf rewriting) is checked before anything is
 * sent: file, https or ssh (scp-like host:path is ssh), and a file:// repository inside the allowed
 * directories. git itself refuses every other transport (remoteCallConfig). A local (file://) remote
 * is served by a git that runs none of that repository's hooks. Credentials never appear in answers.
 */

const remoteArg = z.string().min(1).max(2048).default('origin').describe('A remote of the repository (default origin), or a file://, https:// or ssh:// URL.');
const branchArg = z.string().min(1).max(200).optional();

/** Hides the user part of every URL in a text (git's messages may repeat a URL with a token in it). */
export function redactText(text: string): string {
  return text.replace(/([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/@'"]*@/g, '$1***@');
}

function remoteFailure(repo: GitRepository, result: { stderr: string; exitCode: number | null }, what: string): ToolError {
  const error = repo.failure({ ...result, stderr: redactText(result.stderr) }, what);
  if (/Authentication failed|could not read Username|terminal prompts disabled|Permission denied \(publickey/i.test(result.stderr)) {
    return ToolError.accessDenied(`${what} failed: the remote asked for credentials and none were available (this server never prompts). Set up a credential helper or an ssh agent key in your own global configuration.`);
  }
  if (/transport '.*' not allowed|Unable to find remote helper/i.test(result.stderr)) return ToolError.accessDenied(`${what} refused: that transport is not allowed (only file://, https:// and ssh://).`);
  return error;
}

/** One URL git would use, checked. */
async function checkUrl(url: string, ctx: RequestContext): Promise<void> {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) {
    // scp-like ssh (user@host:path), or a plain local path (git treats it as a local repository).
    if (/^[^/:]+:/.test(url) && !url.startsWith('-') && !/::/.test(url)) return;
    if (url.startsWith('/') || url.startsWith('.')) throw ToolError.accessDenied(`The remote is a local path (${url}); give it as a file:// URL inside the allowed directories.`);
    throw ToolError.accessDenied(`The remote URL ${redactUrl(url)} uses a transport this server does not allow (only file://, https:// and ssh://).`);
  }
  if (scheme === 'https' || scheme === 'ssh') {
    if (/^ssh:\/\/-|^ssh:\/\/[^/]*@-/.test(url)) throw ToolError.accessDenied('An ssh host may not start with "-".');
    return;
  }
  if (scheme === 'file') {
    let local: string;
    try {
      local = fileURLToPath(url);
    } catch {
      throw ToolError.invalidArgument(`${url} is not a file URL this server can read.`);
    }
    const guard = await ctx.paths();
    const resolved = await guard.resolve(local).catch(() => undefined);
    if (!resolved || !guard.directories.some((root) => isInside(resolved.real, root))) throw ToolError.accessDenied(`${url} is outside the allowed directories; a file:// remote must be inside them.`);
    return;
  }
  throw ToolError.accessDenied(`The remote URL ${redactUrl(url)} uses ${scheme}://, which this server does not allow (only file://, https:// and ssh://).`);
}

/** The remote as git will be told it, after checking every URL git would use for it. */
async function checkRemote(repo: GitRepository, remote: string, push: boolean, ctx: RequestContext): Promise<{ remote: string; local: boolean }> {
  if (remote.startsWith('-') || /[\0\n\r]/.test(remote)) throw ToolError.invalidArgument('The remote may not start with "-" or hold control characters.');
  const names = (await repo.read(['remote'], 'git remote', { signal: ctx.signal })).split('\n').filter(Boolean);
  let urls: string[];
  if (names.includes(remote)) {
    const got = await repo.run(['remote', 'get-url', '--all', ...(push ? ['--push'] : []), '--', remote], { signal: ctx.signal });
    if (!got.ok) throw remoteFailure(repo, got, 'Reading the remote');
    urls = got.stdout.split('\n').filter(Boolean);
  } else if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(remote)) {
    // A URL given here is rewritten by url.<base>.insteadOf like any other: check what it becomes.
    const got = await repo.run(['ls-remote', '--get-url', '--', remote], { signal: ctx.signal });
    urls = [got.ok ? got.stdout.trim() : remote];
  } else {
    throw ToolError.notFound(`${repo.name} has no remote named ${remote}${names.length > 0 ? ` (it has ${names.join(', ')})` : ''}; give a remote name or a file://, https:// or ssh:// URL.`);
  }
  for (const url of urls) await checkUrl(url, ctx);
  return { remote, local: urls.every((u) => u.startsWith('file://')) };
}

/**
 * The program that serves the other side, always given as an option (it outranks the repository's
 * `remote.<name>.uploadpack`/`receivepack`, which git reads first and keeps). For a local remote, a
 * git that runs none of that repository's hooks and no background work; otherwise git's default.
 */
function packOption(repo: GitRepository, local: boolean, side: 'upload' | 'receive'): string {
  if (!local) return `--${side}-pack=git-${side}-pack`;
  const git = `'${repo.gitBinary.replace(/'/g, "'\\''")}'`;
  return `--${side}-pack=${git} -c core.hooksPath=/dev/null -c core.fsmonitor=false -c gc.auto=0 -c receive.autogc=false ${side}-pack`;
}

function checkBranch(name: string): void {
  const problem = branchNameProblem(name);
  if (problem) throw ToolError.invalidArgument(`${JSON.stringify(name)} is not a valid branch name: ${problem}.`);
}

async function refsUnder(repo: GitRepository, prefixes: string[], signal: AbortSignal): Promise<Map<string, string>> {
  // Symbolic refs (origin/HEAD) follow the branch they name: counted once, as that branch.
  const out = await repo.read(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(symref)', ...prefixes], 'git for-each-ref', { signal });
  const refs = out.split('\n').filter(Boolean).map((l) => l.split('\0'));
  return new Map(refs.filter((r) => !r[2]).map((r) => [r[0]!, r[1]!] as [string, string]));
}

function describeRefChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const lines: string[] = [];
  for (const [ref, oid] of after) {
    const old = before.get(ref);
    if (old === undefined) lines.push(`  new      ${ref.replace(/^refs\/(remotes\/)?/, '')} ${oid.slice(0, 12)}`);
    else if (old !== oid) lines.push(`  updated  ${ref.replace(/^refs\/(remotes\/)?/, '')} ${old.slice(0, 12)}..${oid.slice(0, 12)}`);
  }
  for (const [ref] of before) if (!after.has(ref)) lines.push(`  deleted  ${ref.replace(/^refs\/(remotes\/)?/, '')}`);
  return lines;
}

const REMOTE_WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true } as const;

const fetchInput = z.object({
  repo_path: repoPath,
  remote: remoteArg,
  branch: branchArg.describe('Only this branch of the remote (default: what the remote is configured to fetch).'),
  prune: z.boolean().default(false).describe('Remove remote-tracking branches the remote no longer has.'),
  tags: z.boolean().default(true).describe('Also fetch tags that point into what is fetched (git\'s default).'),
});

export function gitFetch(ws: Workspace): ToolDefinition<typeof fetchInput> {
  return {
    name: 'git_fetch',
    toolset: 'remote',
    description: 'Downloads commits and refs from a remote (git fetch): updates remote-tracking branches, never your own branches or working tree. Only with --allow-remote; file://, https:// and ssh:// only.',
    input: fetchInput,
    annotations: { title: 'Fetch from a remote', ...REMOTE_WRITE },
    handler: async ({ repo_path, remote, branch, prune, tags }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      if (branch !== undefined) checkBranch(branch);
      const checked = await checkRemote(repo, remote, false, ctx);
      const before = await refsUnder(repo, ['refs/remotes', 'refs/tags'], ctx.signal);
      const args = ['fetch', '--quiet', '--no-recurse-submodules', '--no-auto-maintenance', ...(prune ? ['--prune'] : []), ...(tags ? [] : ['--no-tags']), packOption(repo, checked.local, 'upload'), '--', checked.remote, ...(branch ? [branch] : [])];
      const result = await repo.write(args, 'git fetch', { signal: ctx.signal, remote: true });
      if (!result.ok) throw remoteFailure(repo, result, 'git fetch');
      const changes = describeRefChanges(before, await refsUnder(repo, ['refs/remotes', 'refs/tags'], ctx.signal));
      return changes.length === 0 ? `Fetched from ${redactUrl(remote)} into ${repo.name}: already up to date.` : `Fetched from ${redactUrl(remote)} into ${repo.name} (${countOf(changes.length, 'ref')} changed):\n${changes.join('\n')}`;
    },
  };
}

const pullInput = z.object({
  repo_path: repoPath,
  remote: remoteArg,
  branch: branchArg.describe("The remote's branch (default: the current branch's upstream)."),
  mode: z.enum(['ff-only', 'merge', 'rebase']).default('ff-only').describe('ff-only (default: refuse unless the branch only moves forward), merge (a merge commit when they diverged), rebase.'),
});

export function gitPull(ws: Workspace): ToolDefinition<typeof pullInput> {
  return {
    name: 'git_pull',
    toolset: 'remote',
    description: 'Fetches from a remote and brings the current branch up to date (git pull): fast-forward only unless mode says merge or rebase. Conflicts are returned as data. Only with --allow-remote.',
    input: pullInput,
    annotations: { title: 'Pull from a remote', ...REMOTE_WRITE, idempotentHint: false },
    handler: async ({ repo_path, remote, branch, mode }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      if (branch !== undefined) checkBranch(branch);
      const operation = await operationInProgress(repo);
      if (operation) throw ToolError.conflict(`${repo.name} is in the middle of ${operation.what}; finish it first (${operation.finish}).`);
      const checked = await checkRemote(repo, remote, false, ctx);
      const how = mode === 'ff-only' ? ['--ff-only'] : mode === 'merge' ? ['--no-rebase', '--no-ff'] : ['--rebase=true'];
      const args = [
        '-c', 'merge.conflictStyle=diff3',
        'pull', '--quiet', '--no-recurse-submodules', '--no-autostash', '--no-verify', '--no-edit', '--no-verify-signatures', '--no-stat',
        ...how,
        packOption(repo, checked.local, 'upload'),
        '--', checked.remote, ...(branch ? [branch] : []),
      ];
      const head = (await repo.run(['rev-parse', '--verify', '--quiet', 'HEAD'], { signal: ctx.signal })).stdout.trim();
      const result = await repo.write(args, 'git pull', { signal: ctx.signal, remote: true, acceptMessage: true });
      if (!result.ok) {
        const conflicts = await readConflicts(repo, ctx.signal);
        if (conflicts.files.length > 0) return `Pulling from ${redactUrl(remote)} stopped with conflicts in ${repo.name}.\n${describeConflicts(conflicts)}`;
        if (/Not possible to fast-forward|Diverging branches can't be fast-forwarded/i.test(result.stderr)) {
          throw ToolError.conflict(`The current branch of ${repo.name} and the remote's have diverged, so it cannot fast-forward; nothing was changed. Pull with mode merge or rebase.`);
        }
        throw remoteFailure(repo, result, 'git pull');
      }
      const now = (await repo.run(['rev-parse', '--verify', '--quiet', 'HEAD'], { signal: ctx.signal })).stdout.trim();
      const branchName = await currentBranch(repo, ctx.signal);
      return now === head ? `${branchName ?? 'HEAD'} in ${repo.name} is already up to date with ${redactUrl(remote)}.` : `Pulled from ${redactUrl(remote)}: ${branchName ?? 'HEAD'} in ${repo.name} moved ${head.slice(0, 12)}..${now.slice(0, 12)}.`;
    },
  };
}

const pushInput = z.object({
  repo_path: repoPath,
  remote: remoteArg,
  branch: branchArg.describe('The local branch to push (default: the current branch), to the branch of the same name.'),
  set_upstream: z.boolean().default(false).describe('Make the pushed branch track the remote one.'),
  force_with_lease: z.boolean().default(false).describe('Replace the remote branch even if this is not a fast-forward, but only if it is still where this repository last saw it (--force-with-lease). A plain --force is never used.'),
  tags: z.array(z.string().min(1).max(200)).max(100).optional().describe('Also push these tags.'),
});

export function gitPush(ws: Workspace): ToolDefinition<typeof pushInput> {
  return {
    name: 'git_push',
    toolset: 'remote',
    description: 'Sends a branch (and optionally tags) to a remote (git push). Never --force; --force-with-lease only when asked. Only with --allow-remote; file://, https:// and ssh:// only.',
    input: pushInput,
    annotations: { title: 'Push to a remote', readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
    handler: async ({ repo_path, remote, branch, set_upstream, force_with_lease, tags }, ctx) => {
      const repo = await ws.resolve(ctx, repo_path);
      const local = branch ?? (await currentBranch(repo, ctx.signal));
      if (local === undefined) throw ToolError.conflict(`HEAD is detached in ${repo.name}; name the branch to push.`);
      checkBranch(local);
      for (const tag of tags ?? []) checkBranch(tag);
      if (!(await repo.run(['rev-parse', '--verify', '--quiet', `refs/heads/${local}`], { signal: ctx.signal })).ok) throw ToolError.notFound(`There is no local branch ${local} in ${repo.name}.`);
      const checked = await checkRemote(repo, remote, true, ctx);
      const args = [
        'push', '--porcelain', '--no-verify', '--recurse-submodules=no', '--no-signed',
        ...(set_upstream ? ['--set-upstream'] : []),
        ...(force_with_lease ? ['--force-with-lease'] : []),
        packOption(repo, checked.local, 'receive'),
        '--', checked.remote, `refs/heads/${local}:refs/heads/${local}`, ...(tags ?? []).map((t) => `refs/tags/${t}:refs/tags/${t}`),
      ];
      const result = await repo.write(args, 'git push', { signal: ctx.signal, remote: true });
      if (!result.ok) {
        if (/\[rejected\]|non-fast-forward|fetch first|stale info/.test(result.stdout + result.stderr)) {
          throw ToolError.conflict(`The remote's ${local} has commits this repository does not have (or moved since it was last fetched); nothing was pushed. Pull (git_pull) first${force_with_lease ? '' : ', or push with force_with_lease to replace it'}.`);
        }
        throw remoteFailure(repo, result, 'git push');
      }
      const lines = result.stdout.split('\n').filter((l) => /^[ +\-*=!]\t/.test(l)).map((l) => `  ${redactText(l.replace(/\t/g, ' '))}`);
      return `Pushed ${local} to ${redactUrl(remote)} from ${repo.name}:\n${lines.join('\n')}`;
    },
  };
}
