import type { RequestContext } from '@suite/shared';
import type { GitRepository } from './git/repository.js';
import { listRefs } from './git/revisions.js';
import type { Workspace } from './workspace.js';

/** Completion answers are capped by the protocol at 100 values. */
const MAX_VALUES = 100;

function startsWith(candidate: string, typed: string): boolean {
  return candidate.toLowerCase().startsWith(typed.toLowerCase());
}

export async function completeRepository(ws: Workspace, ctx: RequestContext, typed: string): Promise<string[]> {
  return (await ws.repositories(ctx)).map((r) => r.name).filter((name) => startsWith(name, typed));
}

/** The repository a completion is for: the `repo` argument given so far, or the only one. */
async function repositoryFor(ws: Workspace, ctx: RequestContext, repo: string | undefined): Promise<GitRepository> {
  return ws.resolve(ctx, repo);
}

/** Branches (most recent first), then tags, then remote-tracking branches, matching what was typed. */
export async function completeRef(ws: Workspace, ctx: RequestContext, repoName: string | undefined, typed: string, extra: readonly string[] = []): Promise<string[]> {
  const repo = await repositoryFor(ws, ctx, repoName);
  const refs = await listRefs(repo, ctx.signal);
  const out: string[] = [];
  for (const name of [...extra, ...refs.branches, ...refs.tags, ...refs.remotes]) {
    if (startsWith(name, typed) && !out.includes(name)) out.push(name);
    if (out.length >= MAX_VALUES + 1) break;
  }
  return out;
}

/** A range: refs for its first part, then (after `..` or `...`) refs for the second, prefixed with the first. */
export async function completeRange(ws: Workspace, ctx: RequestContext, repoName: string | undefined, typed: string): Promise<string[]> {
  const dots = /\.\.\.?/.exec(typed);
  if (!dots) return completeRef(ws, ctx, repoName, typed);
  const head = typed.slice(0, dots.index + dots[0].length);
  return (await completeRef(ws, ctx, repoName, typed.slice(head.length), ['HEAD'])).map((ref) => head + ref);
}

/**
 * Files of the working tree (tracked, and untracked but not ignored), completed one directory
 * level at a time like a shell: `src/` offers `src/app.ts` and `src/lib/`.
 */
export async function completePath(ws: Workspace, ctx: RequestContext, repoName: string | undefined, typed: string): Promise<string[]> {
  const repo = await repositoryFor(ws, ctx, repoName);
  const slash = typed.lastIndexOf('/');
  const dir = slash === -1 ? '' : typed.slice(0, slash + 1);
  // Only the directory being completed: a pathspec keeps git from listing the whole tree.
  const pathspec = dir === '' ? ':/' : `:(top,literal)${dir}`;
  const listed = await repo.run(['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', pathspec], { signal: ctx.signal, maxOutputBytes: 8 * 1024 * 1024 });
  if (!listed.ok) return [];
  const out = new Set<string>();
  for (const file of listed.stdout.split('\0')) {
    if (file === '' || !file.startsWith(dir) || !startsWith(file, typed)) continue;
    const rest = file.slice(dir.length);
    const next = rest.indexOf('/');
    out.add(next === -1 ? file : `${dir}${rest.slice(0, next + 1)}`);
    if (out.size > MAX_VALUES) break;
  }
  return [...out].sort();
}
