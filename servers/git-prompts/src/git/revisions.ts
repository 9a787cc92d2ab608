import { ToolError } from '@suite/shared';
import type { GitRepository } from './repository.js';

const MAX_REVISION_LENGTH = 256;

/**
 * Checks the text of a revision before git sees it. A leading `-` would be read as an option by
 * most commands (`--output=/tmp/x` writes a file); the verification below passes it after
 * `--end-of-options` anyway, and only the object id it yields ever reaches another command.
 */
export function checkRevisionText(revision: string, what = 'revision'): void {
  if (revision.length === 0) throw ToolError.invalidArgument(`The ${what} is empty.`);
  if (revision.length > MAX_REVISION_LENGTH) throw ToolError.invalidArgument(`The ${what} is longer than ${MAX_REVISION_LENGTH} characters.`);
  if (revision.startsWith('-')) {
    throw ToolError.invalidArgument(`Invalid ${what} ${JSON.stringify(revision)}: it starts with "-", which git would read as an option. Give a branch, tag or commit.`);
  }
  if (/[\0\n\r]/.test(revision)) throw ToolError.invalidArgument(`Invalid ${what}: it contains a control character.`);
}

/**
 * Resolves a revision to its full object id with `rev-parse --verify --end-of-options`; `peel`
 * requires (and peels to) a commit. Later commands get the object id, never the text as given.
 */
export async function resolveRevision(repo: GitRepository, revision: string, options: { peel?: 'commit'; what?: string; signal?: AbortSignal } = {}): Promise<string> {
  const what = options.what ?? 'revision';
  checkRevisionText(revision, what);
  const spec = options.peel ? `${revision}^{${options.peel}}` : revision;
  const result = await repo.run(['rev-parse', '--verify', '--quiet', '--end-of-options', spec], options.signal ? { signal: options.signal } : {});
  const oid = result.stdout.trim();
  if (!result.ok || !/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(oid)) {
    const peelNote = options.peel ? ` (or it is not a ${options.peel})` : '';
    throw ToolError.notFound(`Unknown ${what} ${JSON.stringify(revision)}${peelNote}. Give a branch, tag or commit of this repository; git_branch lists the branches.`);
  }
  return oid;
}

/** A range as the user wrote it: `A..B`, `A...B` (from the merge base), `A..` or a single `A` (meaning A..HEAD). */
export interface RangeText {
  from: string;
  to: string;
  symmetric: boolean;
}

export function parseRange(text: string): RangeText {
  const trimmed = text.trim();
  const three = trimmed.indexOf('...');
  if (three !== -1) return { from: trimmed.slice(0, three) || 'HEAD', to: trimmed.slice(three + 3) || 'HEAD', symmetric: true };
  const two = trimmed.indexOf('..');
  if (two !== -1) return { from: trimmed.slice(0, two) || 'HEAD', to: trimmed.slice(two + 2) || 'HEAD', symmetric: false };
  return { from: trimmed, to: 'HEAD', symmetric: false };
}

/** A range resolved to commits. For `A...B` the start is their merge base: what B brings that A lacks. */
export interface ResolvedRange {
  from: string;
  to: string;
  /** The range as the user wrote it, for messages. */
  label: string;
}

export async function resolveRange(repo: GitRepository, text: string, signal?: AbortSignal): Promise<ResolvedRange> {
  const range = parseRange(text);
  const opts = { peel: 'commit' as const, ...(signal ? { signal } : {}) };
  const [from, to] = await Promise.all([resolveRevision(repo, range.from, { ...opts, what: 'start of the range' }), resolveRevision(repo, range.to, { ...opts, what: 'end of the range' })]);
  if (!range.symmetric) return { from, to, label: text.trim() };
  return { from: await mergeBase(repo, from, to, signal), to, label: text.trim() };
}

/** The merge base of two commits (object ids). */
export async function mergeBase(repo: GitRepository, a: string, b: string, signal?: AbortSignal): Promise<string> {
  const result = await repo.run(['merge-base', a, b], signal ? { signal } : {});
  const oid = result.stdout.trim();
  if (!result.ok || oid === '') throw ToolError.notFound('The two revisions have no common history.');
  return oid;
}

export interface RefNames {
  branches: string[];
  remotes: string[];
  tags: string[];
}

/** Branch, remote-tracking and tag names (short form), most recently committed first. */
export async function listRefs(repo: GitRepository, signal?: AbortSignal): Promise<RefNames> {
  const out = await repo.read(['for-each-ref', '--sort=-creatordate', '--format=%(refname)', 'refs/heads', 'refs/remotes', 'refs/tags'], 'Listing branches', signal ? { signal } : {});
  const names: RefNames = { branches: [], remotes: [], tags: [] };
  for (const ref of out.split('\n')) {
    if (ref.startsWith('refs/heads/')) names.branches.push(ref.slice(11));
    else if (ref.startsWith('refs/remotes/')) {
      if (!ref.endsWith('/HEAD')) names.remotes.push(ref.slice(13));
    } else if (ref.startsWith('refs/tags/')) names.tags.push(ref.slice(10));
  }
  return names;
}

/** The newest tag reachable from HEAD, or undefined when there is none (or no commit yet). */
export async function lastTag(repo: GitRepository, signal?: AbortSignal): Promise<string | undefined> {
  const result = await repo.run(['describe', '--tags', '--abbrev=0', 'HEAD'], signal ? { signal } : {});
  const tag = result.stdout.trim();
  return result.ok && tag !== '' ? tag : undefined;
}

/** The branch HEAD is on, or undefined when detached (or unborn: then the branch to be). */
export async function currentBranch(repo: GitRepository, signal?: AbortSignal): Promise<string | undefined> {
  const result = await repo.run(['symbolic-ref', '--quiet', '--short', 'HEAD'], signal ? { signal } : {});
  return result.ok ? result.stdout.trim() || undefined : undefined;
}

/** The branches a pull request targets by default, in order of preference (after origin's HEAD). */
export const BASE_CANDIDATES: readonly string[] = ['main', 'master', 'trunk', 'develop', 'origin/main', 'origin/master'];

/**
 * The branch a pull request would target: the remote's default branch when known, else the first
 * of main, master, trunk, develop that exists and is not the current branch.
 */
export async function defaultBase(repo: GitRepository, signal?: AbortSignal): Promise<string | undefined> {
  const opts = signal ? { signal } : {};
  const [remoteHead, refs, current] = await Promise.all([
    repo.run(['symbolic-ref', '--quiet', '--short', 'refs/remotes/origin/HEAD'], opts),
    listRefs(repo, signal),
    currentBranch(repo, signal),
  ]);
  const remote = remoteHead.ok ? remoteHead.stdout.trim() : '';
  const candidates = [...(remote ? [remote] : []), ...BASE_CANDIDATES];
  for (const name of candidates) {
    if (name === current) continue;
    if (refs.branches.includes(name) || refs.remotes.includes(name)) return name;
  }
  return undefined;
}

/** Whether HEAD points at a commit (false in a repository with no commit yet). */
export async function hasCommits(repo: GitRepository, signal?: AbortSignal): Promise<boolean> {
  const result = await repo.run(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], signal ? { signal } : {});
  return result.ok;
}
