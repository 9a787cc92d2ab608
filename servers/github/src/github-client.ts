import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Octokit } from '@octokit/rest';
import { ToolError, sharedLimits, type Logger } from '@suite/shared';
import type { GithubConfig } from './config.js';
import { apiPath, repoOfPath } from './github-errors.js';
import { sendRequest, type GithubResponse, type SendSettings } from './github-request.js';
import { graphqlTargetOf, type GraphqlTarget } from './graphql-target.js';
import { RepoAllowlist } from './repo-allowlist.js';
import { TokenRedactor } from './token-redaction.js';

/** The Octokit handlers call: REST methods and pagination (its requests are sent by github-request.ts). */
export type GithubApi = Octokit;

/** What Octokit's request hook sees: the endpoint options (route parameters included) and the response. */
type HookOptions = Required<Parameters<GithubApi['request']['endpoint']['parse']>[0]>;
type HookResponse = Awaited<ReturnType<GithubApi['request']>>;

/**
 * The tool call a request belongs to. Octokit instances live as long as a session, so the call's
 * cancellation and deadline reach every request (retries and pagination included) through here,
 * and no tool has to remember to pass them.
 */
const callScope = new AsyncLocalStorage<{ signal: AbortSignal; notes: string[] | undefined }>();

/** Runs a call's handler with its signal; what the request layer has to tell the caller (a redirect followed) goes to `notes`. */
export function runWithSignal<T>(signal: AbortSignal, fn: () => Promise<T>, notes?: string[]): Promise<T> {
  return callScope.run({ signal, notes }, fn);
}

/** Requests that never name a repository and are safe with an allowlist (their answers are filtered where they list repositories). */
const NEUTRAL_GETS = [/^\/user$/, /^\/users\/[^/]+$/, /^\/orgs\/[^/]+$/, /^\/user\/orgs$/, /^\/rate_limit$/, /^\/search\/users$/, /^\/notifications$/, /^\/user\/repos$/, /^\/users\/[^/]+\/repos$/, /^\/orgs\/[^/]+\/repos$/];
const SCOPED_SEARCHES = /^\/search\/(code|issues|repositories|commits)$/;

/**
 * The Octokit instance of each token a session uses (a session normally has one). Built on first
 * use and kept for the session, so a call pays no construction. Octokit only builds requests
 * (routes, parameters, pagination); its request hook hands every one to `guard` and then to
 * github-request.ts, which sends it.
 */
export class GithubClients {
  private readonly byToken = new Map<string, GithubApi>();
  private readonly allowlist: RepoAllowlist | undefined;
  private readonly basePath: string;
  private readonly apiOrigin: string;
  /** Made with the first session (at start-up), so that a shared store is connected before the first request. */
  private readonly limits = sharedLimits();

  constructor(
    private readonly config: GithubConfig,
    private readonly log: Logger,
  ) {
    this.allowlist = config.repos ? new RepoAllowlist(config.repos) : undefined;
    const url = new URL(config.apiUrl);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.apiOrigin = url.origin;
  }

  /**
   * The API for a token (undefined: unauthenticated requests, which GitHub allows at a low rate).
   * With `ownerTokens`, each request that addresses one of those owners carries that owner's token
   * instead (github-request.ts keeps limits and lanes per token, so each is throttled as its own).
   */
  forToken(token: string | undefined, ownerTokens?: Readonly<Record<string, string>>): GithubApi {
    const owners = ownerTokens && Object.keys(ownerTokens).length > 0 ? ownerTokens : undefined;
    const key = `${owners ? 'owners:' : ''}${token ?? ''}`;
    let api = this.byToken.get(key);
    if (!api) {
      api = this.create(token, owners);
      this.byToken.set(key, api);
    }
    return api;
  }

  private readonly settingsByToken = new Map<string, SendSettings>();

  /** How requests with `token` are sent: one set per token, shared by every API that uses it. */
  private settingsFor(token: string | undefined): SendSettings {
    const key = token ?? '';
    let settings = this.settingsByToken.get(key);
    if (!settings) {
      settings = {
        token,
        // Limits and spacing are GitHub's per token, shared by every session of the process that uses it.
        tokenKey: `${this.config.apiUrl} ${token ? createHash('sha256').update(token).digest('hex').slice(0, 32) : 'anonymous'}`,
        apiOrigin: this.apiOrigin,
        basePath: this.basePath,
        throttle: this.config.throttle,
        limits: this.limits,
        maxInFlight: this.config.throttle.maxInFlight,
        maxAnswerBytes: this.config.limits.maxAnswerBytes,
        log: this.log,
        // What GitHub echoes of any token the process holds (the one that went, the operator's,
        // each owner's of --token-for) is removed on arrival.
        redactor: new TokenRedactor([token, this.config.token, ...Object.values(this.config.ownerTokens ?? {})]),
        refuseHop: (url, from, status) => this.refuseHop(url, from, status),
      };
      this.settingsByToken.set(key, settings);
    }
    return settings;
  }

  private create(token: string | undefined, ownerTokens: Readonly<Record<string, string>> | undefined): GithubApi {
    const log = this.log;
    // The token is added by github-request.ts, not by Octokit: it decides which hops may carry it.
    const api = new Octokit({
      baseUrl: this.config.apiUrl,
      userAgent: this.config.userAgent,
      log: { debug: () => undefined, info: (message: string) => log.debug(message), warn: (message: string) => log.warning(message), error: (message: string) => log.debug(message) },
    });
    const fallback = this.settingsFor(token);
    const choose = (url: string, graphqlOwner?: string): SendSettings => {
      if (!ownerTokens) return fallback;
      const owner = graphqlOwner ?? ownerOfPath(apiPath(url, this.basePath));
      const ownerToken = owner !== undefined ? ownerTokens[owner.toLowerCase()] : undefined;
      return ownerToken !== undefined ? this.settingsFor(ownerToken) : fallback;
    };
    api.hook.wrap('request', (_request, options) => this.guard(api, choose, options as HookOptions) as Promise<HookResponse>);
    return api;
  }

  /**
   * Every request of every tool, resource and prompt passes here: it gets the call's signal, and
   * with --repos, a request outside the allowlist is refused before it leaves, searches are scoped,
   * and lists of repositories or notifications are filtered. Then it is sent (github-request.ts).
   */
  private async guard(api: GithubApi, choose: (url: string, graphqlOwner?: string) => SendSettings, options: HookOptions): Promise<GithubResponse> {
    const scope = callScope.getStore();
    const signal = scope?.signal;
    const notes = scope?.notes;
    const note = (text: string): void => {
      if (notes && !notes.includes(text)) notes.push(text);
    };
    const parsed = api.request.endpoint.parse(options);
    const graphql = this.isGraphqlUrl(parsed.url) ? graphqlPlan(options) : undefined;
    const send = (): Promise<GithubResponse> => {
      const planned = api.request.endpoint.parse(options);
      const request = (options.request ?? {}) as { parseSuccessResponseBody?: boolean };
      return sendRequest(
        {
          method: planned.method.toUpperCase(),
          url: planned.url,
          headers: planned.headers as Record<string, string | number | undefined>,
          body: planned.body,
          parseBody: request.parseSuccessResponseBody !== false,
          signal,
          note,
          ...(graphql ? { read: graphql.read, graphql: true } : {}),
        },
        choose(planned.url, graphql?.target.owner),
      );
    };
    const allowlist = this.allowlist;
    if (graphql) {
      if (allowlist && !allowlist.allows(graphql.target.owner, graphql.target.repo)) throw allowlist.refusal(`The repository ${graphql.target.owner}/${graphql.target.repo}`);
      return send();
    }
    if (!allowlist) return send();
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

  /**
   * With --repos, a redirect GitHub answers a read with is followed only to what the allowlist
   * allows as a first request. A hop to another origin is a download (job logs, archives): the
   * token is not sent there, so it reaches nothing the token could.
   */
  private refuseHop(url: URL, from: URL, status: number): ToolError | undefined {
    const allowlist = this.allowlist;
    if (!allowlist || url.origin !== this.apiOrigin) return undefined;
    const path = apiPath(url.href, this.basePath);
    const describe = (target: URL): string => {
      const targetPath = apiPath(target.href, this.basePath);
      const repo = targetPath ? repoOfPath(targetPath) : undefined;
      return repo ? `${repo.owner}/${repo.repo} (${targetPath})` : (targetPath ?? target.pathname);
    };
    const refuse = (why: string): ToolError =>
      ToolError.accessDenied(
        `GitHub redirected the request for ${describe(from)} (${status}) to ${describe(url)}, ${why} (--repos ${allowlist.describe()}), so it was not followed. If the repository was renamed or transferred, ask the operator to allow its new name.`,
      );
    if (path === undefined) return refuse('which is outside the API and this server\'s repository allowlist');
    if (/^\/repositories\/\d+(?:\/|$)/.test(path)) return refuse("a repository named only by its numeric id, which this server's repository allowlist cannot check");
    const repo = repoOfPath(path);
    if (repo) return allowlist.allows(repo.owner, repo.repo) ? undefined : refuse("which is outside this server's repository allowlist");
    if (SCOPED_SEARCHES.test(path)) {
      const query = url.searchParams.get('q') ?? '';
      try {
        if (allowlist.scopeQuery(query) === query) return undefined;
      } catch {
        // Refused below.
      }
      return refuse("a search outside this server's repository allowlist");
    }
    if (NEUTRAL_GETS.some((p) => p.test(path))) return undefined;
    return refuse("which is outside this server's repository allowlist");
  }

  /** GitHub's GraphQL endpoint: /graphql below the API base, or /api/graphql beside GitHub Enterprise Server's /api/v3. */
  private isGraphqlUrl(url: string): boolean {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return false;
    }
    if (parsed.origin !== this.apiOrigin) return false;
    return parsed.pathname === `${this.basePath}/graphql` || parsed.pathname === `${this.basePath.replace(/\/v3$/, '')}/graphql`;
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

/**
 * The owner a request addresses, whose token it carries with --token-for: the owner of
 * `/repos/OWNER/...`, the organization of `/orgs/ORG/...`, the user of `/users/USER/...`.
 * Anything else (the viewer's own `/user`, searches, notifications) has no owner.
 */
export function ownerOfPath(path: string | undefined): string | undefined {
  if (path === undefined) return undefined;
  const repo = repoOfPath(path);
  if (repo) return repo.owner;
  const named = /^\/(?:orgs|users)\/([^/]+)(?:\/|$)/.exec(path);
  if (!named) return undefined;
  try {
    return decodeURIComponent(named[1]!);
  } catch {
    return named[1];
  }
}

/**
 * A GraphQL request as the hook sends it: the repository it addresses (which the allowlist checks
 * and whose owner's token it carries) and whether it only reads. A request that names none, or
 * whose `owner`/`name` variables name another repository than it declares, is not sent: the
 * allowlist and the token choice would otherwise check one repository and reach another.
 */
function graphqlPlan(options: HookOptions): { target: GraphqlTarget; read: boolean } {
  const target = graphqlTargetOf(options);
  const refuse = (why: string): ToolError => new ToolError(`A GraphQL request ${why}, so it was not sent.`);
  if (!target) throw refuse('names no repository');
  const variables = ((options as { variables?: unknown }).variables ?? {}) as Record<string, unknown>;
  const same = (a: unknown, b: string): boolean => typeof a === 'string' && a.toLowerCase() === b.toLowerCase();
  if ((variables.owner !== undefined && !same(variables.owner, target.owner)) || (variables.name !== undefined && !same(variables.name, target.repo))) {
    throw refuse(`names another repository in its variables than ${target.owner}/${target.repo}`);
  }
  const query = (options as { query?: unknown }).query;
  return { target, read: typeof query === 'string' && /^\s*query\b/.test(query) };
}

/** Drops entries of a list answer (search results, notifications, repository lists) that belong to repositories outside the allowlist. */
function filterRepositories(response: GithubResponse, allowlist: RepoAllowlist): GithubResponse {
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
    const kept = items.filter(keep);
    if (kept.length === items.length) return response;
    // GitHub's total counted what was dropped: shown as it is, it would tell how much lies outside the allowlist.
    return { ...response, data: { ...(data as object), items: kept, total_count: kept.length } };
  }
  return response;
}
