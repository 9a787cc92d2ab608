import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, pathSegment, positiveInt, repoParams, text } from '../params.js';
import { count, listing, nextPage, paging, parts, userLine, when } from '../present.js';
import { tailLines } from '../log-tail.js';

const FAILED = new Set(['failure', 'timed_out', 'cancelled', 'startup_failure', 'action_required']);
const MAX_JOBS = 5;

export const listWorkflowRuns = githubTool({
  name: 'list_workflow_runs',
  toolset: 'actions',
  description: 'Lists Actions workflow runs, newest first (workflow_id: id or file name).',
  input: z.object({
    ...repoParams,
    workflow_id: z.union([positiveInt, pathSegment]).optional(),
    branch: text.optional(),
    status: z.enum(['queued', 'in_progress', 'completed', 'success', 'failure', 'cancelled', 'waiting', 'pending']).optional(),
    event: text.optional(),
    ...pageParams,
  }),
  annotations: { title: 'List workflow runs', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Actions: read',
  run: async ({ owner, repo, workflow_id, branch, status, event, ...rest }, { api }) => {
    const page = paging(rest);
    const filters = { ...(branch ? { branch } : {}), ...(status ? { status } : {}), ...(event ? { event } : {}) };
    const { data, headers } =
      workflow_id !== undefined
        ? await api.rest.actions.listWorkflowRuns({ owner, repo, workflow_id, ...page, ...filters })
        : await api.rest.actions.listWorkflowRunsForRepo({ owner, repo, ...page, ...filters });
    const lines = data.workflow_runs.map((r) =>
      parts(`${r.id} ${userLine(r.name)}: ${userLine(r.display_title)}`, `${r.status}${r.conclusion ? `/${r.conclusion}` : ''}`, r.head_branch ?? '', r.event, when(r.created_at)),
    );
    return listing(`${count(data.total_count)} workflow runs of ${fullName(owner, repo)}:`, lines, nextPage(headers.link, page.page));
  },
});

export const getWorkflowRunLogs = githubTool({
  name: 'get_workflow_run_logs',
  toolset: 'actions',
  description: 'The last lines (tail_lines, default 200) of the logs of a run\'s failed jobs, or of one job.',
  input: z.object({
    ...repoParams,
    run_id: positiveInt,
    job_id: positiveInt.optional(),
    failed_only: z.boolean().optional(),
    tail_lines: positiveInt.optional(),
  }),
  aliases: { failedOnly: 'failed_only', tailLines: 'tail_lines' },
  annotations: { title: 'Get run logs', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Actions: read',
  run: async ({ owner, repo, run_id, job_id, failed_only: failedOnly = true, tail_lines: requested }, { api, config, redact }) => {
    const lines = Math.min(requested ?? config.limits.logTailLines, config.limits.maxLogTailLines);
    let jobs: { id: number; name: string; state: string }[];
    let note = '';
    if (job_id !== undefined) {
      const { data } = await api.rest.actions.getJobForWorkflowRun({ owner, repo, job_id });
      jobs = [{ id: data.id, name: userLine(data.name), state: `${data.status}${data.conclusion ? `/${data.conclusion}` : ''}` }];
    } else {
      const { data } = await api.rest.actions.listJobsForWorkflowRun({ owner, repo, run_id, filter: 'latest', per_page: 100 });
      const all = data.jobs.map((j) => ({ id: j.id, name: userLine(j.name), state: `${j.status}${j.conclusion ? `/${j.conclusion}` : ''}`, failed: FAILED.has(j.conclusion ?? '') }));
      const chosen = failedOnly ? all.filter((j) => j.failed) : all;
      if (chosen.length === 0) {
        return listing(
          `Workflow run ${run_id} of ${fullName(owner, repo)} has ${failedOnly ? 'no failed jobs' : 'no jobs'}${failedOnly ? ' (call again with failed_only: false for every job)' : ''}:`,
          all.map((j) => `- ${j.id} ${j.name}: ${j.state}`),
        );
      }
      if (chosen.length > MAX_JOBS) note = `\n(${chosen.length - MAX_JOBS} more jobs not shown; ask for one with job_id.)`;
      jobs = chosen.slice(0, MAX_JOBS);
    }
    const sections: string[] = [];
    for (const job of jobs) {
      const { data } = await api.rest.actions.downloadJobLogsForWorkflowRun({ owner, repo, job_id: job.id, request: { parseSuccessResponseBody: false } });
      const tail = await tailLines(data as unknown as ReadableStream<Uint8Array> | string, lines, redact);
      sections.push(`== job ${job.id} ${job.name} (${job.state}): last ${tail.lines.length} of ${tail.total} lines\n${tail.lines.join('\n')}`);
    }
    return `Logs of workflow run ${run_id} in ${fullName(owner, repo)}:\n${sections.join('\n\n')}${note}`;
  },
});
