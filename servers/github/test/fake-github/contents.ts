import { type Handler, HttpFailure, type RouteContext, type Router, body, invalid, json, notFound, repoFor, str, wantsMedia } from './http.js';
import type { DirectoryItem, FileContent } from './shapes.js';
import type { FakeRepo } from './state.js';
import { gitCommit } from './git.js';

/** GitHub inlines file contents up to 1 MB; above that `content` is empty and `encoding` "none". */
const INLINE_LIMIT = 1024 * 1024;

function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

function links(ctx: RouteContext, repo: FakeRepo, path: string, sha: string, ref: string) {
  const self = ctx.api(`/repos/${repo.owner}/${repo.name}/contents/${encodePath(path)}?ref=${encodeURIComponent(ref)}`);
  const git = ctx.api(`/repos/${repo.owner}/${repo.name}/git/blobs/${sha}`);
  const html = ctx.web(`/${repo.owner}/${repo.name}/blob/${encodeURIComponent(ref)}/${encodePath(path)}`);
  return { url: self, git_url: git, html_url: html, _links: { self, git, html } };
}

function fileShape(ctx: RouteContext, repo: FakeRepo, path: string, sha: string, ref: string): FileContent {
  const blob = repo.blobs.get(sha)!;
  const inline = blob.length <= INLINE_LIMIT;
  return {
    type: 'file',
    encoding: inline ? 'base64' : 'none',
    size: blob.length,
    name: path.split('/').pop()!,
    path,
    // GitHub wraps the base64 at 60 characters.
    content: inline ? (blob.toString('base64').match(/.{1,60}/g) ?? []).join('\n') : '',
    sha,
    download_url: ctx.web(`/raw/${repo.owner}/${repo.name}/${encodeURIComponent(ref)}/${encodePath(path)}`),
    ...links(ctx, repo, path, sha, ref),
  };
}

function directoryShape(ctx: RouteContext, repo: FakeRepo, files: Map<string, string>, dir: string, ref: string): DirectoryItem[] | undefined {
  const prefix = dir === '' ? '' : `${dir}/`;
  const entries = new Map<string, DirectoryItem>();
  for (const [path, sha] of files) {
    if (!path.startsWith(prefix)) continue;
    const rest = path.slice(prefix.length);
    const name = rest.split('/')[0]!;
    const child = `${prefix}${name}`;
    if (entries.has(name)) continue;
    const isDir = rest.includes('/');
    entries.set(name, {
      type: isDir ? 'dir' : 'file',
      size: isDir ? 0 : repo.blobs.get(sha)!.length,
      name,
      path: child,
      sha: isDir ? `tree-${child}` : sha,
      download_url: isDir ? null : ctx.web(`/raw/${repo.owner}/${repo.name}/${encodeURIComponent(ref)}/${encodePath(child)}`),
      ...links(ctx, repo, child, sha, ref),
    });
  }
  return entries.size > 0 ? [...entries.values()] : undefined;
}

function commitFor(ctx: RouteContext, repo: FakeRepo, ref: string | undefined): string {
  const sha = ctx.state.resolve(repo, ref);
  if (!sha) throw new HttpFailure(404, `No commit found for the ref ${ref ?? repo.defaultBranch}`);
  return sha;
}

const getContents: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const ref = ctx.req.query.get('ref') ?? undefined;
  const path = (ctx.req.params.path ?? '').replace(/\/+$/, '');
  const files = ctx.state.filesAt(repo, commitFor(ctx, repo, ref));
  const refName = ref ?? repo.defaultBranch;
  const sha = files.get(path);
  if (sha) {
    if (wantsMedia(ctx, 'raw')) return { status: 200, headers: { 'content-type': 'application/vnd.github.raw' }, body: repo.blobs.get(sha)! };
    return json(fileShape(ctx, repo, path, sha, refName));
  }
  const listing = directoryShape(ctx, repo, files, path, refName);
  if (!listing) throw notFound();
  return json(listing);
};

const putContents: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const path = ctx.req.params.path ?? '';
  const message = str(fields.message);
  const content = str(fields.content);
  if (!message) throw invalid('Invalid request.\n\n"message" wasn\'t supplied.');
  if (content === undefined || !/^[A-Za-z0-9+/=\s]*$/.test(content)) throw invalid('Invalid request.\n\n"content" is not valid Base64.');
  const branch = str(fields.branch) ?? repo.defaultBranch;
  const head = repo.refs.get(`heads/${branch}`);
  if (!head) throw new HttpFailure(404, `Branch ${branch} not found`);
  const existing = ctx.state.filesAt(repo, head).get(path);
  const sha = str(fields.sha);
  if (existing && !sha) throw invalid('Invalid request.\n\n"sha" wasn\'t supplied.');
  if (existing && sha !== existing) throw new HttpFailure(409, `${path} does not match ${sha}`);
  const commit = ctx.state.commit(repo, branch, message, { [path]: Buffer.from(content, 'base64') }, ctx.viewer!.login);
  const blob = ctx.state.filesAt(repo, commit).get(path)!;
  const { content: _inline, encoding: _encoding, ...file } = fileShape(ctx, repo, path, blob, branch);
  return json({ content: file, commit: gitCommit(ctx, repo, commit) }, existing ? 200 : 201);
};

const deleteContents: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write');
  const fields = body(ctx);
  const path = ctx.req.params.path ?? '';
  const message = str(fields.message);
  const sha = str(fields.sha);
  if (!message) throw invalid('Invalid request.\n\n"message" wasn\'t supplied.');
  if (!sha) throw invalid('Invalid request.\n\n"sha" wasn\'t supplied.');
  const branch = str(fields.branch) ?? repo.defaultBranch;
  const head = repo.refs.get(`heads/${branch}`);
  if (!head) throw new HttpFailure(404, `Branch ${branch} not found`);
  const existing = ctx.state.filesAt(repo, head).get(path);
  if (!existing) throw notFound();
  if (sha !== existing) throw new HttpFailure(409, `${path} does not match ${sha}`);
  const commit = ctx.state.commit(repo, branch, message, { [path]: null }, ctx.viewer!.login);
  return json({ content: null, commit: gitCommit(ctx, repo, commit) });
};

export function contentRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/contents', getContents);
  router.get('/repos/:owner/:repo/contents/*path', getContents);
  router.put('/repos/:owner/:repo/contents/*path', putContents);
  router.delete('/repos/:owner/:repo/contents/*path', deleteContents);
}
