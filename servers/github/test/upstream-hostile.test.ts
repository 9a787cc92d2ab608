import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { echoCredentials, hiddenLeft, nullFields, poisonStrings, tokenExposures } from './fake-github/hostile.js';
import { tokenOf } from './fake-github/index.js';
import { DEFAULT_LIMITS } from '../src/server.js';
import { TOKENS, startWorld, type World } from './helpers.js';

/**
 * A hostile GitHub across the whole catalog (issue 28): every tool of every toolset, resource, prompt and
 * completion is called while the fake rewrites every answer. With the credential echo, no answer
 * (success or error) may show a token the server holds, in any form; with the poison, no answer
 * may show a hidden character, an HTML comment or an image URL, whatever field it came in. Tools
 * are taken from tools/list, so a tool added later without an example here fails this file.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
  // What the opt-in toolsets read, so that their answers have fields for the fake to rewrite:
  // workflows, a run's artifacts and failed steps, and a sub-issue of #1 (#4; #5 is added and removed).
  const s = world.fake.state;
  world.widgets.workflows = [{ id: 77, name: 'CI', file: 'ci.yml', state: 'active' }];
  world.widgets.runs[0]!.artifacts = [{ id: 31, name: 'coverage', sizeInBytes: 2048, expired: false, createdAt: s.now() }];
  world.widgets.runs[0]!.jobs[1]!.steps = [{ number: 1, name: 'Run tests', status: 'completed', conclusion: 'failure' }];
  world.widgets.issues[0]!.subIssueIds = [s.addIssue(world.widgets, { title: 'Reproduce the crash', body: 'On a clean install.', author: 'bob' }).id];
  s.addIssue(world.widgets, { title: 'Write a test', body: 'For the crash.', author: 'bob' });
});
afterAll(() => world.close());

const repo = { owner: 'acme', repo: 'widgets' };

/** Fresh workflow runs for one pass: a failed one to re-run and a queued one to cancel (each pass changes them). */
function freshRuns(): { failed: number; queued: number } {
  const base = world.widgets.runs[0]!;
  const next = Math.max(...world.widgets.runs.map((r) => r.id)) + 1;
  const job = (id: number, conclusion: 'failure' | null) => ({ id, name: 'test', status: conclusion ? ('completed' as const) : ('queued' as const), conclusion, log: 'Error: expected 2 to be 3\n' });
  world.widgets.runs.push(
    { ...base, id: next, status: 'completed', conclusion: 'failure', artifacts: [], jobs: [job(next * 10, 'failure')] },
    { ...base, id: next + 1, status: 'queued', conclusion: null, artifacts: [], jobs: [job((next + 1) * 10, null)] },
  );
  return { failed: next, queued: next + 1 };
}

/** One call per tool, reads first, then writes (each run names what it creates after `tag`). */
function examples(tag: string, trunkSha: string, runs: { failed: number; queued: number }): [string, Record<string, unknown>][] {
  return [
    ['get_me', {}],
    ['get_file_contents', { ...repo, path: 'README.md' }],
    ['search_repositories', { q: 'widgets' }],
    ['list_branches', repo],
    ['list_tags', repo],
    ['list_commits', repo],
    ['get_commit', { ...repo, sha: trunkSha }],
    ['list_releases', repo],
    ['get_latest_release', repo],
    ['search_code', { q: 'widget' }],
    ['get_issue', { ...repo, issue_number: 1 }],
    ['list_issues', { ...repo, state: 'all' }],
    ['search_issues', { q: 'repo:acme/widgets crash' }],
    ['list_issue_comments', { ...repo, issue_number: 1 }],
    ['list_labels', repo],
    ['list_sub_issues', { ...repo, issue_number: 1 }],
    ['get_pull_request', { ...repo, pull_number: 3 }],
    ['list_pull_requests', { ...repo, state: 'all' }],
    ['search_pull_requests', { q: 'repo:acme/widgets login' }],
    ['get_pull_request_files', { ...repo, pull_number: 3 }],
    ['get_pull_request_diff', { ...repo, pull_number: 3 }],
    ['get_pull_request_status', { ...repo, pull_number: 3 }],
    ['get_pull_request_reviews', { ...repo, pull_number: 3 }],
    ['get_pull_request_comments', { ...repo, pull_number: 3 }],
    ['search_users', { q: 'alice' }],
    ['list_workflows', repo],
    ['list_workflow_runs', repo],
    ['list_workflow_jobs', { ...repo, run_id: 9001 }],
    ['get_workflow_run_logs', { ...repo, run_id: 9001, failed_only: false }],
    ['get_workflow_run_logs', { ...repo, run_id: 9001, job_name: 'test', pattern: 'error|line 1' }],
    ['list_workflow_run_artifacts', { ...repo, run_id: 9001 }],
    ['list_code_scanning_alerts', repo],
    ['get_code_scanning_alert', { ...repo, alert_number: 1 }],
    ['list_dependabot_alerts', repo],
    ['get_dependabot_alert', { ...repo, alert_number: 1 }],
    ['list_secret_scanning_alerts', repo],
    ['get_secret_scanning_alert', { ...repo, alert_number: 1 }],
    ['list_discussions', repo],
    ['get_discussion', { ...repo, discussion_number: 100 }],
    ['list_discussion_categories', repo],
    ['list_review_threads', { ...repo, pull_number: 3 }],
    ['list_notifications', { all: true }],
    ['create_issue', { ...repo, title: `Echo ${tag}`, body: 'Body.' }],
    ['add_issue_comment', { ...repo, issue_number: 2, body: `Comment ${tag}` }],
    ['update_issue', { ...repo, issue_number: 2, title: `Add a blue widget ${tag}` }],
    ['create_branch', { ...repo, branch: `echo/${tag}` }],
    ['create_or_update_file', { ...repo, path: `notes/${tag}.md`, content: 'Notes.\n', message: `Add notes ${tag}`, branch: `echo/${tag}` }],
    ['push_files', { ...repo, branch: `echo/${tag}`, files: [{ path: `pushed/${tag}.md`, content: 'Pushed.\n' }], message: `Push ${tag}` }],
    ['delete_file', { ...repo, path: `notes/${tag}.md`, message: `Remove notes ${tag}`, branch: `echo/${tag}` }],
    ['create_pull_request', { ...repo, title: `PR ${tag}`, head: `echo/${tag}`, body: 'Please.' }],
    ['create_pull_request_review', { ...repo, pull_number: 3, event: 'COMMENT', body: `Review ${tag}` }],
    ['update_pull_request_branch', { ...repo, pull_number: 3 }],
    ['merge_pull_request', { ...repo, pull_number: 3 }],
    ['create_repository', { name: `echo-${tag}` }],
    ['fork_repository', { owner: 'mallory', repo: 'tools' }],
    ['add_sub_issue', { ...repo, issue_number: 1, sub_issue_number: 5 }],
    ['remove_sub_issue', { ...repo, issue_number: 1, sub_issue_number: 5 }],
    ['rerun_failed_jobs', { ...repo, run_id: runs.failed }],
    ['cancel_workflow_run', { ...repo, run_id: runs.queued }],
    ['create_discussion', { ...repo, category: 'General', title: `Discussion ${tag}`, body: 'Body.' }],
    ['add_discussion_comment', { ...repo, discussion_number: 100, body: `Comment ${tag}` }],
    ['create_pending_pull_request_review', { ...repo, pull_number: 3 }],
    ['add_pending_review_comment', { ...repo, pull_number: 3, path: 'src/login.ts', body: `Line ${tag}`, line: 1 }],
    ['submit_pending_pull_request_review', { ...repo, pull_number: 3, event: 'COMMENT' }],
    ['create_pending_pull_request_review', { ...repo, pull_number: 3 }],
    ['delete_pending_pull_request_review', { ...repo, pull_number: 3 }],
    ['resolve_review_thread', { ...repo, pull_number: 3, thread_id: 'PRRT_1', resolved: tag.length % 2 === 0 }],
    ['update_security_alert', { ...repo, kind: 'dependabot', alert_number: 1, state: 'dismissed', reason: 'tolerable_risk', comment: `Accepted ${tag}` }],
    ['update_security_alert', { ...repo, kind: 'dependabot', alert_number: 1, state: 'open' }],
  ];
}

/** Calls that fail on GitHub's side: their error results pass the same checks. */
const FAILURES: [string, Record<string, unknown>][] = [
  ['get_issue', { ...repo, issue_number: 999 }],
  ['get_file_contents', { ...repo, path: 'no/such/file.md' }],
  ['get_pull_request_diff', { ...repo, pull_number: 998 }],
  ['create_issue', { owner: 'acme', repo: 'secret', title: 'No access' }],
];

/** Everything a client is shown of one call (text, resource links, structured content), for the checks. */
interface Shown {
  what: string;
  text: string;
  isError: boolean;
  /** A read that must work on a hostile answer (writes and FAILURES may fail). */
  mustWork: boolean;
}

/** Every tool of the catalog once (with FAILURES), every resource form, both prompts, completions. */
async function everything(session: TestSession, tag: string): Promise<Shown[]> {
  const listed = await session.toolNames();
  const calls = examples(tag, world.widgets.refs.get('heads/trunk')!, freshRuns());
  const missing = listed.filter((name) => !calls.some(([tool]) => tool === name));
  expect(missing, 'every listed tool needs an example in this file').toEqual([]);
  const shown: Shown[] = [];
  const writes = new Set(calls.slice(calls.findIndex(([name]) => name === 'create_issue')).map(([name]) => name));
  for (const [index, [name, args]] of [...calls, ...FAILURES].entries()) {
    const out = await session.callTool(name, args);
    shown.push({ what: `${name} ${JSON.stringify(args)}`, text: JSON.stringify([out.content, out.structured ?? null]), isError: out.isError, mustWork: index < calls.length && !writes.has(name) });
  }
  for (const uri of ['repo://acme/widgets/contents/README.md', 'repo://acme/widgets/contents/assets/logo.png', 'repo://acme/widgets/contents/src', 'repo://acme/widgets/refs/trunk/contents/docs/hidden.md']) {
    const out = await session.readResource(uri);
    shown.push({ what: uri, text: JSON.stringify(out.contents), isError: false, mustWork: true });
  }
  for (const name of ['issue-to-fix', 'review-pull-request']) {
    const args = name === 'issue-to-fix' ? { ...repo, issue_number: '1' } : { ...repo, pull_number: '3' };
    const out = await session.getPrompt(name, args);
    shown.push({ what: `prompt ${name}`, text: JSON.stringify(out.messages), isError: false, mustWork: true });
  }
  const completion = await session.complete({ template: 'repo://{owner}/{repo}/refs/{ref}/contents/{+path}' }, 'ref', '', repo);
  shown.push({ what: 'complete ref', text: JSON.stringify(completion.values), isError: false, mustWork: true });
  return shown;
}

describe('a GitHub that echoes the credential back', () => {
  it('no answer of any tool, resource, prompt or completion shows a token the server holds, in any form', async () => {
    // The session acts with bob's token; the operator's token (alice's) is held too.
    const session = await world.connect({ token: TOKENS.bob });
    const remove = world.fake.upstream.transform(echoCredentials);
    let shown: Shown[];
    try {
      shown = await everything(session, 'echo');
    } finally {
      remove();
    }
    for (const { what, text } of shown) {
      for (const token of [TOKENS.bob, TOKENS.alice]) expect(tokenExposures(text, token), `${what}: ${text}`).toEqual([]);
    }
    // The test can fail: the echo reached the answers, and was redacted there.
    const redacted = shown.filter((s) => s.text.includes('[redacted]'));
    expect(redacted.length).toBeGreaterThan(shown.length / 2);
    for (const name of ['get_file_contents', 'get_pull_request_diff', 'get_issue', 'list_branches', 'get_pull_request_files', 'repo://acme/widgets/contents/README.md', 'prompt issue-to-fix']) {
      expect(redacted.some((s) => s.what.startsWith(name)), name).toBe(true);
    }
    // The fake saw bob's token on the API (so there was something to echo).
    expect(world.fake.tokensSeen().filter((t) => t === TOKENS.bob).length).toBeGreaterThan(40);
  });

  it('with a token per owner (--token-for), no answer shows any of them, whichever token the call sent', async () => {
    // Requests on acme go out with bob's token, on mallory with mallory's, the rest with alice's.
    const session = await world.connect({ token: TOKENS.alice, ownerTokens: { acme: TOKENS.bob, mallory: TOKENS.mallory } });
    const from = world.fake.requests.length;
    const remove = world.fake.upstream.transform(echoCredentials);
    let shown: Shown[];
    try {
      shown = await everything(session, 'owners');
      // mallory's repository, read with mallory's token (the catalog above only forks it).
      for (const [name, args] of [['get_file_contents', { owner: 'mallory', repo: 'tools', path: 'x.sh' }], ['list_branches', { owner: 'mallory', repo: 'tools' }]] as const) {
        const out = await session.callTool(name, args);
        shown.push({ what: `${name} ${JSON.stringify(args)}`, text: JSON.stringify([out.content, out.structured ?? null]), isError: out.isError, mustWork: true });
      }
    } finally {
      remove();
    }
    for (const { what, text } of shown) {
      for (const token of [TOKENS.alice, TOKENS.bob, TOKENS.mallory]) expect(tokenExposures(text, token), `${what}: ${text}`).toEqual([]);
    }
    // Each owner's token went out (so the fake had each to echo), and the echo reached the answers.
    const sent = new Set(world.fake.requests.slice(from).map(tokenOf));
    expect([TOKENS.alice, TOKENS.bob, TOKENS.mallory].filter((token) => !sent.has(token))).toEqual([]);
    expect(shown.filter((s) => s.text.includes('[redacted]')).length).toBeGreaterThan(shown.length / 2);
    for (const name of ['get_file_contents {"owner":"mallory"', 'get_me', 'list_code_scanning_alerts']) {
      expect(shown.some((s) => s.what.startsWith(name) && s.text.includes('[redacted]')), name).toBe(true);
    }
  });

  it('a redirect whose Location carries the token shows it nowhere', async () => {
    const session = await world.connect({ token: TOKENS.bob });
    world.fake.upstream.fault({
      path: '/repos/acme/widgets/issues/2',
      response: { status: 302, headers: { location: `/repos/acme/widgets/issues/2?access_token=${TOKENS.bob}` }, json: { message: `Moved; use token ${TOKENS.bob}` } },
    });
    const out = await session.callTool('get_issue', { ...repo, issue_number: 2 });
    expect(tokenExposures(JSON.stringify(out.content), TOKENS.bob)).toEqual([]);
  });
});

describe('a token where a cap would cut it', () => {
  /** Any 8 characters in a row of the token: what half a token would show. */
  const pieces = (token: string): string[] => Array.from({ length: token.length - 7 }, (_, i) => token.slice(i, i + 8));

  it('a diff or a log line capped in the middle of an echoed token shows no piece of it', async () => {
    const session = await world.connect({ token: TOKENS.bob });
    const diffChars = DEFAULT_LIMITS.maxDiffChars;
    world.fake.upstream.fault({ path: '/repos/acme/widgets/pulls/3', response: { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `diff --git a/x b/x\n+${'x'.repeat(diffChars - 30)}${TOKENS.bob}${'y'.repeat(100)}\n` } });
    const diff = await session.callTool('get_pull_request_diff', { ...repo, pull_number: 3 });
    expect(diff.text).toContain('[truncated:');
    world.fake.storage.fault({ path: /job-logs/, response: { status: 200, body: `${'z'.repeat(1990)}${TOKENS.bob}${'w'.repeat(50)}\n` } });
    const log = await session.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, job_id: 502 });
    expect(log.text).toContain('[line truncated]');
    for (const text of [diff.text, log.text]) {
      expect(pieces(TOKENS.bob).filter((piece) => text.includes(piece))).toEqual([]);
    }
  });
});

describe('a token of another account where a cap would cut it', () => {
  const pieces = (token: string): string[] => Array.from({ length: token.length - 7 }, (_, i) => token.slice(i, i + 8));

  it("an answer to a request sent with one owner's token, cut in the middle of another owner's token, shows no piece of it", async () => {
    // acme's requests go out with bob's token; the answer carries mallory's (another owner's) at the cap.
    const session = await world.connect({ token: TOKENS.alice, ownerTokens: { acme: TOKENS.bob, mallory: TOKENS.mallory } });
    const diffChars = DEFAULT_LIMITS.maxDiffChars;
    world.fake.upstream.fault({ path: '/repos/acme/widgets/pulls/3', response: { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `diff --git a/x b/x\n+${'x'.repeat(diffChars - 30)}${TOKENS.mallory}${'y'.repeat(100)}\n` } });
    const from = world.fake.requests.length;
    const diff = await session.callTool('get_pull_request_diff', { ...repo, pull_number: 3 });
    expect(world.fake.requests.slice(from).map(tokenOf)).toContain(TOKENS.bob);
    expect(diff.text).toContain('[truncated:');
    expect(pieces(TOKENS.mallory).filter((piece) => diff.text.includes(piece))).toEqual([]);
  });
});

describe('a GitHub whose every string field carries hidden characters', () => {
  it('no answer of any tool, resource, prompt or completion shows a hidden character, an HTML comment or an image URL', async () => {
    const session = await world.connect();
    const remove = world.fake.upstream.transform(poisonStrings);
    let shown: Shown[];
    try {
      shown = await everything(session, 'poison');
    } finally {
      remove();
    }
    for (const { what, text } of shown) {
      // docs/hidden.md is a file: its contents are shown exactly, as the README says.
      if (what.includes('docs/hidden.md')) continue;
      expect(hiddenLeft(text), what).toEqual([]);
    }
    // The reads worked on the poisoned answers (so their fields reached the rendering).
    const readsFailed = shown.filter((s) => s.isError && s.mustWork);
    expect(readsFailed.map((s) => `${s.what}: ${s.text.slice(0, 300)}`)).toEqual([]);
  });
});

describe('a GitHub that answers null for every field it may leave out', () => {
  it('no answer prints undefined, NaN, Infinity or null, and no call fails unexpectedly', async () => {
    const session = await world.connect();
    const remove = world.fake.upstream.transform(nullFields);
    let shown: Shown[];
    try {
      shown = await everything(session, 'sparse');
    } finally {
      remove();
    }
    const odd = shown.filter((s) => /\b(?:undefined|NaN|Infinity|null)\b|unexpectedly/.test(s.text.replace(/,null\]$/, ']').replace(/\/dev\/null/g, '')));
    expect(odd.map((s) => `${s.what}: ${s.text.slice(0, 600)}`)).toEqual([]);
  });
});
