import type { ToolsetInfo } from '@suite/shared';

/**
 * How much of a diff a prompt, resource or tool shows. A model reads every byte it is given, so a
 * 2,000-file change is cut to a budget with a note of what was left out rather than sent whole.
 */
export interface DiffBudget {
  /** Bytes of one file's diff; past it the file's diff is cut at a line boundary. */
  perFileBytes: number;
  /** Bytes of the whole diff; files that no longer fit are listed, not shown. */
  totalBytes: number;
  /** git glob pathspecs (`**` crosses directories) of files whose diff is left out: lock files, generated files. */
  exclude: readonly string[];
}

/**
 * What every session of one process shares, parsed from the command line in index.ts. A leaf
 * module: it imports nothing of this package.
 */
export interface GitPromptsConfig {
  /** Real paths of the repositories (or directories holding repositories) given on the command line. */
  directories: readonly string[];
  /** The same paths as typed, so `/tmp/x` still works where /tmp is a symlink. */
  aliases: readonly string[];
  budget: DiffBudget;
  /** Time limit of one git call. */
  timeoutMs: number;
  /** How deep below a root to look for repositories (0: only the root itself). */
  scanDepth: number;
  /**
   * `safe.directory` entries of the user's own global git configuration: read calls ignore that
   * file, so these are handed to git explicitly (git's ownership check stays on otherwise).
   */
  safeDirectories: readonly string[];
  /** The git program (default `git`, found on PATH). */
  gitBinary: string;
  /** --allow-remote: the tools that talk to a remote (fetch, pull, push) are registered (they write too: --allow-write as well). */
  allowRemote?: boolean;
  /** --allow-author: git_commit takes an author. */
  allowAuthor?: boolean;
  /** --allow-signing: commits are signed (with the user's own program) when the repository asks for it. */
  allowSigning?: boolean;
}

/**
 * Lock files and generated files: long, machine-written and useless to a reviewer. Globs in git's
 * pathspec syntax; `--exclude` adds to them and `--no-default-excludes` drops them.
 */
export const DEFAULT_EXCLUDES: readonly string[] = [
  '**/package-lock.json',
  '**/npm-shrinkwrap.json',
  '**/pnpm-lock.yaml',
  '**/yarn.lock',
  '**/bun.lockb',
  '**/Cargo.lock',
  '**/Gemfile.lock',
  '**/composer.lock',
  '**/poetry.lock',
  '**/uv.lock',
  '**/Pipfile.lock',
  '**/go.sum',
  '**/flake.lock',
  '**/*.min.js',
  '**/*.min.css',
  '**/*.map',
  '**/*.pb.go',
  '**/*_pb2.py',
  '**/*.generated.*',
  '**/__snapshots__/**',
];

export const DEFAULT_BUDGET: DiffBudget = { perFileBytes: 12 * 1024, totalBytes: 64 * 1024, exclude: DEFAULT_EXCLUDES };

export const DEFAULTS = { timeoutMs: 30_000, scanDepth: 2, gitBinary: 'git' } as const;

/** The server's toolsets; read-only mode removes the tools that write whatever is chosen. */
export const TOOLSETS: readonly ToolsetInfo[] = [
  { name: 'inspect', description: 'Read the repository: status, diffs, log, commits and files, branches, blame, stash, worktrees, tags, reflog, remotes.', default: true },
  { name: 'commit', description: 'Draft a commit message; with --allow-write also stage, unstage and commit.', default: true },
  { name: 'branches', description: 'With --allow-write: create branches and switch between them.', default: true },
  { name: 'stash', description: 'With --allow-write: stash changes, apply, pop and drop stash entries.', default: true },
  { name: 'tags', description: 'With --allow-write: create and delete tags.', default: true },
  { name: 'worktrees', description: 'With --allow-write: add and remove worktrees.', default: true },
  { name: 'integrate', description: 'With --allow-write: merge, rebase, cherry-pick and revert, with continue and abort; conflicts as data.', default: true },
  { name: 'remote', description: 'With --allow-remote and --allow-write: fetch, pull and push (file://, https:// and ssh:// only).', default: true },
  { name: 'restore', description: 'With --allow-write: restore files from the index or a revision; list or remove untracked files.', default: true },
];
