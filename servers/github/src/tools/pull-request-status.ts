import { z } from 'zod';
import { githubTool } from '../github-tool.js';
import { fullName, issueNumberField, repoParams } from '../params.js';
import { count, userLine } from '../present.js';

const FAILED = new Set(['failure', 'timed_out', 'cancelled', 'action_required', 'startup_failure', 'stale']);

export const getPullRequestStatus = githubTool({
  name: 'get_pull_request_status',
  toolset: 'pull_requests',
  description: 'Check runs and statuses of a PR, with a verdict.',
  input: z.object({ ...repoParams, pull_number: issueNumberField }),
  annotations: { title: 'Get PR status', readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  permission: 'Checks: read, Commit statuses: read',
  run: async ({ owner, repo, pull_number }, { api }) => {
    const { data: pr } = await api.rest.pulls.get({ owner, repo, pull_number });
    const ref = pr.head.sha;
    const [{ data: combined }, { data: checks }] = await Promise.all([
      api.rest.repos.getCombinedStatusForRef({ owner, repo, ref, per_page: 100 }),
      api.rest.checks.listForRef({ owner, repo, ref, per_page: 100 }),
    ]);
    const statuses = combined.statuses.map((s) => ({ name: userLine(s.context), state: s.state, detail: userLine(s.description) }));
    const runs = checks.check_runs.map((c) => ({ name: userLine(c.name), state: c.status === 'completed' ? (c.conclusion ?? 'completed') : c.status, detail: userLine(c.output?.title) }));
    const all = [...statuses, ...runs];
    const failed = all.filter((c) => FAILED.has(c.state) || c.state === 'error').length;
    const pending = all.filter((c) => ['pending', 'queued', 'in_progress', 'waiting', 'requested'].includes(c.state)).length;
    const verdict = all.length === 0 ? 'no checks' : failed > 0 ? 'failing' : pending > 0 ? 'pending' : 'passing';
    const line = (c: { name: string; state: string; detail: string }): string => `- ${c.name}: ${c.state}${c.detail ? ` (${c.detail})` : ''}`;
    return [
      `${fullName(owner, repo)}#${pull_number} at ${ref.slice(0, 7)}: ${verdict} (${all.length - failed - pending} passed, ${failed} failed, ${pending} pending)`,
      statuses.length ? `Commit statuses:\n${statuses.map(line).join('\n')}` : '',
      runs.length ? `Check runs${checks.total_count > runs.length ? ` (first ${runs.length} of ${count(checks.total_count)})` : ''}:\n${runs.map(line).join('\n')}` : '',
    ]
      .filter(Boolean)
      .join('\n');
  },
});
