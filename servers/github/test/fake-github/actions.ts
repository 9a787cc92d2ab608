import { type Handler, type RouteContext, type Router, json, notFound, paginated, repoFor } from './http.js';
import type { Job, WorkflowRun } from './shapes.js';
import type { FakeJob, FakeRepo, FakeRun } from './state.js';
import { minimalRepository } from './repos.js';
import { simpleUser } from './users.js';

/** Where job logs are "stored": GitHub redirects the logs endpoint to short-lived blob storage. */
export const LOG_STORAGE = '/_blob-storage/job-logs';

export function runShape(ctx: RouteContext, repo: FakeRepo, run: FakeRun): WorkflowRun {
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}/actions/runs/${run.id}`);
  const commit = repo.commits.get(run.headSha);
  return {
    id: run.id,
    name: run.name,
    node_id: `WFR_${run.id}`,
    head_branch: run.branch,
    head_sha: run.headSha,
    path: `.github/workflows/${run.workflowFile}`,
    display_title: run.displayTitle,
    run_number: run.id % 1000,
    event: run.event,
    status: run.status,
    conclusion: run.conclusion,
    workflow_id: run.workflowId,
    url: base,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/actions/runs/${run.id}`),
    pull_requests: [],
    created_at: run.createdAt,
    updated_at: run.createdAt,
    actor: simpleUser(ctx, repo.owner),
    triggering_actor: simpleUser(ctx, repo.owner),
    run_attempt: run.attempt ?? 1,
    run_started_at: run.createdAt,
    jobs_url: `${base}/jobs`,
    logs_url: `${base}/logs`,
    check_suite_url: `${base}/check-suite`,
    artifacts_url: `${base}/artifacts`,
    cancel_url: `${base}/cancel`,
    rerun_url: `${base}/rerun`,
    workflow_url: ctx.api(`/repos/${repo.owner}/${repo.name}/actions/workflows/${run.workflowId}`),
    head_commit: commit ? { id: commit.sha, tree_id: commit.tree, message: commit.message, timestamp: commit.author.date, author: { name: commit.author.name, email: commit.author.email }, committer: { name: commit.author.name, email: commit.author.email } } : null,
    repository: minimalRepository(ctx, repo),
    head_repository: minimalRepository(ctx, repo),
  };
}

function jobShape(ctx: RouteContext, repo: FakeRepo, run: FakeRun, job: FakeJob): Job {
  const base = ctx.api(`/repos/${repo.owner}/${repo.name}/actions`);
  return {
    id: job.id,
    run_id: run.id,
    run_url: `${base}/runs/${run.id}`,
    run_attempt: run.attempt ?? 1,
    node_id: `J_${job.id}`,
    head_sha: run.headSha,
    url: `${base}/jobs/${job.id}`,
    html_url: ctx.web(`/${repo.owner}/${repo.name}/actions/runs/${run.id}/job/${job.id}`),
    status: job.status,
    conclusion: job.conclusion,
    created_at: run.createdAt,
    started_at: run.createdAt,
    completed_at: job.status === 'completed' ? run.createdAt : null,
    name: job.name,
    steps: (job.steps ?? []).map((step) => ({
      name: step.name,
      number: step.number,
      status: step.status,
      conclusion: step.conclusion,
      started_at: run.createdAt,
      completed_at: step.status === 'completed' ? run.createdAt : null,
    })),
    check_run_url: ctx.api(`/repos/${repo.owner}/${repo.name}/check-runs/${job.id}`),
    labels: ['ubuntu-latest'],
    runner_id: null,
    runner_name: null,
    runner_group_id: null,
    runner_group_name: null,
    workflow_name: run.name,
    head_branch: run.branch,
  };
}

function listRuns(ctx: RouteContext, repo: FakeRepo, runs: FakeRun[]) {
  const branch = ctx.req.query.get('branch');
  const status = ctx.req.query.get('status');
  const event = ctx.req.query.get('event');
  const found = runs
    .filter((r) => !branch || r.branch === branch)
    .filter((r) => !status || r.status === status || r.conclusion === status)
    .filter((r) => !event || r.event === event)
    .sort((a, b) => b.id - a.id);
  return paginated(ctx, found, (r) => runShape(ctx, repo, r), (items) => ({ total_count: found.length, workflow_runs: items }));
}

const repoRuns: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  return listRuns(ctx, repo, repo.runs);
};

const workflowRuns: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  const id = ctx.req.params.workflow ?? '';
  const runs = repo.runs.filter((r) => String(r.workflowId) === id || r.workflowFile === id);
  if (runs.length === 0 && !repo.runs.some((r) => String(r.workflowId) === id || r.workflowFile === id)) throw notFound();
  return listRuns(ctx, repo, runs);
};

export function findJob(repo: FakeRepo, id: number): { run: FakeRun; job: FakeJob } | undefined {
  for (const run of repo.runs) {
    const job = run.jobs.find((j) => j.id === id);
    if (job) return { run, job };
  }
  return undefined;
}

const runJobs: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  const run = repo.runs.find((r) => r.id === Number(ctx.req.params.run));
  if (!run) throw notFound();
  return paginated(ctx, run.jobs, (j) => jobShape(ctx, repo, run, j), (jobs) => ({ total_count: run.jobs.length, jobs }));
};

const getJob: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  const found = findJob(repo, Number(ctx.req.params.job));
  if (!found) throw notFound();
  return json(jobShape(ctx, repo, found.run, found.job));
};

/**
 * As on GitHub: 302 to a signed URL on another origin that serves the plain-text log. A client
 * must not send the GitHub token there (the storage side records what it received).
 */
const jobLogs: Handler = (ctx) => {
  const repo = repoFor(ctx, 'read', 'actions');
  const found = findJob(repo, Number(ctx.req.params.job));
  if (!found) throw notFound();
  return { status: 302, headers: { location: `${ctx.storage}${LOG_STORAGE}/${repo.owner}/${repo.name}/${found.job.id}?token=signed-url-token` } };
};

/** The storage side of the redirect: no GitHub authentication, a signed URL instead. */
export const storedLog: Handler = (ctx) => {
  const repo = ctx.state.repo(ctx.req.params.owner ?? '', ctx.req.params.repo ?? '');
  const found = repo ? findJob(repo, Number(ctx.req.params.job)) : undefined;
  if (!found) return { status: 404, body: 'The specified blob does not exist.' };
  return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: found.job.log };
};

export function actionRoutes(router: Router): void {
  router.get('/repos/:owner/:repo/actions/runs', repoRuns);
  router.get('/repos/:owner/:repo/actions/workflows/:workflow/runs', workflowRuns);
  router.get('/repos/:owner/:repo/actions/runs/:run/jobs', runJobs);
  router.get('/repos/:owner/:repo/actions/jobs/:job', getJob);
  router.get('/repos/:owner/:repo/actions/jobs/:job/logs', jobLogs);
}
