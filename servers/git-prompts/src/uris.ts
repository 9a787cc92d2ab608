/**
 * The git:// URIs of this server: `git://<repository name>/<what>`. A leaf module, so resources
 * (which serve them) and prompts (which embed them) agree on one spelling.
 */
export const TEMPLATES = {
  status: 'git://{repo}/status',
  staged: 'git://{repo}/diff/staged',
  unstaged: 'git://{repo}/diff/unstaged',
  /** Matches `git://x/log` too: shared's matcher treats a query expression as optional. */
  log: 'git://{repo}/log{?limit}',
  logRange: 'git://{repo}/log/{range}',
  compare: 'git://{repo}/compare/{range}',
  show: 'git://{repo}/show/{rev}',
  file: 'git://{repo}/file/{path}',
  blame: 'git://{repo}/blame/{path}',
  stash: 'git://{repo}/stash',
} as const;

const base = (repo: string): string => `git://${repo}`;

export const gitUri = {
  status: (repo: string): string => `${base(repo)}/status`,
  staged: (repo: string): string => `${base(repo)}/diff/staged`,
  unstaged: (repo: string): string => `${base(repo)}/diff/unstaged`,
  log: (repo: string, limit?: number): string => (limit === undefined ? `${base(repo)}/log` : `${base(repo)}/log?limit=${limit}`),
  /** Revisions and paths are one URI segment each: `/` and `:` inside them are percent-encoded. */
  logRange: (repo: string, range: string): string => `${base(repo)}/log/${encodeURIComponent(range)}`,
  compare: (repo: string, range: string): string => `${base(repo)}/compare/${encodeURIComponent(range)}`,
  show: (repo: string, revision: string): string => `${base(repo)}/show/${encodeURIComponent(revision)}`,
  file: (repo: string, path: string): string => `${base(repo)}/file/${encodeURIComponent(path)}`,
  blame: (repo: string, path: string): string => `${base(repo)}/blame/${encodeURIComponent(path)}`,
  stash: (repo: string): string => `${base(repo)}/stash`,
};
