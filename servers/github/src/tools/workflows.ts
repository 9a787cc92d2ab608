import { z } from 'zod';
import { ToolError, formatBytes } from '@suite/shared';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, positiveInt, repoParams } from '../params.js';
import { count, listing, nextPage, paging, parts, sizeOf, userLine, when } from '../present.js';

export const listWorkflows = githubTool({
  name: 'list_workflows',
  toolset: 'actions',
  description: "A repository's Actions workflows: id, name, file and state (ids and file names work as list_workflow_runs' workflow_id).",
  input: z.object({ ...repoParams, ...pageParams }),
  annotations: { title: 'List workflows', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Actions: read',
  run: async ({ owner, repo, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.actions.listRepoWorkflows({ owner, repo, ...page });
    const lines = data.workflows.map((w) => parts(`${w.id} ${userLine(w.name)}`, userLine(w.path.replace(/^\.github\/workflows\//, '')), w.state));
    return listing(`${count(data.total_count)} workflows of ${fullName(owner, repo)}:`, lines, nextPage(headers.link, page.page));
  },
});

export const listWorkflowRunArtifacts = githubTool({
  name: 'list_workflow_run_artifacts',
  toolset: 'actions',
  description: "The artifacts a workflow run uploaded: id, name, size, and whether they expired.",
  input: z.object({ ...repoParams, run_id: positiveInt, ...pageParams }),
  annotations: { title: 'List run artifacts', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Actions: read',
  run: async ({ owner, repo, run_id, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.actions.listWorkflowRunArtifacts({ owner, repo, run_id, ...page });
    const lines = data.artifacts.map((a) => parts(`${a.id} ${userLine(a.name)}`, sizeOf(a.size_in_bytes, formatBytes), a.expired ? 'expired' : a.expires_at ? `expires ${when(a.expires_at)}` : ''));
    return listing(`${count(data.total_count)} artifacts of workflow run ${run_id} in ${fullName(owner, repo)}:`, lines, nextPage(headers.link, page.page));
  },
});

export const rerunFailedJobs = githubTool({
  name: 'rerun_failed_jobs',
  toolset: 'actions',
  description: 'Re-runs the failed jobs of a completed workflow run (and the jobs they depend on) as a new attempt.',
  input: z.object({ ...repoParams, run_id: positiveInt }),
  annotations: { title: 'Re-run failed jobs', readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  permission: 'Actions: write',
  run: async ({ owner, repo, run_id }, { api }) => {
    // GitHub's refusal of a run still in progress is a bare 403, which reads like a missing permission: say what it is first.
    const { data: run } = await api.rest.actions.getWorkflowRun({ owner, repo, run_id });
    if (run.status !== 'completed') {
      throw ToolError.conflict(`Workflow run ${run_id} of ${fullName(owner, repo)} is ${run.status}, not completed: only a completed run's failed jobs can be re-run. Wait for it (list_workflow_jobs shows its jobs), or cancel it with cancel_workflow_run.`);
    }
    if (run.conclusion === 'success') {
      throw ToolError.conflict(`Workflow run ${run_id} of ${fullName(owner, repo)} succeeded: it has no failed jobs to re-run.`);
    }
    await api.rest.actions.reRunWorkflowFailedJobs({ owner, repo, run_id });
    return `Re-running the failed jobs of workflow run ${run_id} in ${fullName(owner, repo)} (attempt ${(run.run_attempt ?? 1) + 1}); list_workflow_jobs shows their progress.`;
  },
});

export const cancelWorkflowRun = githubTool({
  name: 'cancel_workflow_run',
  toolset: 'actions',
  description: 'Cancels a queued or in-progress workflow run.',
  input: z.object({ ...repoParams, run_id: positiveInt }),
  annotations: { title: 'Cancel workflow run', readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  permission: 'Actions: write',
  run: async ({ owner, repo, run_id }, { api }) => {
    await api.rest.actions.cancelWorkflowRun({ owner, repo, run_id });
    return `Asked GitHub to cancel workflow run ${run_id} in ${fullName(owner, repo)}; its jobs stop within moments (list_workflow_jobs shows them).`;
  },
});
