import { type Handler, HttpFailure, type RouteContext, type Router, notFound, paginated, json } from './http.js';
import type { Organization, PrivateUser, PublicUser, SimpleUser, UserSearchItem } from './shapes.js';
import type { FakeUser } from './state.js';
import { matchesWords, parseQuery } from './search-query.js';

function userUrls(ctx: RouteContext, login: string) {
  const base = ctx.api(`/users/${login}`);
  return {
    url: base,
    html_url: ctx.web(`/${login}`),
    followers_url: `${base}/followers`,
    following_url: `${base}/following{/other_user}`,
    gists_url: `${base}/gists{/gist_id}`,
    starred_url: `${base}/starred{/owner}{/repo}`,
    subscriptions_url: `${base}/subscriptions`,
    organizations_url: `${base}/orgs`,
    repos_url: `${base}/repos`,
    events_url: `${base}/events{/privacy}`,
    received_events_url: `${base}/received_events`,
  };
}

export function simpleUser(ctx: RouteContext, login: string): SimpleUser {
  const user = ctx.state.user(login);
  return {
    login: user?.login ?? login,
    id: user?.id ?? 0,
    node_id: `U_${user?.id ?? 0}`,
    avatar_url: `https://avatars.example/u/${user?.id ?? 0}`,
    gravatar_id: '',
    type: user?.type ?? 'User',
    site_admin: false,
    user_view_type: 'public',
    ...userUrls(ctx, user?.login ?? login),
  };
}

/** A user field that may be a deleted account: GitHub answers null then. */
export function maybeUser(ctx: RouteContext, login: string | null): SimpleUser | null {
  return login === null ? null : simpleUser(ctx, login);
}

function publicUser(ctx: RouteContext, user: FakeUser): PublicUser {
  const repos = [...ctx.state.repos.values()].filter((r) => r.owner === user.login);
  return {
    ...simpleUser(ctx, user.login),
    name: user.name,
    company: user.company,
    blog: null,
    location: user.location,
    email: user.email,
    hireable: null,
    bio: user.bio,
    twitter_username: null,
    public_repos: repos.filter((r) => !r.private).length,
    public_gists: 0,
    followers: 0,
    following: 0,
    created_at: user.createdAt,
    updated_at: user.createdAt,
  };
}

function privateUser(ctx: RouteContext, user: FakeUser): PrivateUser {
  const repos = [...ctx.state.repos.values()].filter((r) => r.owner === user.login);
  return {
    ...publicUser(ctx, user),
    private_gists: 0,
    total_private_repos: repos.filter((r) => r.private).length,
    owned_private_repos: repos.filter((r) => r.private).length,
    disk_usage: 0,
    collaborators: 0,
    two_factor_authentication: true,
    plan: { name: 'pro', space: 976562499, private_repos: 9999, collaborators: 0 },
  };
}

export function requireViewer(ctx: RouteContext): FakeUser {
  if (!ctx.viewer) throw new HttpFailure(401, 'Requires authentication');
  return ctx.viewer;
}

const getAuthenticated: Handler = (ctx) => json(privateUser(ctx, requireViewer(ctx)));

const getUser: Handler = (ctx) => {
  const user = ctx.state.user(ctx.req.params.username ?? '');
  if (!user) throw notFound();
  return json(publicUser(ctx, user));
};

/** The organizations the viewer belongs to: every Organization that made the viewer a collaborator somewhere. */
const listOrgs: Handler = (ctx) => {
  const viewer = requireViewer(ctx);
  const orgs = [...ctx.state.users.values()].filter(
    (u) => u.type === 'Organization' && [...ctx.state.repos.values()].some((r) => r.owner === u.login && r.collaborators.has(viewer.login.toLowerCase())),
  );
  return paginated(ctx, orgs, (o): Organization => {
    const base = ctx.api(`/orgs/${o.login}`);
    return {
      login: o.login,
      id: o.id,
      node_id: `O_${o.id}`,
      url: base,
      repos_url: `${base}/repos`,
      events_url: `${base}/events`,
      hooks_url: `${base}/hooks`,
      issues_url: `${base}/issues`,
      members_url: `${base}/members{/member}`,
      public_members_url: `${base}/public_members{/member}`,
      avatar_url: `https://avatars.example/u/${o.id}`,
      description: null,
    };
  });
};

const searchUsers: Handler = (ctx) => {
  const query = parseQuery(ctx.req.query.get('q') ?? '');
  const found = [...ctx.state.users.values()].filter((u) => matchesWords(query.words, [u.login, u.name ?? '']));
  return paginated(
    ctx,
    found,
    (u): UserSearchItem => ({ ...simpleUser(ctx, u.login), score: 1 }),
    (items) => ({ total_count: found.length, incomplete_results: false, items }),
  );
};

export function userRoutes(router: Router): void {
  router.get('/user', getAuthenticated);
  router.get('/users/:username', getUser);
  router.get('/user/orgs', listOrgs);
  router.get('/search/users', searchUsers);
}
