import type { FakeRequest, FakeResponse } from '@suite/test-kit';
import type { FakeRepo, FakeToken, FakeUser, GithubState, Permission } from './state.js';

/** What a route handler gets: the request, the state, who is asking, and how to build URLs. */
export interface RouteContext {
  req: FakeRequest;
  state: GithubState;
  /** The authenticated user, if the request carried a valid token. */
  viewer: FakeUser | undefined;
  token: FakeToken | undefined;
  /** Absolute API URL of a path (`/repos/o/r` -> http://127.0.0.1:PORT[/api/v3]/repos/o/r). */
  api(path: string): string;
  /** Absolute web URL (html_url) of a path. */
  web(path: string): string;
  /** The API server's origin (for Link headers). */
  origin: string;
  /** The origin of log storage: another server, as on GitHub, where logs redirect to a blob store. */
  storage: string;
}

export type Handler = (ctx: RouteContext) => FakeResponse | Promise<FakeResponse>;

/** A failure a handler throws; the router answers with GitHub's error body. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: { errors?: unknown[]; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): FakeResponse {
  return { status, json: body, headers };
}

/** GitHub's error body: message, documentation_url, status (and errors for a 422). */
export function errorBody(status: number, message: string, errors?: unknown[]): Record<string, unknown> {
  return { message, ...(errors ? { errors } : {}), documentation_url: 'https://docs.github.com/rest', status: String(status) };
}

export const notFound = (): HttpFailure => new HttpFailure(404, 'Not Found');
export const invalid = (message: string, errors?: unknown[]): HttpFailure => new HttpFailure(422, message, errors ? { errors } : {});

/** page and per_page as GitHub reads them (per_page at most 100). */
export function pageOf(req: FakeRequest): { page: number; perPage: number } {
  const page = Math.max(1, Number(req.query.get('page') ?? '1') || 1);
  const perPage = Math.min(100, Math.max(1, Number(req.query.get('per_page') ?? '30') || 30));
  return { page, perPage };
}

/** One page of `items`, with GitHub's Link header (first, prev, next, last) when there is more than one. */
export function paginated<T>(ctx: RouteContext, items: readonly T[], render: (item: T) => unknown, wrap?: (page: unknown[]) => unknown): FakeResponse {
  const { page, perPage } = pageOf(ctx.req);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const slice = items.slice((page - 1) * perPage, page * perPage).map(render);
  const headers: Record<string, string> = {};
  if (last > 1) {
    const link = (p: number, rel: string): string => {
      const query = new URLSearchParams(ctx.req.query);
      query.set('page', String(p));
      query.set('per_page', String(perPage));
      return `<${ctx.origin}${ctx.req.path}?${query.toString()}>; rel="${rel}"`;
    };
    const rels: string[] = [];
    if (page > 1) rels.push(link(page - 1, 'prev'));
    if (page < last) rels.push(link(page + 1, 'next'), link(last, 'last'));
    if (page > 1) rels.push(link(1, 'first'));
    headers.link = rels.join(', ');
  }
  return json(wrap ? wrap(slice) : slice, 200, headers);
}

const RANK: Record<Permission, number> = { read: 0, triage: 1, write: 2, maintain: 3, admin: 4 };

/**
 * The repository a route names, if the viewer may see it: a private repository the viewer has no
 * access to is a 404, exactly as on GitHub. With `write`, the viewer must have push access and a
 * token that may write; otherwise a 403 naming the fine-grained permission that was missing.
 */
export function repoFor(ctx: RouteContext, access: 'read' | 'write' | 'admin', permission = 'contents'): FakeRepo {
  const repo = ctx.state.repo(ctx.req.params.owner ?? '', ctx.req.params.repo ?? '');
  if (!repo) throw notFound();
  const role = ctx.state.permissionOf(repo, ctx.viewer?.login);
  if (repo.private && role === undefined) throw notFound();
  // A fine-grained token without the permission: GitHub hides a private repository's resources (404) and names the permission on a write (403).
  const granted = ctx.token?.permissions ? (ctx.token.permissions[permission] ?? 'none') : undefined;
  if (access === 'read') {
    if (granted === 'none' && repo.private) throw notFound();
    return repo;
  }
  if (granted !== undefined && granted !== 'write') {
    throw new HttpFailure(403, 'Resource not accessible by personal access token', { headers: { 'x-accepted-github-permissions': `${permission}=write` } });
  }
  if (!ctx.viewer) throw new HttpFailure(401, 'Requires authentication');
  const needed = access === 'admin' ? RANK.admin : RANK.write;
  if (!ctx.token?.canWrite || role === undefined || RANK[role] < needed) {
    throw new HttpFailure(403, 'Resource not accessible by personal access token', { headers: { 'x-accepted-github-permissions': `${permission}=write` } });
  }
  return repo;
}

/** The JSON body as an object (GitHub answers 400 "Problems parsing JSON" otherwise). */
export function body(ctx: RouteContext): Record<string, unknown> {
  const b = ctx.req.body;
  if (b === undefined) return {};
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new HttpFailure(400, 'Problems parsing JSON');
  return b as Record<string, unknown>;
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The `Accept` header asks for a media type such as `diff` or `raw` (application/vnd.github[.v3].diff). */
export function wantsMedia(ctx: RouteContext, format: string): boolean {
  const accept = String(ctx.req.headers.accept ?? '');
  return new RegExp(`application/vnd\\.github(?:\\.v3)?\\.${format}\\b`).test(accept);
}

/** Where resource modules register their routes (paths below the API base). */
export interface Router {
  get(pattern: string, handler: Handler): void;
  post(pattern: string, handler: Handler): void;
  put(pattern: string, handler: Handler): void;
  patch(pattern: string, handler: Handler): void;
  delete(pattern: string, handler: Handler): void;
}
