import { startFakeUpstream, type FakeRequest, type FakeResponse, type FakeUpstream } from '@suite/test-kit';
import { actionRoutes, LOG_STORAGE, storedLog } from './actions.js';
import { checkRoutes } from './checks.js';
import { codeSearchRoutes } from './code-search.js';
import { contentRoutes } from './contents.js';
import { gitRoutes } from './git.js';
import { graphqlHandler } from './graphql.js';
import { type Handler, HttpFailure, type RouteContext, type Router, errorBody, json } from './http.js';
import { issueRoutes } from './issues.js';
import { notificationRoutes } from './notifications.js';
import { FakeGithubOAuth } from './oauth.js';
import { pullRoutes } from './pulls.js';
import { releaseRoutes } from './releases.js';
import { repoRoutes } from './repos.js';
import { GithubState } from './state.js';
import { securityRoutes } from './security.js';
import { subIssueRoutes } from './sub-issues.js';
import { userRoutes } from './users.js';
import { workflowRoutes } from './workflows.js';

export { GithubState } from './state.js';
export type * from './state.js';
export type { FakeGithubOAuth, FakeOAuthApp } from './oauth.js';

/** Where html_url links point: GitHub's web pages live on another host than its API. */
const WEB = 'https://github.example';

export interface FakeGithubOptions {
  /** `/api/v3` to answer as GitHub Enterprise Server does. */
  basePath?: string;
}

export interface FakeGithub {
  /** The server's origin (http://127.0.0.1:PORT). */
  url: string;
  /** The REST API base URL to give the server under test (origin plus the base path). */
  apiUrl: string;
  state: GithubState;
  upstream: FakeUpstream;
  /** Every API request received, in order. */
  readonly requests: FakeRequest[];
  /** Log storage, on its own 127.0.0.1 port (another origin), where job logs redirect. */
  storage: FakeUpstream;
  /** GitHub's web sign-in for OAuth apps (/login/oauth/authorize, /login/oauth/access_token). */
  oauth: FakeGithubOAuth;
  /** The token each API request carried, in order (undefined for none). */
  tokensSeen(filter?: (request: FakeRequest) => boolean): (string | undefined)[];
  /**
   * Until reset, this token's (or every) API request is refused as over GitHub's primary rate
   * limit, resetting in `resetInSeconds`. Returns the x-ratelimit-reset it answers with (epoch
   * seconds), so a test can derive the wait a message should name from its own clock readings.
   */
  exhaustRateLimit(options: { token?: string; resetInSeconds: number }): number;
  restoreRateLimit(): void;
  close(): Promise<void>;
}

const LIMIT = { core: 5000, search: 30, graphql: 5000, anonymous: 60 };

export function tokenOf(request: FakeRequest): string | undefined {
  return /^(?:token|bearer)\s+(\S+)$/i.exec(String(request.headers.authorization ?? ''))?.[1];
}

/**
 * A GitHub REST API on 127.0.0.1: real HTTP, GitHub's shapes, status codes, error bodies, Link
 * pagination and x-ratelimit headers, with state that writes change. Organised by resource (one
 * module each); this module authenticates, counts rate limits and turns failures into GitHub's
 * error bodies.
 */
export async function startFakeGithub(options: FakeGithubOptions = {}): Promise<FakeGithub> {
  const upstream = await startFakeUpstream();
  const storage = await startFakeUpstream();
  const basePath = (options.basePath ?? '').replace(/\/+$/, '');
  const state = new GithubState();
  const used = new Map<string, number>();
  const exhausted = new Map<string, number>();
  const resetAt = Math.floor(Date.now() / 1000) + 3600;

  const rateHeaders = (key: string, resource: 'core' | 'search' | 'graphql', anonymous: boolean, spent: number, reset = resetAt): Record<string, string> => {
    const limit = anonymous ? LIMIT.anonymous : LIMIT[resource];
    return {
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remaining': String(Math.max(0, limit - spent)),
      'x-ratelimit-reset': String(reset),
      'x-ratelimit-used': String(spent),
      'x-ratelimit-resource': resource,
      'x-github-request-id': `FAKE:${key.length}:${spent}`,
      'x-github-media-type': 'github.v3; format=json',
    };
  };

  const wrap =
    (handler: Handler): ((req: FakeRequest) => Promise<FakeResponse>) =>
    async (req) => {
      const token = tokenOf(req);
      const info = token ? state.tokens.get(token) : undefined;
      const resource = req.path.startsWith(`${basePath}/search/`) ? 'search' : req.path.endsWith('/graphql') ? 'graphql' : 'core';
      const key = `${token ?? 'anonymous'}:${resource}`;
      if (token && !info) return json(errorBody(401, 'Bad credentials'), 401, rateHeaders(key, resource, true, 0));
      const viewer = info ? state.user(info.login) : undefined;
      const resetIn = exhausted.get(token ?? '*') ?? exhausted.get('*');
      if (resetIn !== undefined) {
        const who = viewer ? `user ID ${viewer.id}` : '127.0.0.1';
        return json(errorBody(403, `API rate limit exceeded for ${who}.`), 403, rateHeaders(key, resource, !viewer, viewer ? LIMIT[resource] : LIMIT.anonymous, resetIn));
      }
      const spent = (used.get(key) ?? 0) + 1;
      used.set(key, spent);
      const ctx: RouteContext = {
        req,
        state,
        viewer,
        token: info,
        api: (path) => `${upstream.url}${basePath}${path}`,
        web: (path) => `${WEB}${path}`,
        origin: upstream.url,
        storage: storage.url,
      };
      let response: FakeResponse;
      try {
        response = await handler(ctx);
      } catch (error) {
        if (!(error instanceof HttpFailure)) throw error;
        response = json(errorBody(error.status, error.message, error.extra.errors), error.status, error.extra.headers ?? {});
      }
      const scopes: Record<string, string> = info?.scopes ? { 'x-oauth-scopes': info.scopes.join(', ') } : {};
      return { ...response, headers: { ...rateHeaders(key, resource, !viewer, spent), ...scopes, ...response.headers } };
    };

  // Registered first so that it loses to every real route: GitHub's 404 body for unknown paths.
  upstream.route('*', '/*rest', () => json(errorBody(404, 'Not Found'), 404));
  const router: Router = {
    get: (pattern, handler) => upstream.route('GET', `${basePath}${pattern}`, wrap(handler)),
    post: (pattern, handler) => upstream.route('POST', `${basePath}${pattern}`, wrap(handler)),
    put: (pattern, handler) => upstream.route('PUT', `${basePath}${pattern}`, wrap(handler)),
    patch: (pattern, handler) => upstream.route('PATCH', `${basePath}${pattern}`, wrap(handler)),
    delete: (pattern, handler) => upstream.route('DELETE', `${basePath}${pattern}`, wrap(handler)),
  };
  // GitHub's other name for a repository, by id: where it redirects requests for a renamed or transferred one.
  const byId = (params: Record<string, string>): string | undefined => {
    const repo = [...state.repos.values()].find((r) => String(r.id) === params.id);
    return repo ? `${basePath}/repos/${repo.owner}/${repo.name}${params.rest ? `/${params.rest}` : ''}` : undefined;
  };
  upstream.rewrite(`${basePath}/repositories/:id`, byId);
  upstream.rewrite(`${basePath}/repositories/:id/*rest`, byId);
  for (const register of [userRoutes, repoRoutes, contentRoutes, gitRoutes, issueRoutes, subIssueRoutes, pullRoutes, checkRoutes, releaseRoutes, actionRoutes, workflowRoutes, securityRoutes, notificationRoutes, codeSearchRoutes]) {
    register(router);
  }
  // GraphQL: /graphql on github.com, /api/graphql beside GitHub Enterprise Server's /api/v3.
  upstream.route('POST', `${basePath.replace(/\/v3$/, '')}/graphql`, wrap(graphqlHandler));
  const oauth = new FakeGithubOAuth(state);
  oauth.routes(upstream);
  storage.route('GET', `${LOG_STORAGE}/:owner/:repo/:job`, async (req) =>
    storedLog({ req, state, viewer: undefined, token: undefined, api: (p) => p, web: (p) => p, origin: storage.url, storage: storage.url }),
  );

  return {
    url: upstream.url,
    apiUrl: `${upstream.url}${basePath}`,
    state,
    upstream,
    requests: upstream.requests,
    storage,
    oauth,
    tokensSeen: (filter = () => true) => upstream.requests.filter((r) => (r.path.startsWith(`${basePath}/`) || r.path === `${basePath.replace(/\/v3$/, '')}/graphql`) && filter(r)).map(tokenOf),
    exhaustRateLimit: ({ token, resetInSeconds }) => {
      const reset = Math.floor(Date.now() / 1000) + resetInSeconds;
      exhausted.set(token ?? '*', reset);
      return reset;
    },
    restoreRateLimit: () => exhausted.clear(),
    close: async () => {
      await Promise.all([upstream.close(), storage.close()]);
    },
  };
}
