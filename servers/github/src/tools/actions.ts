import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, pageParams, pathSegment, positiveInt, repoParams, text } from '../params.js';
import { count, listing, nextPage, paging, parts, userLine, when } from '../present.js';
import { ToolError } from '@suite/shared';
import type { GithubCall } from '../github-session.js';
import { logMatcher, readLog, type LogRead } from '../log-tail.js';

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

type JobSummary = { id: number; name: string; state: string; failed: boolean };

function jobSummary(j: { id: number; name: string; status: string; conclusion: string | null }): JobSummary {
  return { id: j.id, name: userLine(j.name), state: `${j.status}${j.conclusion ? `/${j.conclusion}` : ''}`, failed: FAILED.has(j.conclusion ?? '') };
}

/** Jobs of a run are paged by GitHub (a matrix can have hundreds): read up to this many pages of 100. */
const MAX_JOB_PAGES = 10;

/** Every job of a run's latest attempt, following GitHub's pages (bounded). */
async function jobsOfRun(api: GithubCall['api'], owner: string, repo: string, run_id: number): Promise<{ jobs: JobSummary[]; more: boolean }> {
  const jobs: JobSummary[] = [];
  let pages = 0;
  let more = false;
  for await (const page of api.paginate.iterator(api.rest.actions.listJobsForWorkflowRun, { owner, repo, run_id, filter: 'latest', per_page: 100 })) {
    jobs.push(...page.data.map(jobSummary));
    pages += 1;
    if (pages >= MAX_JOB_PAGES) {
      more = /rel="next"/.test(page.headers.link ?? '');
      break;
    }
  }
  return { jobs, more };
}

/** The jobs whose name is `name` (any case), else those whose name contains it. */
function jobsNamed(jobs: readonly JobSummary[], name: string): JobSummary[] {
  const wanted = name.trim().toLowerCase();
  const exact = jobs.filter((j) => j.name.toLowerCase() === wanted);
  return exact.length > 0 ? exact : jobs.filter((j) => j.name.toLowerCase().includes(wanted));
}

/** One job's section of the answer, kept within `budget` characters by dropping its earliest lines (and saying so). */
function logSection(job: JobSummary, read: LogRead, pattern: string | undefined, budget: number): string {
  const numbered = pattern !== undefined;
  const shown = read.lines.map((l) => (numbered ? `${l.number}: ${l.text}` : l.text));
  let cut = 0;
  let size = shown.reduce((n, line) => n + line.length + 1, 0);
  while (shown.length > 1 && size > budget) {
    size -= shown.shift()!.length + 1;
    cut += 1;
  }
  const kept = shown.length;
  const what = pattern !== undefined ? `last ${kept} of ${read.matched} lines matching ${JSON.stringify(pattern)} (of ${read.total} lines)` : `last ${kept} of ${read.total} lines`;
  const notes = [
    cut > 0 ? `[${cut} earlier lines cut to keep the answer within ${budget} characters: ask for fewer tail_lines or a pattern]` : '',
    read.brokenOff ? `[${read.brokenOff}, after ${read.total} lines: the end of the log is missing; try again]` : '',
  ].filter(Boolean);
  return `== job ${job.id} ${job.name} (${job.state}): ${what}\n${notes.map((n) => `${n}\n`).join('')}${shown.join('\n')}`;
}

export const getWorkflowRunLogs = githubTool({
  name: 'get_workflow_run_logs',
  // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
  longRunning: true,
  toolset: 'actions',
  description:
    "The last lines (tail_lines, default 200) of a run's failed jobs' logs, or of jobs picked by job_id or job_name; pattern keeps only lines containing it (a|b for either, any case).",
  input: z.object({
    ...repoParams,
    run_id: positiveInt,
    job_id: positiveInt.optional(),
    job_name: text.optional(),
    failed_only: z.boolean().optional(),
    tail_lines: positiveInt.optional(),
    pattern: text.optional(),
  }),
  aliases: { failedOnly: 'failed_only', tailLines: 'tail_lines', jobName: 'job_name' },
  annotations: { title: 'Get run logs', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Actions: read',
  run: async ({ owner, repo, run_id, job_id, job_name, failed_only, tail_lines: requested, pattern }, { api, config, redact }) => {
    const lines = Math.min(requested ?? config.limits.logTailLines, config.limits.maxLogTailLines);
    let jobs: JobSummary[];
    let note = '';
    if (job_id !== undefined) {
      const { data } = await api.rest.actions.getJobForWorkflowRun({ owner, repo, job_id });
      if (data.run_id !== run_id) throw ToolError.invalidArgument(`Job ${job_id} belongs to workflow run ${data.run_id}, not ${run_id}: call again with run_id: ${data.run_id}.`);
      jobs = [jobSummary(data)];
    } else {
      const { jobs: all, more } = await jobsOfRun(api, owner, repo, run_id);
      const named = job_name !== undefined ? jobsNamed(all, job_name) : all;
      if (job_name !== undefined && named.length === 0) {
        throw ToolError.notFound(
          `Workflow run ${run_id} of ${fullName(owner, repo)} has no job named ${JSON.stringify(userLine(job_name))}${more ? ` among its first ${all.length} jobs (ask by job_id)` : ''}. Its jobs: ${all.slice(0, 30).map((j) => j.name).join(', ') || 'none'}.`,
        );
      }
      // Naming a job asks for it whatever its outcome; without a name, the failed ones are what a model wants first.
      const failedOnly = failed_only ?? job_name === undefined;
      const chosen = failedOnly ? named.filter((j) => j.failed) : named;
      if (chosen.length === 0) {
        return listing(
          `Workflow run ${run_id} of ${fullName(owner, repo)} has ${failedOnly ? 'no failed jobs' : 'no jobs'}${job_name !== undefined ? ` named ${JSON.stringify(userLine(job_name))}` : ''}${failedOnly ? ' (call again with failed_only: false for every job)' : ''}:`,
          named.map((j) => `- ${j.id} ${j.name}: ${j.state}`),
        );
      }
      if (chosen.length > MAX_JOBS) note = `\n(${chosen.length - MAX_JOBS} more jobs not shown; ask for one with job_id or job_name.)`;
      jobs = chosen.slice(0, MAX_JOBS);
    }
    const matches = logMatcher(pattern);
    // Each job gets its share of the answer, so the last job's tail is never what the final cap cuts.
    const budget = Math.max(1000, Math.floor((config.limits.maxOutputChars - 500) / jobs.length) - 200);
    const sections: string[] = [];
    for (const job of jobs) {
      const { data } = await api.rest.actions.downloadJobLogsForWorkflowRun({ owner, repo, job_id: job.id, request: { parseSuccessResponseBody: false } });
      const read = await readLog(data as unknown as ReadableStream<Uint8Array> | string, lines, matches, redact);
      sections.push(logSection(job, read, pattern, budget));
    }
    return `Logs of workflow run ${run_id} in ${fullName(owner, repo)}:\n${sections.join('\n\n')}${note}`;
  },
});

export const listWorkflowJobs = githubTool({
  name: 'list_workflow_jobs',
  toolset: 'actions',
  description: "A workflow run's jobs with their status and, for failed jobs, the steps that failed (filter: latest attempt or all).",
  input: z.object({
    ...repoParams,
    run_id: positiveInt,
    filter: z.enum(['latest', 'all']).optional(),
    ...pageParams,
  }),
  annotations: { title: 'List run jobs', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Actions: read',
  run: async ({ owner, repo, run_id, filter, ...rest }, { api }) => {
    const page = paging(rest);
    const { data, headers } = await api.rest.actions.listJobsForWorkflowRun({ owner, repo, run_id, filter: filter ?? 'latest', ...page });
    const lines = data.jobs.map((j) => {
      const job = jobSummary(j);
      const failedSteps = (j.steps ?? []).filter((s) => FAILED.has(s.conclusion ?? ''));
      const head = parts(`${job.id} ${job.name}: ${job.state}`, j.run_attempt && j.run_attempt > 1 ? `attempt ${j.run_attempt}` : '', duration(j.started_at, j.completed_at));
      return [head, ...failedSteps.map((s) => `  failed step ${s.number} ${userLine(s.name)}: ${s.conclusion}`)].join('\n');
    });
    return listing(`${count(data.total_count)} jobs of workflow run ${run_id} in ${fullName(owner, repo)}:`, lines, nextPage(headers.link, page.page));
  },
});

/** "3m 12s" between two timestamps, or nothing when one is missing. */
function duration(start: string | null | undefined, end: string | null | undefined): string {
  if (!start || !end) return '';
  const seconds = Math.round((Date.parse(end) - Date.parse(start)) / 1000);
  if (!Number.isFinite(seconds) || seconds < 0) return '';
  return seconds >= 60 ? `${Math.floor(seconds / 60)}m ${seconds % 60}s` : `${seconds}s`;
}
