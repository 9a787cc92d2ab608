import { type Handler, HttpFailure, type RouteContext, type Router, body, invalid, json, notFound, paginated, repoFor, str } from './http.js';
import type { CollaboratorPermission, FullRepository, MinimalRepository, RepoSearchItem } from './shapes.js';
import type { FakeRepo } from './state.js';
import { inScope, matchesWords, parseQuery } from './search-query.js';
import { requireViewer, simpleUser } from './users.js';

/** Every `*_url` of a repository, from its API URL. */
function repoUrls(ctx: RouteContext, repo: FakeRepo) {
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  return {
    url: base,
    html_url: ctx.web(`/${repo.owner}/${repo.name}`),
    archive_url: `${base}/{archive_format}{/ref}`,
    assignees_url: `${base}/assignees{/user}`,
    blobs_url: `${base}/git/blobs{/sha}`,
    branches_url: `${base}/branches{/branch}`,
    collaborators_url: `${base}/collaborators{/collaborator}`,
    comments_url: `${base}/comments{/number}`,
    commits_url: `${base}/commits{/sha}`,
    compare_url: `${base}/compare/{base}...{head}`,
    contents_url: `${base}/contents/{+path}`,
    contributors_url: `${base}/contributors`,
    deployments_url: `${base}/deployments`,
    downloads_url: `${base}/downloads`,
    events_url: `${base}/events`,
    forks_url: `${base}/forks`,
    git_commits_url: `${base}/git/commits{/sha}`,
    git_refs_url: `${base}/git/refs{/sha}`,
    git_tags_url: `${base}/git/tags{/sha}`,
    git_url: `git://example/${repo.owner}/${repo.name}.git`,
    issue_comment_url: `${base}/issues/comments{/number}`,
    issue_events_url: `${base}/issues/events{/number}`,
    issues_url: `${base}/issues{/number}`,
    keys_url: `${base}/keys{/key_id}`,
    labels_url: `${base}/labels{/name}`,
    languages_url: `${base}/languages`,
    merges_url: `${base}/merges`,
    milestones_url: `${base}/milestones{/number}`,
    notifications_url: `${base}/notifications{?since,all,participating}`,
    pulls_url: `${base}/pulls{/number}`,
    releases_url: `${base}/releases{/id}`,
    stargazers_url: `${base}/stargazers`,
    statuses_url: `${base}/statuses/{sha}`,
    subscribers_url: `${base}/subscribers`,
    subscription_url: `${base}/subscription`,
    tags_url: `${base}/tags`,
    teams_url: `${base}/teams`,
    trees_url: `${base}/git/trees{/sha}`,
    hooks_url: `${base}/hooks`,
  };
}

function permissionsFor(ctx: RouteContext, repo: FakeRepo) {
  const role = ctx.state.permissionOf(repo, ctx.viewer?.login);
  const rank = role ? ['read', 'triage', 'write', 'maintain', 'admin'].indexOf(role) : -1;
  return { admin: rank >= 4, maintain: rank >= 3, push: rank >= 2, triage: rank >= 1, pull: !repo.private || rank >= 0 };
}

/** The fields both repository shapes have, all of them set. */
export function repoFields(ctx: RouteContext, repo: FakeRepo) {
  const pushed = [...repo.commits.values()].at(-1)?.author.date ?? repo.createdAt;
  const open = repo.issues.filter((i) => i.state === 'open').length;
  return {
    id: repo.id,
    node_id: `R_${repo.id}`,
    name: repo.name,
    full_name: `${repo.owner}/${repo.name}`,
    owner: simpleUser(ctx, repo.owner),
    private: repo.private,
    description: repo.description,
    fork: repo.fork,
    ...repoUrls(ctx, repo),
    ssh_url: `git@example:${repo.owner}/${repo.name}.git`,
    clone_url: `${ctx.web(`/${repo.owner}/${repo.name}`)}.git`,
    mirror_url: null,
    svn_url: ctx.web(`/${repo.owner}/${repo.name}`),
    homepage: null,
    language: repo.language,
    forks_count: 0,
    stargazers_count: repo.stars,
    watchers_count: repo.stars,
    size: [...repo.blobs.values()].reduce((n, b) => n + b.length, 0),
    default_branch: repo.defaultBranch,
    open_issues_count: open,
    has_issues: repo.hasIssues,
    has_projects: false,
    has_wiki: false,
    has_pages: false,
    has_discussions: false,
    archived: false,
    disabled: false,
    visibility: repo.private ? 'private' : 'public',
    pushed_at: pushed,
    created_at: repo.createdAt,
    updated_at: pushed,
    permissions: permissionsFor(ctx, repo),
    license: null,
    forks: 0,
    open_issues: open,
    watchers: repo.stars,
  };
}

export function minimalRepository(ctx: RouteContext, repo: FakeRepo): MinimalRepository {
  return repoFields(ctx, repo);
}

export function fullRepository(ctx: RouteContext, repo: FakeRepo): FullRepository {
  const parent = repo.parent ? ctx.state.repo(...(repo.parent.split('/') as [string, string])) : undefined;
  return {
    ...repoFields(ctx, repo),
    subscribers_count: 1,
    network_count: 1,
    ...(parent ? { parent: { ...repoFields(ctx, parent), allow_forking: true } as unknown as FullRepository['parent'] } : {}),
  };
}

const getRepo: Handler = (ctx) => json(fullRepository(ctx, repoFor(ctx, 'read')));

function createIn(ctx: RouteContext, owner: string): FullRepository {
  const fields = body(ctx);
  const name = str(fields.name);
  if (!name) throw invalid('Repository creation failed.', [{ resource: 'Repository', code: 'missing_field', field: 'name' }]);
  if (ctx.state.repo(owner, name)) throw invalid('Repository creation failed.', [{ resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' }]);
  const repo = ctx.state.addRepo(owner, name, {
    private: fields.private === true,
    description: str(fields.description) ?? null,
    ...(fields.auto_init === true ? { files: { 'README.md': `# ${name}\n` } } : {}),
  });
  repo.collaborators.set(requireViewer(ctx).login.toLowerCase(), 'admin');
  return fullRepository(ctx, repo);
}

const createForUser: Handler = (ctx) => {
  const viewer = requireViewer(ctx);
  if (!ctx.token?.canWrite) throw new HttpFailure(403, 'Resource not accessible by personal access token', { headers: { 'x-accepted-github-permissions': 'administration=write' } });
  return json(createIn(ctx, viewer.login), 201);
};

const createInOrg: Handler = (ctx) => {
  const viewer = requireViewer(ctx);
  const org = ctx.state.user(ctx.req.params.org ?? '');
  if (!org || org.type !== 'Organization') throw notFound();
  const member = [...ctx.state.repos.values()].some((r) => r.owner === org.login && ctx.state.permissionOf(r, viewer.login) === 'admin');
  if (!member || !ctx.token?.canWrite) throw new HttpFailure(403, 'You need admin access to the organization before adding a repository to it.');
  return json(createIn(ctx, org.login), 201);
};

const fork: Handler = (ctx) => {
  const source = repoFor(ctx, 'read');
  const viewer = requireViewer(ctx);
  const fields = body(ctx);
  const owner = str(fields.organization) ?? viewer.login;
  const name = str(fields.name) ?? source.name;
  const existing = ctx.state.repo(owner, name);
  if (existing) return json(fullRepository(ctx, existing), 202);
  const copy = ctx.state.addRepo(owner, name, { private: source.private, description: source.description, defaultBranch: source.defaultBranch });
  copy.fork = true;
  copy.parent = `${source.owner}/${source.name}`;
  copy.collaborators.set(viewer.login.toLowerCase(), 'admin');
  for (const [sha, blob] of source.blobs) copy.blobs.set(sha, blob);
  for (const [sha, tree] of source.trees) copy.trees.set(sha, tree);
  for (const [sha, commit] of source.commits) copy.commits.set(sha, commit);
  for (const [ref, sha] of source.refs) if (ref.startsWith('heads/')) copy.refs.set(ref, sha);
  return json(fullRepository(ctx, copy), 202);
};

/** Repositories the viewer can see. */
function visible(ctx: RouteContext): FakeRepo[] {
  return [...ctx.state.repos.values()].filter((r) => !r.private || ctx.state.permissionOf(r, ctx.viewer?.login) !== undefined);
}

const searchRepos: Handler = (ctx) => {
  const query = parseQuery(ctx.req.query.get('q') ?? '');
  const found = visible(ctx).filter((r) => inScope(query, `${r.owner}/${r.name}`) && matchesWords(query.words, [r.name, r.description ?? '']));
  return paginated(
    ctx,
    found,
    (r): RepoSearchItem => ({ ...(fullRepository(ctx, r) as unknown as RepoSearchItem), score: 1 }),
    (items) => ({ total_count: found.length, incomplete_results: false, items }),
  );
};

const collaboratorPermission: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  // GitHub only tells people with push access who else has it.
  const asker = ctx.state.permissionOf(repo, ctx.viewer?.login);
  if (!asker || asker === 'read' || asker === 'triage') throw new HttpFailure(403, 'Must have push access to view collaborator permission.');
  const login = ctx.req.params.username ?? '';
  const user = ctx.state.user(login);
  if (!user) throw notFound();
  const role = ctx.state.permissionOf(repo, login);
  const permission = role === 'admin' ? 'admin' : role === 'write' || role === 'maintain' ? 'write' : role ? 'read' : 'none';
  const answer: CollaboratorPermission = { permission, role_name: role ?? 'none', user: { ...simpleUser(ctx, user.login), permissions: { pull: true, triage: false, push: permission === 'write' || permission === 'admin', maintain: role === 'maintain', admin: role === 'admin' }, role_name: role ?? 'none' } };
  return json(answer);
};

const listMine: Handler = (ctx) => {
  const viewer = requireViewer(ctx);
  const affiliation = ctx.req.query.get('affiliation');
  const mine = visible(ctx).filter((r) => (affiliation === 'owner' ? r.owner === viewer.login : ctx.state.permissionOf(r, viewer.login) !== undefined));
  return paginated(ctx, mine, (r) => minimalRepository(ctx, r));
};

const listForOwner: Handler = (ctx) => {
  const owner = ctx.req.params.username ?? ctx.req.params.org ?? '';
  const user = ctx.state.user(owner);
  if (!user || (ctx.req.params.org !== undefined && user.type !== 'Organization')) throw notFound();
  const repos = visible(ctx).filter((r) => r.owner === user.login && (ctx.req.params.org !== undefined || !r.private));
  return paginated(ctx, repos, (r) => minimalRepository(ctx, r));
};

export function repoRoutes(router: Router): void {
  router.get('/repos/:owner/:repo', getRepo);
  router.post('/user/repos', createForUser);
  router.post('/orgs/:org/repos', createInOrg);
  router.post('/repos/:owner/:repo/forks', fork);
  router.get('/search/repositories', searchRepos);
  router.get('/repos/:owner/:repo/collaborators/:username/permission', collaboratorPermission);
  router.get('/user/repos', listMine);
  router.get('/users/:username/repos', listForOwner);
  router.get('/orgs/:org/repos', listForOwner);
}
