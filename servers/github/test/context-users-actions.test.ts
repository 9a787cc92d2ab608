import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { tokenOf } from './fake-github/index.js';
import { TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
beforeAll(async () => {
  world = await startWorld();
  gh = await world.connect();
});
afterAll(() => world.close());

const repo = { owner: 'acme', repo: 'widgets' };
/** The line a log answer starts with: where GitHub's storage redirect led (redirect-policy.ts). */
const storageNote = (): string => `Note: GitHub redirected this download to its storage at ${world.fake.storage.url}; what follows was read from there, without the token.`;

describe('context and users', () => {
  it('get_me names the user the token acts as', async () => {
    const out = await gh.callTool('get_me');
    expect(out.text).toBe('@alice · Alice Liddell · User\nAcme · Oxford\nBuilds widgets.\n0 public repos · 1 private · 0 followers · plan pro\nhttps://github.example/alice · joined 2025-01-01 00:01Z');
  });

  it('search_users finds users and organizations', async () => {
    const out = await gh.callTool('search_users', { q: 'acme' });
    expect(out.text).toBe('1 users match:\n@acme (Organization) https://github.example/acme');
  });
});

describe('actions', () => {
  it('lists workflow runs, for the repository and for one workflow file', async () => {
    const all = await gh.callTool('list_workflow_runs', repo);
    expect(all.text).toMatch(/^1 workflow runs of acme\/widgets:\n9001 CI: Add login · completed\/failure · feature\/login · pull_request · 2025-/);
    const byFile = await gh.callTool('list_workflow_runs', { ...repo, workflow_id: 'ci.yml', branch: 'feature/login' });
    expect(byFile.text).toContain('9001 CI: Add login');
    const none = await gh.callTool('list_workflow_runs', { ...repo, status: 'success' });
    expect(none.text).toBe('0 workflow runs of acme/widgets:\nNone.');
  });

  it("tails the failed job's log: the last lines only, timestamps and colour codes removed, the storage redirect followed", async () => {
    const api = world.fake.requests.length;
    const stored = world.fake.storage.requests.length;
    const out = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, tail_lines: 3 });
    expect(out.text).toBe(`${storageNote()}\n` + 'Logs of workflow run 9001 in acme/widgets:\n== job 502 test (completed/failure): last 3 of 501 lines\nstep line 499\nstep line 500\nError: expected 2 to be 3');
    expect(out.text).not.toContain('build ok');
    // The API request carries the token; the redirect goes to another origin, which must not get it.
    const logsRequest = world.fake.requests.slice(api).find((r) => r.path === '/repos/acme/widgets/actions/jobs/502/logs')!;
    expect(tokenOf(logsRequest)).toBe(TOKENS.alice);
    const fetched = world.fake.storage.requests.slice(stored);
    expect(fetched.map((r) => `${r.path}?${r.query.toString()}`)).toEqual(['/_blob-storage/job-logs/acme/widgets/502?token=signed-url-token']);
    expect(new URL(world.fake.storage.url).origin).not.toBe(new URL(world.fake.url).origin);
    expect(fetched[0]!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(fetched[0]!.headers)).not.toContain(TOKENS.alice);
  });

  it('defaults to 200 lines, can show every job, or one job', async () => {
    const failed = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001 });
    expect(failed.text).toContain('last 200 of 501 lines');
    const all = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, failed_only: false, tail_lines: 1 });
    expect(all.text).toContain('== job 501 build (completed/success): last 1 of 1 lines\nbuild ok');
    expect(all.text).toContain('== job 502 test');
    const one = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, job_id: 501 });
    expect(one.text).toBe(`${storageNote()}\n` + 'Logs of workflow run 9001 in acme/widgets:\n== job 501 build (completed/success): last 1 of 1 lines\nbuild ok');
  });

  it('says when a run has no failed job, and names a missing run', async () => {
    world.widgets.runs.push({ ...world.widgets.runs[0]!, id: 9002, conclusion: 'success', jobs: [{ id: 503, name: 'build', status: 'completed', conclusion: 'success', log: 'ok\n' }] });
    const out = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9002 });
    expect(out.text).toBe('Workflow run 9002 of acme/widgets has no failed jobs (call again with failed_only: false for every job):\n- 503 build: completed/success');
    const missing = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 1234 });
    expect(missing).toMatchObject({ isError: true, text: expect.stringMatching(/^Not found: workflow run 1234 in acme\/widgets\./) });
  });
});

describe('notifications', () => {
  it('lists unread notifications by default, all with all: true', async () => {
    const unread = await gh.callTool('list_notifications');
    expect(unread.text.split('\n')).toEqual([
      'Notifications (unread):',
      expect.stringMatching(/^\[unread\] mallory\/tools: Issue "Mention" · mention · updated .* · thread 3$/),
      expect.stringMatching(/^\[unread\] acme\/widgets: Issue "Crash on start" · subscribed · updated .* · thread 1$/),
    ]);
    const all = await gh.callTool('list_notifications', { all: true });
    expect(all.text).toContain('acme/gadgets: Release "Release v2"');
  });
});
