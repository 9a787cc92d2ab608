import { createHash } from 'node:crypto';

/**
 * What the fake GitHub remembers: users and their tokens, repositories with real git objects
 * (blobs, flat trees, commits, refs), issues and pull requests (one number space, as on GitHub),
 * comments, labels, reviews, statuses, check runs, releases, workflow runs with job logs, and
 * notifications. Plain data; the route modules read and change it and render GitHub's shapes.
 */

export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read';

export interface FakeUser {
  id: number;
  login: string;
  type: 'User' | 'Organization' | 'Bot';
  name: string | null;
  email: string | null;
  bio: string | null;
  company: string | null;
  location: string | null;
  createdAt: string;
}

/** A token: whose it is, and what a fine-grained token may do (writes refused with a 403 when not). */
export interface FakeToken {
  login: string;
  canWrite: boolean;
  /**
   * A fine-grained token's repository permissions (`actions: 'read'`), when the test gives them:
   * a permission it lacks is a 404 on a private repository's reads and a 403 naming it on writes.
   */
  permissions?: Partial<Record<string, 'read' | 'write'>>;
  /** A classic token's scopes, answered in x-oauth-scopes (GitHub sends it only for classic tokens). */
  scopes?: string[];
}

export interface FakeCommit {
  sha: string;
  message: string;
  tree: string;
  parents: string[];
  author: { name: string; email: string; date: string };
  /** The GitHub account of the author, when there is one. */
  login: string | null;
}

export interface FakeIssue {
  number: number;
  id: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  stateReason: 'completed' | 'not_planned' | 'reopened' | null;
  author: string | null;
  labels: string[];
  assignees: string[];
  milestone: { number: number; title: string } | null;
  createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  /** Set when this number is a pull request. */
  pull?: FakePull;
  /** Its sub-issues, by GitHub id (of issues in any repository). */
  subIssueIds?: number[];
}

export interface FakePull {
  head: string;
  /** The repository the head branch lives in (owner/repo), for pull requests from forks. */
  headRepo: string;
  base: string;
  draft: boolean;
  merged: boolean;
  mergedAt: string | null;
  mergedBy: string | null;
  mergeCommit: string | null;
  mergeable: boolean | null;
}

export interface FakeComment {
  id: number;
  issue: number;
  author: string | null;
  body: string;
  createdAt: string;
}

export interface FakeReview {
  id: number;
  pull: number;
  author: string | null;
  state: 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'PENDING' | 'DISMISSED';
  body: string;
  commitId: string;
  submittedAt: string;
}

export interface FakeReviewComment {
  id: number;
  pull: number;
  reviewId: number | null;
  author: string | null;
  path: string;
  line: number | null;
  body: string;
  commitId: string;
  createdAt: string;
}

export interface FakeLabel {
  id: number;
  name: string;
  color: string;
  description: string | null;
}

export interface FakeStatus {
  id: number;
  context: string;
  state: 'error' | 'failure' | 'pending' | 'success';
  description: string | null;
}

export interface FakeCheckRun {
  id: number;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required' | null;
  title: string | null;
}

export interface FakeRelease {
  id: number;
  tag: string;
  name: string | null;
  body: string | null;
  draft: boolean;
  prerelease: boolean;
  author: string;
  publishedAt: string | null;
  assets: { id: number; name: string; size: number; downloads: number }[];
}

export interface FakeJob {
  id: number;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'cancelled' | 'skipped' | null;
  log: string;
  steps?: FakeStep[];
}

export interface FakeStep {
  number: number;
  name: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'cancelled' | 'skipped' | null;
}

export interface FakeWorkflow {
  id: number;
  name: string;
  /** The file under .github/workflows/. */
  file: string;
  state: 'active' | 'disabled_manually' | 'disabled_inactivity';
}

export interface FakeArtifact {
  id: number;
  name: string;
  sizeInBytes: number;
  expired: boolean;
  createdAt: string;
}

export interface FakeRun {
  id: number;
  workflowId: number;
  workflowFile: string;
  name: string;
  displayTitle: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: 'success' | 'failure' | 'cancelled' | null;
  branch: string;
  event: string;
  headSha: string;
  createdAt: string;
  jobs: FakeJob[];
  artifacts?: FakeArtifact[];
  /** Raised by a rerun. */
  attempt?: number;
}

export interface FakeRepo {
  id: number;
  owner: string;
  name: string;
  private: boolean;
  description: string | null;
  defaultBranch: string;
  hasIssues: boolean;
  fork: boolean;
  parent: string | null;
  language: string | null;
  stars: number;
  createdAt: string;
  collaborators: Map<string, Permission>;
  blobs: Map<string, Buffer>;
  /** Flat trees: path -> blob sha. */
  trees: Map<string, Map<string, string>>;
  commits: Map<string, FakeCommit>;
  /** `heads/NAME` and `tags/NAME` -> commit sha. */
  refs: Map<string, string>;
  protectedBranches: Set<string>;
  issues: FakeIssue[];
  comments: FakeComment[];
  labels: FakeLabel[];
  reviews: FakeReview[];
  reviewComments: FakeReviewComment[];
  statuses: Map<string, FakeStatus[]>;
  checkRuns: Map<string, FakeCheckRun[]>;
  releases: FakeRelease[];
  runs: FakeRun[];
  workflows?: FakeWorkflow[];
  codeScanningAlerts?: FakeCodeScanningAlert[];
  dependabotAlerts?: FakeDependabotAlert[];
  secretScanningAlerts?: FakeSecretScanningAlert[];
  /** Discussions (GraphQL only): categories, and discussions numbered after the issues. */
  discussionCategories?: FakeDiscussionCategory[];
  discussions?: FakeDiscussion[];
  /** Review threads of pull requests (GraphQL), with their resolved state. */
  reviewThreads?: FakeReviewThread[];
}

export interface FakeDiscussionCategory {
  id: number;
  name: string;
  slug: string;
  description: string | null;
  answerable: boolean;
}

export interface FakeDiscussionComment {
  id: number;
  author: string | null;
  body: string;
  createdAt: string;
  /** The top-level comment this replies to (GitHub nests replies one level deep). */
  replyTo: number | null;
}

export interface FakeDiscussion {
  id: number;
  number: number;
  title: string;
  body: string;
  author: string | null;
  categoryId: number;
  createdAt: string;
  updatedAt: string;
  closed: boolean;
  answerId: number | null;
  comments: FakeDiscussionComment[];
}

export interface FakeReviewThread {
  id: number;
  pull: number;
  /** The review it belongs to (a pending one's threads are its author's alone). */
  reviewId: number | null;
  path: string;
  line: number | null;
  startLine: number | null;
  side: 'LEFT' | 'RIGHT' | null;
  startSide: 'LEFT' | 'RIGHT' | null;
  resolved: boolean;
  resolvedBy: string | null;
  outdated: boolean;
  comments: { id: number; author: string | null; body: string; createdAt: string }[];
}

export interface FakeCodeScanningAlert {
  number: number;
  state: 'open' | 'dismissed' | 'fixed';
  dismissedReason: string | null;
  dismissedComment: string | null;
  ruleId: string;
  severity: 'error' | 'warning' | 'note';
  securitySeverity: 'critical' | 'high' | 'medium' | 'low' | null;
  description: string;
  help: string | null;
  tool: string;
  path: string;
  line: number;
  message: string;
}

export interface FakeDependabotAlert {
  number: number;
  state: 'open' | 'dismissed' | 'fixed' | 'auto_dismissed';
  dismissedReason: string | null;
  ecosystem: string;
  name: string;
  manifest: string;
  ghsa: string;
  cve: string | null;
  summary: string;
  description: string;
  severity: 'critical' | 'high' | 'medium' | 'low';
  range: string;
  patched: string | null;
}

export interface FakeSecretScanningAlert {
  number: number;
  state: 'open' | 'resolved';
  resolution: string | null;
  resolutionComment: string | null;
  secretType: string;
  displayName: string;
  /** The leaked value: GitHub answers it unless asked with hide_secret. */
  secret: string;
}

export interface FakeNotification {
  id: string;
  recipient: string;
  repo: string;
  title: string;
  type: 'Issue' | 'PullRequest' | 'Release' | 'Commit';
  reason: string;
  unread: boolean;
  updatedAt: string;
}

export function sha1(text: string | Buffer): string {
  return createHash('sha1').update(text).digest('hex');
}

/** A fixed clock, so answers are the same on every run. */
export const EPOCH = Date.parse('2025-01-01T00:00:00Z');

export class GithubState {
  readonly users = new Map<string, FakeUser>();
  readonly tokens = new Map<string, FakeToken>();
  readonly repos = new Map<string, FakeRepo>();
  readonly notifications: FakeNotification[] = [];
  private nextId = 1000;
  private tick = 0;

  id(): number {
    return this.nextId++;
  }

  /** Timestamps one minute apart, in creation order. */
  now(): string {
    this.tick += 1;
    return new Date(EPOCH + this.tick * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  }

  addUser(login: string, options: Partial<Omit<FakeUser, 'login' | 'id'>> = {}): FakeUser {
    const user: FakeUser = { id: this.id(), login, type: 'User', name: null, email: null, bio: null, company: null, location: null, createdAt: this.now(), ...options };
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  addToken(token: string, login: string, options: Partial<Omit<FakeToken, 'login'>> = {}): void {
    this.tokens.set(token, { login, canWrite: true, ...options });
  }

  user(login: string): FakeUser | undefined {
    return this.users.get(login.toLowerCase());
  }

  repo(owner: string, name: string): FakeRepo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  /** A repository with one commit holding `files` on its default branch. */
  addRepo(owner: string, name: string, options: Partial<Pick<FakeRepo, 'private' | 'description' | 'defaultBranch' | 'hasIssues' | 'language' | 'stars'>> & { files?: Record<string, string | Buffer> } = {}): FakeRepo {
    if (!this.user(owner)) this.addUser(owner);
    const repo: FakeRepo = {
      id: this.id(),
      owner: this.user(owner)!.login,
      name,
      private: options.private ?? false,
      description: options.description ?? null,
      defaultBranch: options.defaultBranch ?? 'main',
      hasIssues: options.hasIssues ?? true,
      fork: false,
      parent: null,
      language: options.language ?? null,
      stars: options.stars ?? 0,
      createdAt: this.now(),
      collaborators: new Map([[owner.toLowerCase(), 'admin']]),
      blobs: new Map(),
      trees: new Map(),
      commits: new Map(),
      refs: new Map(),
      protectedBranches: new Set(),
      issues: [],
      comments: [],
      labels: [],
      reviews: [],
      reviewComments: [],
      statuses: new Map(),
      checkRuns: new Map(),
      releases: [],
      runs: [],
    };
    this.repos.set(`${owner}/${name}`.toLowerCase(), repo);
    if (options.files) this.commit(repo, repo.defaultBranch, 'Initial commit', options.files, owner);
    return repo;
  }

  putBlob(repo: FakeRepo, content: Buffer): string {
    const sha = sha1(Buffer.concat([Buffer.from(`blob ${content.length}\0`), content]));
    repo.blobs.set(sha, content);
    return sha;
  }

  putTree(repo: FakeRepo, entries: Map<string, string>): string {
    const sorted = [...entries.entries()].sort(([a], [b]) => a.localeCompare(b));
    const sha = sha1(`tree ${JSON.stringify(sorted)}`);
    repo.trees.set(sha, new Map(sorted));
    return sha;
  }

  putCommit(repo: FakeRepo, tree: string, parents: string[], message: string, login: string | null): string {
    const date = this.now();
    const author = { name: login ?? 'Someone', email: `${login ?? 'someone'}@users.noreply.example`, date };
    const sha = sha1(`commit ${tree} ${parents.join(',')} ${message} ${date}`);
    repo.commits.set(sha, { sha, message, tree, parents, author, login });
    return sha;
  }

  /** The files of a commit (path -> blob sha). */
  filesAt(repo: FakeRepo, commitSha: string): Map<string, string> {
    const commit = repo.commits.get(commitSha);
    return commit ? (repo.trees.get(commit.tree) ?? new Map()) : new Map();
  }

  /** Resolves a branch, tag or (abbreviated) SHA to a commit sha. */
  resolve(repo: FakeRepo, ref: string | undefined): string | undefined {
    const name = ref ?? repo.defaultBranch;
    if (repo.refs.has(`heads/${name}`)) return repo.refs.get(`heads/${name}`);
    if (repo.refs.has(`tags/${name}`)) return repo.refs.get(`tags/${name}`);
    if (/^[0-9a-f]{7,40}$/.test(name)) return [...repo.commits.keys()].find((sha) => sha.startsWith(name));
    return undefined;
  }

  /** Commits files (content, or null to delete) on top of a branch (created when missing), as one commit. */
  commit(repo: FakeRepo, branch: string, message: string, changes: Record<string, string | Buffer | null>, login: string | null): string {
    const head = repo.refs.get(`heads/${branch}`);
    const files = new Map(head ? this.filesAt(repo, head) : []);
    for (const [path, content] of Object.entries(changes)) {
      if (content === null) files.delete(path);
      else files.set(path, this.putBlob(repo, Buffer.isBuffer(content) ? content : Buffer.from(content, 'utf8')));
    }
    const sha = this.putCommit(repo, this.putTree(repo, files), head ? [head] : [], message, login);
    repo.refs.set(`heads/${branch}`, sha);
    return sha;
  }

  /** Whether `ancestor` is `descendant` or one of its ancestors (for fast-forward checks). */
  isAncestor(repo: FakeRepo, ancestor: string, descendant: string): boolean {
    const seen = new Set<string>();
    const queue = [descendant];
    while (queue.length > 0) {
      const sha = queue.shift()!;
      if (sha === ancestor) return true;
      if (seen.has(sha)) continue;
      seen.add(sha);
      queue.push(...(repo.commits.get(sha)?.parents ?? []));
    }
    return false;
  }

  addIssue(repo: FakeRepo, fields: Partial<Omit<FakeIssue, 'number' | 'id'>> & { title: string }): FakeIssue {
    const created = this.now();
    const issue: FakeIssue = {
      number: repo.issues.length + 1,
      id: this.id(),
      body: null,
      state: 'open',
      stateReason: null,
      author: repo.owner,
      labels: [],
      assignees: [],
      milestone: null,
      createdAt: created,
      updatedAt: created,
      closedAt: null,
      ...fields,
    };
    repo.issues.push(issue);
    return issue;
  }

  addPull(repo: FakeRepo, fields: { title: string; head: string; base?: string; body?: string | null; author?: string | null; draft?: boolean; headRepo?: string }): FakeIssue {
    return this.addIssue(repo, {
      title: fields.title,
      body: fields.body ?? null,
      author: fields.author === undefined ? repo.owner : fields.author,
      pull: {
        head: fields.head,
        headRepo: fields.headRepo ?? `${repo.owner}/${repo.name}`,
        base: fields.base ?? repo.defaultBranch,
        draft: fields.draft ?? false,
        merged: false,
        mergedAt: null,
        mergedBy: null,
        mergeCommit: null,
        mergeable: true,
      },
    });
  }

  permissionOf(repo: FakeRepo, login: string | undefined): Permission | undefined {
    return login ? repo.collaborators.get(login.toLowerCase()) : undefined;
  }
}

/** A unified diff of two versions of a file, whole-file hunks (enough for a fake). */
export function unifiedPatch(before: string | undefined, after: string | undefined): { patch: string; additions: number; deletions: number } {
  const lines = (text: string | undefined): string[] => (text === undefined || text === '' ? [] : text.replace(/\n$/, '').split('\n'));
  const a = lines(before);
  const b = lines(after);
  const patch = `@@ -${a.length ? 1 : 0},${a.length} +${b.length ? 1 : 0},${b.length} @@\n${[...a.map((l) => `-${l}`), ...b.map((l) => `+${l}`)].join('\n')}`;
  return { patch, additions: b.length, deletions: a.length };
}
