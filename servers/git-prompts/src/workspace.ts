import { lstatSync, promises as fs } from 'node:fs';
import path from 'node:path';
import { CancelledError, countOf, isInside, throwIfCancelled, ToolError, type RequestContext } from '@suite/shared';
import type { GitPromptsConfig } from './config.js';
import { discover, GitRepository, type Discovery, type GitSettings } from './git/repository.js';

/** A repository found under the roots, by the name git:// URIs use. */
export interface RepositoryListing {
  name: string;
  /** The directory holding `.git` (real path). */
  path: string;
}

/**
 * A discovery under way, shared by every call that needs the repository meanwhile. It runs on its
 * own signal, stopped once every call waiting for it has been cancelled: one caller cancelling
 * must not fail the others, and git must not run on when nobody waits any more.
 */
interface Opening {
  promise: Promise<Opened>;
  controller: AbortController;
  waiting: number;
}

interface Opened {
  discovery: Discovery;
  signature: string;
  /** Built per name: the same repository may be reached under two names from two sessions. */
  byName: Map<string, GitRepository>;
}

/** Directories never searched for repositories: they hold dependencies, not projects. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'vendor', 'target', 'dist', 'build', '__pycache__']);
const MAX_SCANNED_DIRECTORIES = 2000;
const MAX_REPOSITORIES = 200;
/** How long a listing of the repositories under a set of roots is reused (a new clone shows up after this). */
const LISTING_TTL_MS = 3000;

const NO_ROOTS =
  'No repository is configured. Start the server with a repository path as its argument (for example: npx @suite/server-git-prompts ~/code/app), or use a client that offers your project folders as roots.';

/** Started with repositories, but the client's roots overlap none of them: starting with one would not help. */
const NARROWED_TO_NOTHING =
  "No repository is allowed: the client's roots leave none of the server's repositories (a root narrows access to what lies inside both). " +
  'Add a root that holds one of them in the client, or remove the roots that exclude them.';

/**
 * What a directory's `.git` entry is: a repository's directory, a `.git` file (a worktree or
 * submodule pointing at its git data), nothing, or something else (a FIFO, a socket, a device, a
 * dangling symlink), which git cannot use and which a reader could block on.
 */
async function gitEntry(dir: string): Promise<'repository' | 'none' | 'unusable'> {
  const entry = path.join(dir, '.git');
  const link = await fs.lstat(entry).catch(() => undefined);
  if (!link) return 'none';
  const stat = link.isSymbolicLink() ? await fs.stat(entry).catch(() => undefined) : link;
  return stat && (stat.isDirectory() || stat.isFile()) ? 'repository' : 'unusable';
}

/**
 * The process-wide view of the repositories: which ones the roots hold, and each one's discovery
 * (where its work tree and git directory really are, what its configuration says), reused until a
 * file it depends on changes. Sessions share it; what a session may reach is decided by its own
 * roots on every call.
 */
export class Workspace {
  readonly settings: GitSettings;
  private readonly opened = new Map<string, Opened>();
  private readonly opening = new Map<string, Opening>();
  private readonly listings = new Map<string, { at: number; list: Promise<RepositoryListing[]> }>();

  constructor(readonly config: GitPromptsConfig) {
    this.settings = { gitBinary: config.gitBinary, timeoutMs: config.timeoutMs, safeDirectories: config.safeDirectories, allowSigning: config.allowSigning === true };
  }

  /** The effective roots of the request's session (real paths). */
  async roots(ctx: RequestContext): Promise<string[]> {
    return (await ctx.roots()).directories;
  }

  /** The repositories the session's roots hold: a root that is a repository, or repositories up to `scanDepth` below it. */
  async repositories(ctx: RequestContext): Promise<RepositoryListing[]> {
    return this.listFor(await this.roots(ctx));
  }

  /** `fresh` scans again now (a change was seen) and keeps that scan for the next callers. */
  async listFor(roots: readonly string[], options: { fresh?: boolean } = {}): Promise<RepositoryListing[]> {
    const key = roots.join('\0');
    const cached = this.listings.get(key);
    if (cached && !options.fresh && Date.now() - cached.at < LISTING_TTL_MS) return cached.list;
    const list = this.scan(roots);
    this.listings.set(key, { at: Date.now(), list });
    // Sessions with other roots come and go: keep the map small.
    if (this.listings.size > 64) this.listings.delete(this.listings.keys().next().value!);
    list.catch(() => this.listings.delete(key));
    return list;
  }

  private async scan(roots: readonly string[]): Promise<RepositoryListing[]> {
    const found: string[] = [];
    let visited = 0;
    const visit = async (dir: string, depth: number): Promise<void> => {
      if (found.length >= MAX_REPOSITORIES || visited++ >= MAX_SCANNED_DIRECTORIES) return;
      const entry = await gitEntry(dir);
      if (entry === 'repository' && !found.includes(dir)) found.push(dir);
      if (entry !== 'none') return;
      if (depth === 0) return;
      const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
      const children = entries
        .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !SKIPPED_DIRECTORIES.has(e.name))
        .map((e) => e.name)
        .sort();
      for (const name of children) await visit(path.join(dir, name), depth - 1);
    };
    for (const root of roots) await visit(root, this.config.scanDepth);
    const names = new Map<string, number>();
    return found.map((dir) => {
      const base = uriName(path.basename(dir));
      const seen = (names.get(base) ?? 0) + 1;
      names.set(base, seen);
      return { name: seen === 1 ? base : `${base}-${seen}`, path: dir };
    });
  }

  /**
   * The repository a call names: a name from the listing, a path (absolute, or relative to the
   * first root), or nothing when the roots hold exactly one. The path must lie inside the roots
   * after every symlink is resolved, and so must the repository's work tree and git directory.
   */
  async resolve(ctx: RequestContext, repo: string | undefined, argument = 'repo_path'): Promise<GitRepository> {
    const snapshot = await ctx.roots();
    const roots = snapshot.directories;
    if (roots.length === 0) throw ToolError.accessDenied(snapshot.source === 'command-line narrowed by client' ? NARROWED_TO_NOTHING : NO_ROOTS);
    const listing = await this.listFor(roots);
    if (repo === undefined || repo.trim() === '') {
      if (listing.length === 1) return this.open(listing[0]!.path, roots, ctx.signal, listing[0]!.name);
      if (listing.length === 0) {
        throw ToolError.notFound(
          `No git repository was found in the allowed directories (searched ${countOf(this.config.scanDepth, 'level')} deep). Give ${argument}, or start the server with a repository.`,
        );
      }
      throw ToolError.invalidArgument(`Several repositories are available: ${listing.map((l) => l.name).join(', ')}. Say which one with ${argument} (one of these names, or a path).`);
    }
    const named = listing.find((l) => l.name === repo);
    if (named) return this.open(named.path, roots, ctx.signal, named.name);
    const guard = await ctx.paths();
    const resolved = await guard.resolve(repo, { mustExist: true });
    const stat = await fs.stat(resolved.real);
    if (!stat.isDirectory()) throw ToolError.invalidArgument(`${JSON.stringify(repo)} is a file; give the repository's directory.`);
    if ((await gitEntry(resolved.real)) === 'unusable') {
      throw ToolError.invalidArgument(`${JSON.stringify(repo)} has a .git entry that is neither a directory nor a file (a FIFO, socket, device or broken link), so it is not a repository this server opens.`);
    }
    return this.open(resolved.real, roots, ctx.signal, undefined, listing);
  }

  private async open(dir: string, roots: readonly string[], signal: AbortSignal, name: string | undefined, listing: readonly RepositoryListing[] = []): Promise<GitRepository> {
    let opened = this.opened.get(dir);
    if (!opened || signatureOf(dir, opened.discovery) !== opened.signature) {
      let opening = this.opening.get(dir);
      if (!opening) {
        const controller = new AbortController();
        const promise = this.discover(dir, roots, controller.signal).finally(() => this.opening.delete(dir));
        // Every waiter may have left (cancelled) before it settles: its failure is then nobody's.
        promise.catch(() => undefined);
        opening = { promise, controller, waiting: 0 };
        this.opening.set(dir, opening);
      }
      opened = await join(opening, signal);
      this.opened.set(dir, opened);
    }
    const { top, gitDir, commonDir } = opened.discovery;
    const inside = (p: string): boolean => roots.some((root) => isInside(p, root));
    if (!inside(top)) {
      throw ToolError.accessDenied('This directory belongs to a git repository whose working tree reaches outside the allowed directories. Allow the repository\'s top directory instead.');
    }
    if (!inside(gitDir) || !inside(commonDir)) {
      throw ToolError.accessDenied(
        'This repository keeps its git data outside the allowed directories (a .git file pointing elsewhere, a linked worktree or a submodule). Allow the directory that holds its git data too.',
      );
    }
    // An alternate object store outside the roots would let a short hash prefix read another repository's objects.
    if (opened.discovery.unreadableStores) {
      throw ToolError.accessDenied('This repository names its alternate object stores in a file that cannot be read (objects/info/alternates is not a regular file), so what it reads cannot be checked. Fix or remove that file.');
    }
    if (!opened.discovery.objectStores.every(inside)) {
      throw ToolError.accessDenied(
        "This repository reads objects from a store outside the allowed directories (objects/info/alternates, or an objects directory that is a symlink), so it could show another repository's content. Allow that directory too, or make the repository self-contained (git repack -a -d, then remove objects/info/alternates).",
      );
    }
    const label = name ?? listing.find((l) => l.path === top)?.name ?? uriName(path.basename(top));
    let repo = opened.byName.get(label);
    if (!repo) {
      repo = new GitRepository(label, top, gitDir, commonDir, opened.discovery.config, opened.discovery.other, this.settings);
      opened.byName.set(label, repo);
    }
    return repo;
  }

  private async discover(dir: string, roots: readonly string[], signal: AbortSignal): Promise<Opened> {
    const found = await discover(this.settings, dir, roots.map((r) => path.dirname(r)), signal);
    const real = async (p: string): Promise<string> => fs.realpath(p).catch(() => p);
    const discovery: Discovery = { ...found, top: await real(found.top), gitDir: await real(found.gitDir), commonDir: await real(found.commonDir) };
    return { discovery, signature: signatureOf(dir, discovery), byName: new Map() };
  }
}

/** Waits for a shared discovery; the last waiter to be cancelled stops it. */
async function join(opening: Opening, signal: AbortSignal): Promise<Opened> {
  opening.waiting++;
  let onAbort: (() => void) | undefined;
  try {
    throwIfCancelled(signal);
    const cancelled = new Promise<never>((_resolve, reject) => {
      onAbort = () => reject(new CancelledError());
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return await Promise.race([opening.promise, cancelled]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
    opening.waiting--;
    if (opening.waiting === 0 && signal.aborted) opening.controller.abort();
  }
}

/** Repository names go into git:// URIs as the authority: keep them to characters that need no escaping. */
function uriName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._~-]/g, '-').replace(/^-+|-+$/g, '');
  return cleaned || 'repository';
}

/**
 * What a discovery depends on: the directory, the `.git` entry, every configuration file it read
 * (included ones too) and, where the configuration includes files by branch, HEAD. A change to
 * any of them means discovering again, so an edited configuration is never served stale.
 */
function signatureOf(dir: string, discovery: Discovery): string {
  const files = new Set([
    dir,
    path.join(discovery.top, '.git'),
    path.join(discovery.gitDir, 'config'),
    path.join(discovery.commonDir, 'config'),
    path.join(discovery.gitDir, 'config.worktree'),
    path.join(discovery.commonDir, 'worktrees'),
    ...discovery.otherFiles,
    ...discovery.objectStoreFiles,
  ]);
  for (const entry of discovery.config) {
    const origin = entry.origin.startsWith('file:') ? path.resolve(discovery.top, entry.origin.slice(5)) : undefined;
    if (origin) files.add(origin);
    // An included file that does not exist yet has no entries, so no origin: watch where it would be.
    if (origin && entry.value && /^include(if\..*)?\.path$/i.test(entry.key)) {
      const value = entry.value.startsWith('~/') ? path.join(process.env.HOME ?? '/', entry.value.slice(2)) : entry.value;
      files.add(path.resolve(path.dirname(origin), value));
    }
    if (/^includeif\.onbranch:/i.test(entry.key)) files.add(path.join(discovery.gitDir, 'HEAD'));
  }
  // A handful of lstat calls: synchronous ones cost microseconds, where a trip through the thread pool
  // per file would cost more than the check is worth on every call.
  return [...files]
    .map((file) => {
      const stat = lstatSync(file, { throwIfNoEntry: false });
      return stat ? `${file}:${stat.ino}:${stat.mtimeMs}:${stat.size}` : `${file}:none`;
    })
    .join('\n');
}
