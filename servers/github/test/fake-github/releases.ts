import { type Handler, type RouteContext, type Router, json, notFound, paginated, repoFor } from './http.js';
import type { Release } from './shapes.js';
import type { FakeRelease, FakeRepo } from './state.js';
import { simpleUser } from './users.js';

function releaseShape(ctx: RouteContext, repo: FakeRepo, r: FakeRelease): Release {
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}/releases`);
  return {
    url: `${base}/${r.id}`,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/releases/tag/${r.tag}`),
    assets_url: `${base}/${r.id}/assets`,
    upload_url: `${base}/${r.id}/assets{?name,label}`,
    tarball_url: ctx.api(`/repos/${repo.owner}/${repo.name}/tarball/${r.tag}`),
    zipball_url: ctx.api(`/repos/${repo.owner}/${repo.name}/zipball/${r.tag}`),
    id: r.id,
    node_id: `RE_${r.id}`,
    tag_name: r.tag,
    target_commitish: repo.defaultBranch,
    name: r.name,
    body: r.body,
    draft: r.draft,
    prerelease: r.prerelease,
    created_at: r.publishedAt ?? '2025-01-01T00:00:00Z',
    published_at: r.publishedAt,
    author: simpleUser(ctx, r.author),
    assets: r.assets.map((a) => ({
      url: `${base}/assets/${a.id}`,
      browser_download_url: ctx.web(`/${repo.owner}/${repo.name}/releases/download/${r.tag}/${a.name}`),
      id: a.id,
      node_id: `RA_${a.id}`,
      name: a.name,
      label: null,
      state: 'uploaded' as const,
      content_type: 'application/octet-stream',
      size: a.size,
      digest: null,
      download_count: a.downloads,
      created_at: r.publishedAt ?? '2025-01-01T00:00:00Z',
      updated_at: r.publishedAt ?? '2025-01-01T00:00:00Z',
      uploader: null,
    })),
  };
}

const listReleases: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  return paginated(ctx, [...repo.releases].reverse(), (r) => releaseShape(ctx, repo, r));
};

const latestRelease: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const latest = [...repo.releases].reverse().find((r) => !r.draft && !r.prerelease);
  if (!latest) throw notFound();
  return json(releaseShape(ctx, repo, latest));
};

export function releaseRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/releases', listReleases);
  router.get('/repos/:owner/:repo/releases/latest', latestRelease);
}
