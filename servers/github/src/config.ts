import type { GithubAuthorizations } from './github-oauth.js';
import type { ToolsetInfo } from '@suite/shared';

/**
 * What every session of this server shares, parsed from the command line and the environment in
 * index.ts. A leaf module: it imports nothing of this package, so every other module can use it.
 */

export const TOOLSET_NAMES = ['context', 'repos', 'issues', 'pull_requests', 'users', 'actions', 'code_security', 'sub_issues', 'discussions', 'review_threads', 'notifications'] as const;
export type ToolsetName = (typeof TOOLSET_NAMES)[number];

/** The server's toolsets: users pick them with --toolsets; the first five are on without it. */
export const TOOLSETS: readonly (ToolsetInfo & { name: ToolsetName })[] = [
  { name: 'context', description: 'The authenticated user (who the token acts as).', default: true },
  { name: 'repos', description: 'Repositories: files, branches, tags, commits, releases, code search; create, fork, push.', default: true },
  { name: 'issues', description: 'Issues, their comments and labels; issue search.', default: true },
  { name: 'pull_requests', description: 'Pull requests: details, files, diffs, reviews, status checks; create, review, merge.', default: true },
  { name: 'users', description: 'Search GitHub users.', default: true },
  { name: 'actions', description: 'GitHub Actions: workflows, runs, jobs, the tail of job logs and artifacts; re-run failed jobs, cancel a run.' },
  { name: 'code_security', description: 'Code scanning, Dependabot and secret scanning alerts; dismiss or resolve them.' },
  { name: 'sub_issues', description: 'Sub-issues: list, add and remove.' },
  { name: 'discussions', description: 'Discussions: list, read with comments, categories; start one, comment, reply.' },
  { name: 'review_threads', description: 'Pending pull request reviews with line comments; review threads, resolve them.' },
  { name: 'notifications', description: 'Your notifications (read-only).' },
];

/** One entry of --repos: `owner/repo`, or `owner/*` for every repository of an owner. Lower-cased. */
export interface RepoPattern {
  owner: string;
  /** '*' for any repository of the owner. */
  repo: string;
}

/** Caps that keep an answer within what a model should read in one go. */
export interface GithubLimits {
  /** Files up to this size come back as text; larger or binary files as a resource link (GitHub's own inline limit). */
  maxFileBytes: number;
  /** A resource read (repo://...) fetches at most this much. */
  maxResourceBytes: number;
  /** Characters of one user-authored text (an issue body, a comment) before it is cut with a marker. */
  maxTextChars: number;
  /** Characters of a whole tool answer before it is cut with a marker. */
  maxOutputChars: number;
  /** Characters of a diff (commit or pull request) before it is cut with a marker. */
  maxDiffChars: number;
  /** The largest answer from GitHub read as JSON (or text); larger is refused with a message to narrow the request. */
  maxAnswerBytes: number;
  /** Default and largest number of log lines get_workflow_run_logs returns per job. */
  logTailLines: number;
  maxLogTailLines: number;
}

export const DEFAULT_LIMITS: GithubLimits = {
  maxFileBytes: 1024 * 1024,
  maxResourceBytes: 10 * 1024 * 1024,
  maxTextChars: 20_000,
  maxOutputChars: 100_000,
  maxDiffChars: 200_000,
  maxAnswerBytes: 64 * 1024 * 1024,
  logTailLines: 200,
  maxLogTailLines: 2000,
};

/**
 * How requests are spaced, retried and held for rate limits (src/github-request.ts). The spacings
 * are GitHub's guidance for avoiding secondary rate limits; tests shrink them.
 */
export interface ThrottleSettings {
  /** Minimum time between two writes (POST, PATCH, PUT, DELETE) of one token. */
  writeSpacingMs: number;
  /** Minimum time between two searches of one token. */
  searchSpacingMs: number;
  /** Minimum time between two writes that notify people (issues, comments, pull requests). */
  notificationSpacingMs: number;
  /** A known rate limit that lifts within this many seconds is waited out (a rate-limited request is retried once); a longer one is reported. */
  maxRateLimitWaitSeconds: number;
  /** Retries of a read (never a write) after a 5xx answer or a dropped connection, with quadratic back-off from retryBaseMs. */
  retries: number;
  retryBaseMs: number;
  /** The whole tool call (every request and retry it makes) must finish within this. */
  requestTimeoutMs: number;
  /**
   * Most requests of one token waiting on GitHub at once, across the sessions of the process (and
   * with --redis-url across replicas); the others queue in order. GitHub allows 100 concurrent
   * requests per user before its secondary rate limit, and a burst of calls then shares a few
   * kept-alive connections instead of opening one each (1,000 concurrent calls opened 1,000
   * connections). Ten in flight still send far more per hour than GitHub's hourly limits allow.
   */
  maxInFlight: number;
}

export const DEFAULT_THROTTLE: ThrottleSettings = {
  writeSpacingMs: 1000,
  searchSpacingMs: 2000,
  notificationSpacingMs: 3000,
  maxRateLimitWaitSeconds: 3,
  retries: 2,
  retryBaseMs: 1000,
  requestTimeoutMs: 30_000,
  maxInFlight: 10,
};

export interface GithubConfig {
  /** The REST API base URL without a trailing slash (https://api.github.com, https://HOST/api/v3, ...). */
  apiUrl: string;
  /** The operator's token (GITHUB_PERSONAL_ACCESS_TOKEN or GITHUB_TOKEN); registered as a process secret. */
  token: string | undefined;
  /**
   * --token-for OWNER=ENV_VAR (and GITHUB_TOKEN_FOR): the operator's token for each owner
   * (lower-cased), used for every request that addresses a repository or organization of that
   * owner; `token` for everything else. Registered as process secrets. Sessions that bring their
   * own bearer token over HTTP never use them.
   */
  ownerTokens?: Readonly<Record<string, string>>;
  /** --repos: when set, every call outside these repositories is refused. */
  repos: readonly RepoPattern[] | undefined;
  /** --lockdown: on public repositories, only content from users with push access reaches the model. */
  lockdown: boolean;
  limits: GithubLimits;
  throttle: ThrottleSettings;
  /** Sent as User-Agent (GitHub requires one). */
  userAgent: string;
  /**
   * OAuth mode (--auth-issuer): each principal's own GitHub authorization, obtained by the server as
   * GitHub's OAuth client; no GitHub token is taken from MCP requests then (github-oauth.ts).
   */
  authorizations?: GithubAuthorizations;
}

/** Bots whose content lockdown mode passes: they act for people who configured them. */
export const TRUSTED_BOTS: readonly string[] = ['github-actions[bot]', 'dependabot[bot]', 'copilot'];
