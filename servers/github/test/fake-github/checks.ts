import { type Handler, type Router, json, notFound, repoFor } from './http.js';
import type { CheckRunList, CombinedStatus } from './shapes.js';
import { minimalRepository } from './repos.js';

const combinedStatus: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const sha = ctx.state.resolve(repo, ctx.req.params.ref);
  if (!sha) throw notFound();
  const statuses = repo.statuses.get(sha) ?? [];
  const state = statuses.some((s) => s.state === 'failure' || s.state === 'error') ? 'failure' : statuses.some((s) => s.state === 'pending') || statuses.length === 0 ? 'pending' : 'success';
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  const answer: CombinedStatus = {
    state,
    sha,
    total_count: statuses.length,
    statuses: statuses.map((s) => ({
      url: `${base}/statuses/${sha}`,
      avatar_url: null,
      id: s.id,
      node_id: `SC_${s.id}`,
      state: s.state,
      description: s.description,
      target_url: null,
      context: s.context,
      created_at: '2025-01-01T00:00:00Z',
      updated_at: '2025-01-01T00:00:00Z',
    })),
    repository: minimalRepository(ctx, repo),
    commit_url: `${base}/commits/${sha}`,
    url: `${base}/commits/${sha}/status`,
  };
  return json(answer);
};

const checkRuns: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read');
  const sha = ctx.state.resolve(repo, ctx.req.params.ref);
  if (!sha) throw notFound();
  const runs = repo.checkRuns.get(sha) ?? [];
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}`);
  const answer: CheckRunList = {
    total_count: runs.length,
    check_runs: runs.map((r) => ({
      id: r.id,
      head_sha: sha,
      node_id: `CR_${r.id}`,
      external_id: null,
      url: `${base}/check-runs/${r.id}`,
      html_url: ctx.web(`/${repo.owner}/${repo.name}/runs/${r.id}`),
      details_url: null,
      status: r.status,
      conclusion: r.conclusion,
      started_at: '2025-01-01T00:00:00Z',
      completed_at: r.status === 'completed' ? '2025-01-01T00:05:00Z' : null,
      output: { title: r.title, summary: null, text: null, annotations_count: 0, annotations_url: `${base}/check-runs/${r.id}/annotations` },
      name: r.name,
      check_suite: null,
      app: null,
      pull_requests: [],
    })),
  };
  return json(answer);
};

export function checkRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/commits/:ref/status', combinedStatus);
  router.get('/repos/:owner/:repo/commits/:ref/check-runs', checkRuns);
}
