import { type Handler, HttpFailure, type RouteContext, type Router, json, notFound, paginated, repoFor } from './http.js';
import { runShape } from './actions.js';
import type { FakeRepo, FakeRun } from './state.js';

/**
 * Workflows and what can be done to a run: the repository's workflow files, a run by id, its
 * artifacts, re-running its failed jobs and cancelling it, with GitHub's answers (201, 202, 409 for
 * a run that is already complete, 403 naming `actions=write` for a token without it).
 */

function runOf(ctx: RouteContext, repo: FakeRepo): FakeRun {
  const run = repo.runs.find((r) => r.id === Number(ctx.req.params.run));
  if (!run) throw notFound();
  return run;
}

const listWorkflows: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  const workflows = repo.workflows ?? [];
  return paginated(
    ctx,
    workflows,
    (w) => ({
      id: w.id,
      node_id: `W_${w.id}`,
      name: w.name,
      path: `.github/workflows/${w.file}`,
      state: w.state,
      created_at: repo.createdAt,
      updated_at: repo.createdAt,
      url: ctx.api(`/repos/${repo.owner}/${repo.name}/actions/workflows/${w.id}`),
      html_url: ctx.web(`/${repo.owner}/${repo.name}/blob/${repo.defaultBranch}/.github/workflows/${w.file}`),
      badge_url: ctx.web(`/${repo.owner}/${repo.name}/workflows/${encodeURIComponent(w.name)}/badge.svg`),
    }),
    (items) => ({ total_count: workflows.length, workflows: items }),
  );
};

const getRun: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  return json(runShape(ctx, repo, runOf(ctx, repo)));
};

const listArtifacts: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  const run = runOf(ctx, repo);
  const artifacts = run.artifacts ?? [];
  return paginated(
    ctx,
    artifacts,
    (a) => ({
      id: a.id,
      node_id: `MDg6QXJ0aWZhY3Q${a.id}`,
      name: a.name,
      size_in_bytes: a.sizeInBytes,
      url: ctx.api(`/repos/${repo.owner}/${repo.name}/actions/artifacts/${a.id}`),
      archive_download_url: ctx.api(`/repos/${repo.owner}/${repo.name}/actions/artifacts/${a.id}/zip`),
      expired: a.expired,
      created_at: a.createdAt,
      expires_at: a.createdAt,
      updated_at: a.createdAt,
      digest: null,
      workflow_run: { id: run.id, repository_id: repo.id, head_repository_id: repo.id, head_branch: run.branch, head_sha: run.headSha },
    }),
    (items) => ({ total_count: artifacts.length, artifacts: items }),
  );
};

const rerunFailedJobs: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write', 'actions');
  const run = runOf(ctx, repo);
  if (run.status !== 'completed') throw new HttpFailure(403, 'This workflow is already running');
  const failed = run.jobs.filter((j) => j.conclusion === 'failure' || j.conclusion === 'cancelled');
  if (failed.length === 0) throw new HttpFailure(403, 'This workflow run cannot be retried');
  for (const job of failed) {
    job.status = 'queued';
    job.conclusion = null;
  }
  run.status = 'queued';
  run.conclusion = null;
  run.attempt = (run.attempt ?? 1) + 1;
  return json({}, 201);
};

const cancelRun: Handler = (ctx) => {
  const repo = repoFor(ctx, 'write', 'actions');
  const run = runOf(ctx, repo);
  if (run.status === 'completed') throw new HttpFailure(409, 'Cannot cancel a workflow run that is completed.');
  run.status = 'completed';
  run.conclusion = 'cancelled';
  for (const job of run.jobs) {
    if (job.status !== 'completed') {
      job.status = 'completed';
      job.conclusion = 'cancelled';
    }
  }
  return json({}, 202);
};

export function workflowRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/actions/workflows', listWorkflows);
  router.get('/repos/:owner/:repo/actions/runs/:run', getRun);
  router.get('/repos/:owner/:repo/actions/runs/:run/artifacts', listArtifacts);
  router.post('/repos/:owner/:repo/actions/runs/:run/rerun-failed-jobs', rerunFailedJobs);
  router.post('/repos/:owner/:repo/actions/runs/:run/cancel', cancelRun);
}
