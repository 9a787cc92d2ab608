import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Octokit } from '@octokit/rest';
import { retry } from '@octokit/plugin-retry';
import { throttling } from '@octokit/plugin-throttling';
import Bottleneck from 'bottleneck/light.js';
import { ConcurrencyLimit, type Logger } from '@suite/shared';
import type { GithubConfig, ThrottleSettings } from './config.js';
import { apiPath, isGithubHttpError, repoOfPath } from './github-errors.js';
import { RepoAllowlist } from './repo-allowlist.js';

/** The Octokit handlers call: REST methods and pagination (its requests are sent as GithubClients.send decides). */
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

/**
 * Most requests of one token and session waiting on GitHub at once; the others queue in order.
 * GitHub allows 100 concurrent requests per user before its secondary rate limit, and a burst of
 * calls then shares a few kept-alive connections instead of opening one each (1,000 concurrent
 * calls opened 1,000 connections).
 */
export const MAX_CONCURRENT_REQUESTS = 10;

/**
 * fetch through `turns`, with cancellations passed to Octokit as they are (also while a request
 * waits for its turn), so the retry plugin does not retry them.
 */
function limitedFetch(turns: ConcurrencyLimit): typeof fetch {
  return async (input, init) => {
    try {
      return await turns.run(() => fetch(input, init), init?.signal ?? undefined);
    } catch (error) {
      if (init?.signal?.aborted) {
        const aborted = new Error('The request was aborted.');
        aborted.name = 'AbortError';
        throw aborted;
      }
      throw error;
    }
  };
}

/** Whether the throttling and retry plugins have something to do with this failure: a 5xx, a dropped connection or a rate limit. */
function pluginsHandle(error: unknown): 'retry' | 'rate-limit' | undefined {
  if (!isGithubHttpError(error)) return undefined;
  if (error.status >= 500) return 'retry';
  if (error.status === 429) return 'rate-limit';
  if (error.status === 403) {
    const headers = error.response?.headers ?? {};
    if (headers['x-ratelimit-remaining'] === '0' || headers['retry-after'] !== undefined || /secondary rate limit/i.test(error.message)) return 'rate-limit';
  }
  return undefined;
}

/** The options of one instance's request hook as another instance's request: without the first instance's hook. */
function forwardable(options: HookOptions, extra: Record<string, unknown> = {}): HookOptions {
  const { hook: _hook, ...request } = options.request as Record<string, unknown>;
  return { ...options, request: { ...request, ...extra } } as HookOptions;
}

/** The two Octokit instances behind one token. */
interface TokenClients {
  /** What handlers use: plain reads go straight to GitHub from here. */
  api: GithubApi;
  /** With the throttling and retry plugins: writes, searches, and whatever failed in a way they handle. */
  careful: GithubApi;
}

/**
 * The Octokit instances of one session, by token (a session normally has one). Built on first use
 * and kept for the session, so a call pays no construction and throttling state carries over.
 *
 * Why two per token: the plugins run every request through Bottleneck limiters, whose local store
 * yields to the event loop with setTimeout(0) several times per request, about 4 ms per limiter and
 * 13 ms per request in all. A plain read needs none of it when it succeeds, so it goes straight to
 * GitHub; writes and searches (which the plugin spaces out), and any read that met a 5xx, a dropped
 * connection or a rate limit, go through the instance with the plugins, which retries or waits
 * with the same budget and answers with the same errors as if it had handled the request from the
 * start.
 */
export class GithubClients {
  private readonly byToken = new Map<string, TokenClients>();
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
    let clients = this.byToken.get(key);
    if (!clients) {
      clients = this.create(token);
      this.byToken.set(key, clients);
    }
    return clients.api;
  }

  private create(token: string | undefined): TokenClients {
    const { throttle } = this.config;
    const log = this.log;
    const groups = groupsFor(throttle);
    // Shared by both instances: a read retried through the plugins still counts against the token.
    const turns = new ConcurrencyLimit(MAX_CONCURRENT_REQUESTS);
    const mayWait = (what: string) => (retryAfter: number, options: { method?: string; url?: string }, _octokit: unknown, retryCount: number): boolean => {
      const wait = retryCount === 0 && retryAfter <= throttle.maxRateLimitWaitSeconds;
      log.warning(`GitHub ${what} on ${options.method ?? ''} ${options.url ?? ''}: ${wait ? `retrying in ${retryAfter} s` : `reported to the caller (resets in ${retryAfter} s)`}`);
      return wait;
    };
    const common = {
      ...(token ? { auth: token } : {}),
      baseUrl: this.config.apiUrl,
      userAgent: this.config.userAgent,
      request: { fetch: limitedFetch(turns) },
      log: {
        debug: () => undefined,
        info: (message: string) => log.debug(message),
        warn: (message: string) => log.warning(message),
        // Failed requests are reported to the caller; the request line is only a diagnostic.
        error: (message: string) => log.debug(message),
      },
    };
    const careful = new GithubOctokit({
      ...common,
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
    const api = new Octokit(common);
    api.hook.wrap('request', (request, options) => this.guard(api, careful, request, options));
    return { api, careful };
  }

  /**
   * Every request of every tool, resource and prompt passes here: it gets the call's signal, and
   * with --repos, a request outside the allowlist is refused before it leaves, searches are scoped,
   * and lists of repositories or notifications are filtered. Then it is sent (see `send`).
   */
  private async guard(api: GithubApi, careful: GithubApi, request: HookRequest, options: HookOptions): Promise<HookResponse> {
    const scope = callScope.getStore();
    if (scope) options.request = { ...options.request, signal: scope.signal };
    const parsed = api.request.endpoint.parse(options);
    const path = apiPath(parsed.url, this.basePath);
    const method = parsed.method.toUpperCase();
    const send = (): Promise<HookResponse> => this.send(careful, request, options, method, path);
    const allowlist = this.allowlist;
    if (!allowlist) return send();

    if (path === undefined) throw allowlist.refusal('A request to a host other than the GitHub API');
    const repo = repoOfPath(path);
    if (repo) {
      if (!allowlist.allows(repo.owner, repo.repo)) throw allowlist.refusal(`The repository ${repo.owner}/${repo.repo}`);
      if (method === 'POST' && /^\/forks\/?$/.test(repo.rest)) {
        const owner = typeof options.organization === 'string' ? options.organization : await this.viewerLogin(api);
        const name = typeof options.name === 'string' ? options.name : repo.repo;
        if (!allowlist.allows(owner, name)) throw allowlist.refusal(`A fork to ${owner}/${name}`);
      }
      return send();
    }
    if (method === 'POST' && (path === '/user/repos' || /^\/orgs\/[^/]+\/repos$/.test(path))) {
      const owner = path === '/user/repos' ? await this.viewerLogin(api) : decodeURIComponent(path.split('/')[2]!);
      const name = typeof options.name === 'string' ? options.name : '';
      if (!allowlist.allows(owner, name)) throw allowlist.refusal(`A new repository ${owner}/${name}`);
      return send();
    }
    if (method === 'GET' && SCOPED_SEARCHES.test(path)) {
      const query = new URL(parsed.url).searchParams.get('q') ?? '';
      const scoped = allowlist.scopeQuery(query);
      if (scoped !== query) {
        if (typeof options.q !== 'string') throw allowlist.refusal('An unscoped search');
        options.q = scoped;
      }
      return filterRepositories(await send(), allowlist);
    }
    if (method === 'GET' && NEUTRAL_GETS.some((p) => p.test(path))) return filterRepositories(await send(), allowlist);
    throw allowlist.refusal(`The request ${method} ${path}`);
  }

  /** Plain reads straight to GitHub, the rest (and reads that failed in a way the plugins handle) through the plugins. */
  private async send(careful: GithubApi, request: HookRequest, options: HookOptions, method: string, path: string | undefined): Promise<HookResponse> {
    const plainRead = (method === 'GET' || method === 'HEAD') && !path?.startsWith('/search/');
    if (!plainRead) return careful.request(forwardable(options));
    try {
      return await request(options);
    } catch (error) {
      const handled = pluginsHandle(error);
      if (handled === undefined || (handled === 'retry' && this.config.throttle.retries === 0)) throw error;
      // The failed attempt counts as the first of the retry budget.
      return careful.request(forwardable(options, handled === 'retry' ? { retries: this.config.throttle.retries - 1 } : {}));
    }
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
