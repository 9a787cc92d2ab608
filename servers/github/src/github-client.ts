import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import Bottleneck from 'bottleneck/light.js';
import type { Logger } from '@suite/shared';
import type { GithubConfig, ThrottleSettings } from './config.js';
import { apiPath, repoOfPath } from './github-errors.js';
import { RepoAllowlist } from './repo-allowlist.js';

/** The Octokit every call uses: REST methods and pagination, plus the throttling and retry plugins. */
export type GithubApi = Octokit;
const GithubOctokit: new (options: ConstructorParameters<typeof Octokit>[0]) => GithubApi = Octokit.plugin(throttling, retry);

/** What Octokit's request hook sees: the endpoint options (route parameters included) and the response. */
type HookOptions = Required<Parameters<GithubApi['request']['endpoint']['parse']>[0]>;
type HookResponse = Awaited<ReturnType<GithubApi['request']>>;
type HookRequest = (options: HookOptions) => HookResponse | Promise<HookResponse>;

/**
 * The tool call a request belongs to. Octokit instances live as long as a session, so the call's
 * cancellation and deadline reach every request (retries and pagination included) through here,
 * and no tool has to remember to pass them.
 */
const callScope = new AsyncLocalStorage<{ signal: AbortSignal }>();

export function runWithSignal<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  return callScope.run({ signal }, fn);
}

/** Requests that never name a repository and are safe with an allowlist (their answers are filtered where they list repositories). */
const NEUTRAL_GETS = [/^\/user$/, /^\/users\/[^/]+$/, /^\/orgs\/[^/]+$/, /^\/user\/orgs$/, /^\/rate_limit$/, /^\/search\/users$/, /^\/notifications$/, /^\/user\/repos$/, /^\/users\/[^/]+\/repos$/, /^\/orgs\/[^/]+\/repos$/];
const SCOPED_SEARCHES = /^\/search\/(code|issues|repositories|commits)$/;

/** Bottleneck groups per process and settings: every session's limiter lives in them, keyed by its token. */
const throttleGroups = new WeakMap<ThrottleSettings, { write: Bottleneck.Group; search: Bottleneck.Group; notifications: Bottleneck.Group }>();

function groupsFor(settings: ThrottleSettings): { write: Bottleneck.Group; search: Bottleneck.Group; notifications: Bottleneck.Group } {
  let groups = throttleGroups.get(settings);
  if (!groups) {
    groups = {
      write: new Bottleneck.Group({ id: 'suite-github-write', maxConcurrent: 1, minTime: settings.writeSpacingMs }),
      search: new Bottleneck.Group({ id: 'suite-github-search', maxConcurrent: 1, minTime: settings.searchSpacingMs }),
      notifications: new Bottleneck.Group({ id: 'suite-github-notifications', maxConcurrent: 1, minTime: settings.notificationSpacingMs }),
    };
    throttleGroups.set(settings, groups);
  }
  return groups;
}

/** A fetch whose cancellations Octokit passes through as they are, so the retry plugin does not retry them. */
const cancellableFetch: typeof fetch = async (input, init) => {
  try {
    return await fetch(input, init);
  } catch (error) {
    if (init?.signal?.aborted) {
      const aborted = new Error('The request was aborted.');
      aborted.name = 'AbortError';
      throw aborted;
    }
    throw error;
  }
};

/**
 * The Octokit instances of one session, by token (a session normally has one). Built on first use
 * and kept for the session, so a call pays no construction and throttling state carries over.
 */
export class GithubClients {
  private readonly byToken = new Map<string, GithubApi>();
  private readonly allowlist: RepoAllowlist | undefined;
  private readonly basePath: string;

  constructor(
    private readonly config: GithubConfig,
    private readonly log: Logger,
  ) {
    this.allowlist = config.repos ? new RepoAllowlist(config.repos) : undefined;
    this.basePath = new URL(config.apiUrl).pathname.replace(/\/+$/, '');
  }

  /** The API for a token (undefined: unauthenticated requests, which GitHub allows at a low rate). */
  forToken(token: string | undefined): GithubApi {
    const key = token ?? '';
    let api = this.byToken.get(key);
    if (!api) {
      api = this.create(token);
      this.byToken.set(key, api);
    }
    return api;
  }

  get size(): number {
    return this.byToken.size;
  }

  private create(token: string | undefined): GithubApi {
    const { throttle } = this.config;
    const log = this.log;
    const groups = groupsFor(throttle);
    const mayWait = (what: string) => (retryAfter: number, options: { method?: string; url?: string }, _octokit: unknown, retryCount: number): boolean => {
      const wait = retryCount === 0 && retryAfter <= throttle.maxRateLimitWaitSeconds;
      log.warning(`GitHub ${what} on ${options.method ?? ''} ${options.url ?? ''}: ${wait ? `retrying in ${retryAfter} s` : `reported to the caller (resets in ${retryAfter} s)`}`);
      return wait;
    };
    const api = new GithubOctokit({
      ...(token ? { auth: token } : {}),
      baseUrl: this.config.apiUrl,
      userAgent: this.config.userAgent,
      request: { fetch: cancellableFetch },
      log: {
        debug: () => undefined,
        info: (message: string) => log.debug(message),
        warn: (message: string) => log.warning(message),
        // Failed requests are reported to the caller; the request line is only a diagnostic.
        error: (message: string) => log.debug(message),
      },
      throttle: {
        // Limiter state is per token: one user's writes never wait for another's.
        id: token ? createHash('sha256').update(token).digest('hex').slice(0, 16) : 'anonymous',
        ...groups,
        onRateLimit: mayWait('rate limit'),
        onSecondaryRateLimit: mayWait('secondary rate limit'),
      },
      retry: {
        retries: throttle.retries,
        retryAfterBaseValue: throttle.retryBaseMs,
        // Only a 5xx or a dropped connection is worth repeating; rate limits belong to the throttling plugin.
        doNotRetry: [400, 401, 403, 404, 405, 409, 410, 422, 429, 451],
      },
    });
    api.hook.wrap('request', (request, options) => this.guard(api, request, options));
    return api;
  }

  /**
   * Every request of every tool, resource and prompt passes here: it gets the call's signal, and
   * with --repos, a request outside the allowlist is refused before it leaves, searches are scoped,
   * and lists of repositories or notifications are filtered.
   */
  private async guard(api: GithubApi, request: HookRequest, options: HookOptions): Promise<HookResponse> {
    const scope = callScope.getStore();
    if (scope) options.request = { ...options.request, signal: scope.signal };
    const allowlist = this.allowlist;
    if (!allowlist) return request(options);

    const parsed = api.request.endpoint.parse(options);
    const path = apiPath(parsed.url, this.basePath);
    const method = parsed.method.toUpperCase();
    if (path === undefined) throw allowlist.refusal('A request to a host other than the GitHub API');
    const repo = repoOfPath(path);
    if (repo) {
      if (!allowlist.allows(repo.owner, repo.repo)) throw allowlist.refusal(`The repository ${repo.owner}/${repo.repo}`);
      if (method === 'POST' && /^\/forks\/?$/.test(repo.rest)) {
        const owner = typeof options.organization === 'string' ? options.organization : await this.viewerLogin(api);
        const name = typeof options.name === 'string' ? options.name : repo.repo;
        if (!allowlist.allows(owner, name)) throw allowlist.refusal(`A fork to ${owner}/${name}`);
      }
      return request(options);
    }
    if (method === 'POST' && (path === '/user/repos' || /^\/orgs\/[^/]+\/repos$/.test(path))) {
      const owner = path === '/user/repos' ? await this.viewerLogin(api) : decodeURIComponent(path.split('/')[2]!);
      const name = typeof options.name === 'string' ? options.name : '';
      if (!allowlist.allows(owner, name)) throw allowlist.refusal(`A new repository ${owner}/${name}`);
      return request(options);
    }
    if (method === 'GET' && SCOPED_SEARCHES.test(path)) {
      const query = new URL(parsed.url).searchParams.get('q') ?? '';
      const scoped = allowlist.scopeQuery(query);
      if (scoped !== query) {
        if (typeof options.q !== 'string') throw allowlist.refusal('An unscoped search');
        options.q = scoped;
      }
      return filterRepositories(await request(options), allowlist);
    }
    if (method === 'GET' && NEUTRAL_GETS.some((p) => p.test(path))) return filterRepositories(await request(options), allowlist);
    throw allowlist.refusal(`The request ${method} ${path}`);
  }

  private readonly viewers = new WeakMap<GithubApi, string>();

  /** The login the token acts as (cached per instance). */
  async viewerLogin(api: GithubApi): Promise<string> {
    let login = this.viewers.get(api);
    if (!login) {
      login = (await api.rest.users.getAuthenticated()).data.login;
      this.viewers.set(api, login);
    }
    return login;
  }
}

/** Drops entries of a list answer (search results, notifications, repository lists) that belong to repositories outside the allowlist. */
function filterRepositories(response: HookResponse, allowlist: RepoAllowlist): HookResponse {
  const repoOf = (item: unknown): string | undefined => {
    if (!item || typeof item !== 'object') return undefined;
    const record = item as { full_name?: unknown; repository?: { full_name?: unknown }; repository_url?: unknown };
    if (typeof record.repository?.full_name === 'string') return record.repository.full_name;
    if (typeof record.repository_url === 'string') return record.repository_url.split('/repos/')[1];
    if (typeof record.full_name === 'string') return record.full_name;
    return undefined;
  };
  const keep = (item: unknown): boolean => {
    const name = repoOf(item);
    return name === undefined ? !(item && typeof item === 'object' && 'repository' in item) : allowlist.allowsFullName(name);
  };
  const data = response.data as unknown;
  if (Array.isArray(data)) return { ...response, data: data.filter(keep) };
  if (data && typeof data === 'object' && Array.isArray((data as { items?: unknown }).items)) {
    const items = (data as { items: unknown[] }).items;
    return { ...response, data: { ...(data as object), items: items.filter(keep) } };
  }
  return response;
}
