import { type Handler, HttpFailure, type RouteContext, type Router, body, invalid, json, notFound, paginated, repoFor, str } from './http.js';
import type { Commit, CommitListItem, GitCommit, GitRef, GitTree, ShortBranch, Tag } from './shapes.js';
import { type FakeRepo, unifiedPatch } from './state.js';
import { maybeUser } from './users.js';

export function gitCommit(ctx: RouteContext, repo: FakeRepo, sha: string): GitCommit {
  const c = repo.commits.get(sha)!;
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}/git`);
  return {
    sha,
    node_id: `C_${sha.slice(0, 10)}`,
    url: `${base}/commits/${sha}`,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/commit/${sha}`),
    author: c.author,
    committer: c.author,
    message: c.message,
    tree: { sha: c.tree, url: `${base}/trees/${c.tree}` },
    parents: c.parents.map((p) => ({ sha: p, url: `${base}/commits/${p}`, html_url: ctx.web(`/${repo.owner}/${repo.name}/commit/${p}`) })),
    verification: { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null },
  };
}

function refShape(ctx: RouteContext, repo: FakeRepo, ref: string): GitRef {
  const sha = repo.refs.get(ref)!;
  return {
    ref: `refs/${ref}`,
    node_id: `REF_${ref}`,
    url: ctx.api(`/repos/${repo.owner}/${repo.name}/git/refs/${ref}`),
    object: { type: 'commit', sha, url: ctx.api(`/repos/${repo.owner}/${repo.name}/git/commits/${sha}`) },
  };
}

const getRef: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const ref = ctx.req.params.ref ?? '';
  if (!repo.refs.has(ref)) throw notFound();
  return json(refShape(ctx, repo, ref));
};

const createRef: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const ref = str(fields.ref) ?? '';
  const sha = str(fields.sha) ?? '';
  if (!/^refs\/(heads|tags)\/.+/.test(ref)) throw invalid('Reference name must start with refs/ and have at least two slashes.');
  if (!repo.commits.has(sha)) throw invalid('Object does not exist');
  const key = ref.slice('refs/'.length);
  if (repo.refs.has(key)) throw invalid('Reference already exists');
  repo.refs.set(key, sha);
  return json(refShape(ctx, repo, key), 201);
};

const updateRef: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const key = ctx.req.params.ref ?? '';
  const sha = str(fields.sha) ?? '';
  const current = repo.refs.get(key);
  if (!current) throw new HttpFailure(422, 'Reference does not exist');
  if (!repo.commits.has(sha)) throw invalid('Object does not exist');
  if (fields.force !== true && !ctx.state.isAncestor(repo, current, sha)) throw invalid('Update is not a fast forward');
  repo.refs.set(key, sha);
  return json(refShape(ctx, repo, key));
};

const getGitCommit: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const sha = ctx.req.params.sha ?? '';
  if (!repo.commits.has(sha)) throw notFound();
  return json(gitCommit(ctx, repo, sha));
};

const createBlob: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const content = str(fields.content);
  if (content === undefined) throw invalid('Invalid request.\n\n"content" wasn\'t supplied.');
  const sha = ctx.state.putBlob(repo, Buffer.from(content, fields.encoding === 'base64' ? 'base64' : 'utf8'));
  return json({ sha, url: ctx.api(`/repos/${repo.owner}/${repo.name}/git/blobs/${sha}`) }, 201);
};

const createTree: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const baseTree = str(fields.base_tree);
  const files = new Map(baseTree ? (repo.trees.get(baseTree) ?? new Map<string, string>()) : new Map<string, string>());
  if (baseTree && !repo.trees.has(baseTree)) throw invalid('Invalid request.\n\nbase_tree is not a tree.');
  const entries = Array.isArray(fields.tree) ? (fields.tree as Record<string, unknown>[]) : [];
  if (entries.length === 0) throw invalid('Invalid request.\n\n"tree" wasn\'t supplied.');
  for (const entry of entries) {
    const path = str(entry.path) ?? '';
    if (!path || path.startsWith('/') || path.split('/').includes('..')) throw invalid(`tree.path contains a malformed path component`);
    if (entry.sha === null) files.delete(path);
    else if (typeof entry.content === 'string') files.set(path, ctx.state.putBlob(repo, Buffer.from(entry.content, 'utf8')));
    else if (typeof entry.sha === 'string' && repo.blobs.has(entry.sha)) files.set(path, entry.sha);
    else throw invalid('Invalid request.\n\nEach tree entry needs content or the sha of a blob.');
  }
  const sha = ctx.state.putTree(repo, files);
  const tree: GitTree = {
    sha,
    url: ctx.api(`/repos/${repo.owner}/${repo.name}/git/trees/${sha}`),
    truncated: false,
    tree: [...files].map(([path, blob]) => ({ path, mode: '100644', type: 'blob', sha: blob, size: repo.blobs.get(blob)!.length, url: ctx.api(`/repos/${repo.owner}/${repo.name}/git/blobs/${blob}`) })),
  };
  return json(tree, 201);
};

const createCommit: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const message = str(fields.message);
  const tree = str(fields.tree) ?? '';
  const parents = Array.isArray(fields.parents) ? fields.parents.map(String) : [];
  if (!message) throw invalid('Invalid request.\n\n"message" wasn\'t supplied.');
  if (!repo.trees.has(tree)) throw invalid('Tree SHA does not exist');
  if (parents.some((p) => !repo.commits.has(p))) throw invalid('Parent SHA does not exist or is not a commit object');
  const sha = ctx.state.putCommit(repo, tree, parents, message, ctx.viewer!.login);
  return json(gitCommit(ctx, repo, sha), 201);
};

const listBranches: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const names = [...repo.refs.keys()].filter((r) => r.startsWith('heads/')).map((r) => r.slice(6)).sort();
  return paginated(ctx, names, (name): ShortBranch => {
    const sha = repo.refs.get(`heads/${name}`)!;
    return { name, commit: { sha, url: ctx.api(`/repos/${repo.owner}/${repo.name}/commits/${sha}`) }, protected: repo.protectedBranches.has(name) };
  });
};

const listTags: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const names = [...repo.refs.keys()].filter((r) => r.startsWith('tags/')).map((r) => r.slice(5)).sort().reverse();
  return paginated(ctx, names, (name): Tag => {
    const sha = repo.refs.get(`tags/${name}`)!;
    const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
    return { name, commit: { sha, url: `${base}/commits/${sha}` }, zipball_url: `${base}/zipball/refs/tags/${name}`, tarball_url: `${base}/tarball/refs/tags/${name}`, node_id: `TAG_${name}` };
  });
};

/** Files a commit changes against its first parent. */
function changedFiles(repo: FakeRepo, ctxState: { filesAt(repo: FakeRepo, sha: string): Map<string, string> }, sha: string): { path: string; before?: string; after?: string }[] {
  const commit = repo.commits.get(sha)!;
  const after = ctxState.filesAt(repo, sha);
  const before = commit.parents[0] ? ctxState.filesAt(repo, commit.parents[0]) : new Map<string, string>();
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths]
    .filter((p) => before.get(p) !== after.get(p))
    .sort()
    .map((path) => ({ path, ...(before.has(path) ? { before: before.get(path)! } : {}), ...(after.has(path) ? { after: after.get(path)! } : {}) }));
}

function commitListItem(ctx: RouteContext, repo: FakeRepo, sha: string): CommitListItem {
  const c = repo.commits.get(sha)!;
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  return {
    url: `${base}/commits/${sha}`,
    sha,
    node_id: `C_${sha.slice(0, 10)}`,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/commit/${sha}`),
    comments_url: `${base}/commits/${sha}/comments`,
    commit: {
      url: `${base}/git/commits/${sha}`,
      author: c.author,
      committer: c.author,
      message: c.message,
      comment_count: 0,
      tree: { sha: c.tree, url: `${base}/git/trees/${c.tree}` },
    },
    author: maybeUser(ctx, c.login),
    committer: maybeUser(ctx, c.login),
    parents: c.parents.map((p) => ({ sha: p, url: `${base}/commits/${p}`, html_url: ctx.web(`/${repo.owner}/${repo.name}/commit/${p}`) })),
  };
}

/** Commits reachable from a commit, newest first. */
function history(repo: FakeRepo, from: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length > 0) {
    const sha = queue.shift()!;
    if (seen.has(sha)) continue;
    seen.add(sha);
    out.push(sha);
    queue.push(...(repo.commits.get(sha)?.parents ?? []));
  }
  return out.sort((a, b) => repo.commits.get(b)!.author.date.localeCompare(repo.commits.get(a)!.author.date));
}

const listCommits: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const ref = ctx.req.query.get('sha') ?? undefined;
  const head = ctx.state.resolve(repo, ref);
  if (!head) {
    if (repo.commits.size === 0) throw new HttpFailure(409, 'Git Repository is empty.');
    throw notFound();
  }
  const path = ctx.req.query.get('path');
  const author = ctx.req.query.get('author')?.toLowerCase();
  const since = ctx.req.query.get('since');
  const shas = history(repo, head).filter((sha) => {
    const c = repo.commits.get(sha)!;
    if (path && !changedFiles(repo, ctx.state, sha).some((f) => f.path === path || f.path.startsWith(`${path}/`))) return false;
    if (author && c.login?.toLowerCase() !== author && c.author.email.toLowerCase() !== author) return false;
    if (since && c.author.date < since) return false;
    return true;
  });
  return paginated(ctx, shas, (sha) => commitListItem(ctx, repo, sha));
};

/** Binary blobs get no patch, as on GitHub. */
function textOf(repo: FakeRepo, sha: string | undefined): string | undefined {
  if (!sha) return undefined;
  const blob = repo.blobs.get(sha)!;
  return blob.includes(0) ? undefined : blob.toString('utf8');
}

export function fileChanges(repo: FakeRepo, ctx: RouteContext, changes: { path: string; before?: string; after?: string }[]) {
  return changes.map((f) => {
    const binary = (f.before && repo.blobs.get(f.before)!.includes(0)) || (f.after && repo.blobs.get(f.after)!.includes(0));
    const diff = unifiedPatch(textOf(repo, f.before), textOf(repo, f.after));
    const status = f.before === undefined ? ('added' as const) : f.after === undefined ? ('removed' as const) : ('modified' as const);
    return {
      sha: f.after ?? f.before ?? '',
      filename: f.path,
      status,
      additions: binary ? 0 : diff.additions,
      deletions: binary ? 0 : diff.deletions,
      changes: binary ? 0 : diff.additions + diff.deletions,
      blob_url: ctx.web(`/${repo.owner}/${repo.name}/blob/${f.after ?? f.before}/${f.path}`),
      raw_url: ctx.web(`/${repo.owner}/${repo.name}/raw/${f.after ?? f.before}/${f.path}`),
      contents_url: ctx.api(`/repos/${repo.owner}/${repo.name}/contents/${f.path}`),
      ...(binary ? {} : { patch: diff.patch }),
    };
  });
}

const getCommit: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const sha = ctx.state.resolve(repo, ctx.req.params.ref);
  if (!sha) throw new HttpFailure(422, `No commit found for SHA: ${ctx.req.params.ref}`);
  const files = fileChanges(repo, ctx, changedFiles(repo, ctx.state, sha));
  const additions = files.reduce((n, f) => n + f.additions, 0);
  const deletions = files.reduce((n, f) => n + f.deletions, 0);
  const commit: Commit = { ...commitListItem(ctx, repo, sha), stats: { additions, deletions, total: additions + deletions }, files };
  return json(commit);
};

export function gitRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/git/ref/*ref', getRef);
  router.post('/repos/:owner/:repo/git/refs', createRef);
  router.patch('/repos/:owner/:repo/git/refs/*ref', updateRef);
  router.get('/repos/:owner/:repo/git/commits/:sha', getGitCommit);
  router.post('/repos/:owner/:repo/git/commits', createCommit);
  router.post('/repos/:owner/:repo/git/trees', createTree);
  router.post('/repos/:owner/:repo/git/blobs', createBlob);
  router.get('/repos/:owner/:repo/branches', listBranches);
  router.get('/repos/:owner/:repo/tags', listTags);
  router.get('/repos/:owner/:repo/commits', listCommits);
  router.get('/repos/:owner/:repo/commits/:ref', getCommit);
}

export { changedFiles };
