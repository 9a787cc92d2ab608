import { promises as fs } from 'node:fs';
import path from 'node:path';
import { escapeTerminalControlsInLine, isInside, type RequestContext } from '@suite/shared';
import type { GitRepository } from './git/repository.js';
import { listRefs } from './git/revisions.js';
import type { Workspace } from './workspace.js';

/**
 * Completion offers only values the tools then accept, and every one of them: the shared layer
 * sends the first 100 with the true total and `hasMore`. A value holding a terminal control
 * character is not offered (shown escaped, it would not name the file or ref any more).
 */
function startsWith(candidate: string, typed: string): boolean {
  return candidate.toLowerCase().startsWith(typed.toLowerCase());
}

function printable(value: string): boolean {
  return escapeTerminalControlsInLine(value) === value;
}

/** Repositories of the roots that the tools accept: not one whose work tree, git data or object stores lie outside them. */
export async function completeRepository(ws: Workspace, ctx: RequestContext, typed: string): Promise<string[]> {
  const names = (await ws.repositories(ctx)).map((r) => r.name).filter((name) => startsWith(name, typed));
  const usable = await Promise.all(names.map((name) => ws.resolve(ctx, name).then(() => true, () => false)));
  return names.filter((_, i) => usable[i]);
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
  const seen = new Set<string>();
  for (const name of [...extra, ...refs.branches, ...refs.tags, ...refs.remotes]) {
    if (!startsWith(name, typed) || seen.has(name) || !printable(name) || name.startsWith('-')) continue;
    seen.add(name);
    out.push(name);
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
  const level = new Set<string>();
  for (const file of listed.stdout.split('\0')) {
    if (file === '' || !file.startsWith(dir) || !startsWith(file, typed)) continue;
    const rest = file.slice(dir.length);
    const next = rest.indexOf('/');
    level.add(next === -1 ? file : `${dir}${rest.slice(0, next + 1)}`);
  }
  const candidates = [...level].filter((p) => printable(p) && !p.split('/').some((part) => part.toLowerCase() === '.git'));
  const usable = await mapInBatches(candidates, (p) => (p.endsWith('/') ? Promise.resolve(true) : isFileInside(repo.top, p)));
  return candidates.filter((_, i) => usable[i]).sort();
}

/**
 * Whether a listed path is a file the tools accept: it exists in the working tree (a deleted file has
 * nothing to explain or read), is not a directory (a submodule), and a symlink resolves inside it.
 * Directories offered as `dir/` hold listed files, so they are real directories of the tree.
 */
async function isFileInside(top: string, relative: string): Promise<boolean> {
  const full = path.join(top, relative);
  const stat = await fs.lstat(full).catch(() => undefined);
  if (!stat || stat.isDirectory()) return false;
  if (!stat.isSymbolicLink()) return true;
  const real = await fs.realpath(full).catch(() => undefined);
  if (!real || !isInside(real, await fs.realpath(top))) return false;
  return !(await fs.stat(real)).isDirectory();
}

async function mapInBatches<T, R>(items: readonly T[], fn: (item: T) => Promise<R>, size = 128): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) out.push(...(await Promise.all(items.slice(i, i + size).map(fn))));
  return out;
}
