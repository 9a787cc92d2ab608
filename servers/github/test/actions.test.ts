import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { DEFAULT_LIMITS } from '../src/server.js';
import type { FakeJob, FakeRun } from './fake-github/index.js';
import { TAG_TEXT, TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
const repo = { owner: 'acme', repo: 'widgets' };
/** The line a log answer starts with: where GitHub's storage redirect led (redirect-policy.ts). */
const storageNote = (): string => `Note: GitHub redirected this download to its storage at ${world.fake.storage.url}; what follows was read from there, without the token.`;
const FINE_GRAINED = 'alice-fine-grained-contents-only-1a2b';

function run(id: number, fields: Partial<FakeRun> & { jobs: FakeJob[] }): FakeRun {
  return { ...world.widgets.runs[0]!, id, artifacts: [], attempt: 1, ...fields };
}

beforeAll(async () => {
  world = await startWorld();
  const s = world.fake.state;
  // A fine-grained token of alice's that may read contents and nothing else.
  s.addToken(FINE_GRAINED, 'alice', { permissions: { contents: 'read' } });
  world.widgets.workflows = [
    { id: 77, name: 'CI', file: 'ci.yml', state: 'active' },
    { id: 78, name: `Release${TAG_TEXT}`, file: 'release.yml', state: 'disabled_manually' },
  ];
  const test = world.widgets.runs[0]!.jobs[1]!;
  test.steps = [
    { number: 1, name: 'Set up job', status: 'completed', conclusion: 'success' },
    { number: 2, name: 'Run tests\u200b', status: 'completed', conclusion: 'failure' },
    { number: 3, name: 'Upload', status: 'completed', conclusion: 'skipped' },
  ];
  world.widgets.runs[0]!.artifacts = [
    { id: 31, name: 'coverage', sizeInBytes: 2048, expired: false, createdAt: '2025-01-01T00:10:00Z' },
    { id: 32, name: 'old-build', sizeInBytes: 10, expired: true, createdAt: '2025-01-01T00:10:00Z' },
  ];
  // A matrix of 150 jobs: GitHub pages them, 100 at a time.
  const matrix = Array.from({ length: 150 }, (_, i): FakeJob => ({ id: 7000 + i, name: `test (node ${i})`, status: 'completed', conclusion: i === 140 ? 'failure' : 'success', log: `node ${i} ok\n` }));
  matrix[140]!.log = `setup\n\u001b[31mError: node 140 broke${TAG_TEXT}\u001b[0m\nwarning: flaky\nerror: exit 1\n`;
  world.widgets.runs.push(
    run(9100, { conclusion: 'failure', jobs: matrix }),
    run(9200, { status: 'in_progress', conclusion: null, jobs: [{ id: 9201, name: 'slow', status: 'in_progress', conclusion: null, log: '' }] }),
    run(9300, { status: 'queued', conclusion: null, jobs: [{ id: 9301, name: 'waiting', status: 'queued', conclusion: null, log: '' }] }),
    run(9400, { conclusion: 'failure', jobs: [{ id: 9401, name: 'lint', status: 'completed', conclusion: 'failure', log: 'bad\n' }, { id: 9402, name: 'build', status: 'completed', conclusion: 'success', log: 'ok\n' }] }),
  );
  const secret = world.fake.state.repo('acme', 'secret')!;
  secret.collaborators.set('alice', 'admin');
  secret.runs.push({ ...world.widgets.runs[0]!, id: 9500, jobs: [] });
  gh = await world.connect();
});
afterAll(() => world.close());

describe('workflows and jobs', () => {
  it('list_workflows: id, name, file and state, names sanitised', async () => {
    const out = await gh.callTool('list_workflows', repo);
    expect(out.text).toBe('2 workflows of acme/widgets:\n77 CI · ci.yml · active\n78 Release · release.yml · disabled_manually');
  });

  it('list_workflow_jobs: status of each job and the steps that failed', async () => {
    const out = await gh.callTool('list_workflow_jobs', { ...repo, run_id: 9001 });
    expect(out.text).toBe('2 jobs of workflow run 9001 in acme/widgets:\n501 build: completed/success · 0s\n502 test: completed/failure · 0s\n  failed step 2 Run tests: failure');
  });

  it('list_workflow_jobs pages a large matrix as GitHub does', async () => {
    const first = await gh.callTool('list_workflow_jobs', { ...repo, run_id: 9100, per_page: 100 });
    expect(first.text.split('\n')).toHaveLength(1 + 100 + 1);
    expect(first.text).toMatch(/^150 jobs of workflow run 9100/);
    expect(first.text).toContain('Page 1 of 2. More: call again with page: 2.');
    const second = await gh.callTool('list_workflow_jobs', { ...repo, run_id: 9100, per_page: 100, page: 2 });
    expect(second.text).toContain('7140 test (node 140): completed/failure');
  });

  it('list_workflow_run_artifacts: names, sizes and expiry', async () => {
    const out = await gh.callTool('list_workflow_run_artifacts', { ...repo, run_id: 9001 });
    expect(out.text).toBe('2 artifacts of workflow run 9001 in acme/widgets:\n31 coverage · 2 KiB · expires 2025-01-01 00:10Z\n32 old-build · 10 bytes · expired');
  });
});

describe('job logs', () => {
  it('finds the failed job of a 150-job run across pages, and filters its lines on the server', async () => {
    const out = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9100, pattern: 'error|warning' });
    expect(out.text).toBe(
      `${storageNote()}\n` +
        'Logs of workflow run 9100 in acme/widgets:\n== job 7140 test (node 140) (completed/failure): last 3 of 3 lines matching "error|warning" (of 4 lines)\n2: Error: node 140 broke\n3: warning: flaky\n4: error: exit 1',
    );
  });

  it('picks a job by name, whatever its outcome, exactly before by substring', async () => {
    const byName = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, job_name: 'BUILD' });
    expect(byName.text).toBe(`${storageNote()}\nLogs of workflow run 9001 in acme/widgets:\n== job 501 build (completed/success): last 1 of 1 lines\nbuild ok`);
    const missing = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, job_name: 'deploy' });
    expect(missing).toMatchObject({ isError: true, text: 'Workflow run 9001 of acme/widgets has no job named "deploy". Its jobs: build, test.' });
    const wrongRun = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9100, job_id: 501 });
    expect(wrongRun).toMatchObject({ isError: true, text: 'Job 501 belongs to workflow run 9001, not 9100: call again with run_id: 9001.' });
  });

  it('bounds each job to its share of the answer and says what was cut', async () => {
    const small = await world.connect({ limits: { ...DEFAULT_LIMITS, maxOutputChars: 2000 } });
    const out = await small.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, tail_lines: 500 });
    expect(out.text.length).toBeLessThanOrEqual(2000);
    expect(out.text.startsWith(`${storageNote()}\n`)).toBe(true);
    expect(out.text.slice(storageNote().length + 1)).toMatch(/^Logs of workflow run 9001 in acme\/widgets:\n== job 502 test \(completed\/failure\): last \d+ of 501 lines\n\[\d+ earlier lines cut to keep the answer within 1300 characters: ask for fewer tail_lines or a pattern\]\n/);
    expect(out.text.endsWith('step line 500\nError: expected 2 to be 3')).toBe(true);
  });

  it('a log download that breaks off returns what arrived and says the end is missing', async () => {
    world.fake.storage.fault({ path: '/_blob-storage/job-logs/acme/widgets/502', partial: { then: 'cut', bytes: 4000 } });
    const out = await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, tail_lines: 2 });
    expect(out.isError).toBeFalsy();
    expect(out.text).toMatch(/: last 2 of \d+ lines\n\[the download of the log broke off before its end, after \d+ lines: the end of the log is missing; try again\]\n/);
    expect(out.text).not.toContain('Error: expected 2 to be 3');
  });
});

describe('re-running and cancelling', () => {
  it('rerun_failed_jobs starts a new attempt of a failed run; a running or successful run is refused with what to do', async () => {
    const out = await gh.callTool('rerun_failed_jobs', { ...repo, run_id: 9400 });
    expect(out.text).toBe('Re-running the failed jobs of workflow run 9400 in acme/widgets (attempt 2); list_workflow_jobs shows their progress.');
    const jobs = await gh.callTool('list_workflow_jobs', { ...repo, run_id: 9400 });
    expect(jobs.text).toContain('9401 lint: queued · attempt 2');
    const running = await gh.callTool('rerun_failed_jobs', { ...repo, run_id: 9200 });
    expect(running).toMatchObject({ isError: true, text: expect.stringMatching(/^Workflow run 9200 of acme\/widgets is in_progress, not completed: only a completed run's failed jobs can be re-run\./) });
    world.widgets.runs.push(run(9600, { conclusion: 'success', jobs: [] }));
    const green = await gh.callTool('rerun_failed_jobs', { ...repo, run_id: 9600 });
    expect(green).toMatchObject({ isError: true, text: 'Workflow run 9600 of acme/widgets succeeded: it has no failed jobs to re-run.' });
  });

  it('cancel_workflow_run cancels a queued run; a completed one is a conflict the model can read', async () => {
    const out = await gh.callTool('cancel_workflow_run', { ...repo, run_id: 9300 });
    expect(out.text).toMatch(/^Asked GitHub to cancel workflow run 9300 in acme\/widgets/);
    expect(world.widgets.runs.find((r) => r.id === 9300)).toMatchObject({ status: 'completed', conclusion: 'cancelled' });
    const again = await gh.callTool('cancel_workflow_run', { ...repo, run_id: 9300 });
    expect(again).toMatchObject({ isError: true, text: 'GitHub refused: Cannot cancel a workflow run that is completed (acme/widgets).' });
  });

  it("a token without Actions: write gets GitHub's 403 turned into the permission to grant", async () => {
    const carol = await world.connect({ token: TOKENS.carol });
    const out = await carol.callTool('cancel_workflow_run', { ...repo, run_id: 9200 });
    expect(out).toMatchObject({ isError: true, text: 'GitHub denied access to acme/widgets (403: Resource not accessible by personal access token). The token needs Actions: write on acme/widgets.' });
    expect(world.widgets.runs.find((r) => r.id === 9200)?.status).toBe('in_progress');
  });

  it('a fine-grained token without Actions: read sees a private repository\'s runs as not found (GitHub answers 404)', async () => {
    const fine = await world.connect({ token: FINE_GRAINED });
    const out = await fine.callTool('list_workflow_jobs', { owner: 'acme', repo: 'secret', run_id: 9500 });
    expect(out).toMatchObject({ isError: true, text: expect.stringMatching(/^Not found: workflow run 9500 in acme\/secret\. Either it does not exist, or acme\/secret itself does not exist or is private and the token has no access to it/) });
  });

  it('with --repos, a write outside the allowlist never leaves the server', async () => {
    const limited = await world.connect({ repos: [{ owner: 'acme', repo: 'widgets' }] });
    const before = world.fake.requests.length;
    const out = await limited.callTool('rerun_failed_jobs', { owner: 'acme', repo: 'secret', run_id: 9500 });
    expect(out).toMatchObject({ isError: true, text: expect.stringContaining('outside this server\'s repository allowlist') });
    expect(world.fake.requests.slice(before).filter((r) => r.path.includes('/acme/secret'))).toEqual([]);
  });
});
