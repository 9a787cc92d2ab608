import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { TOOLS, buildServer } from '../src/server.js';
import { TOKENS, startWorld, testConfig, type World } from './helpers.js';

/**
 * Every tool, with arguments that succeed against the seeded fake (in this order: the writes build
 * on each other). The error matrix below runs every tool against every failure GitHub can answer.
 */
const SAMPLES: [string, Record<string, unknown>][] = [
  ['get_me', {}],
  ['get_file_contents', { owner: 'acme', repo: 'widgets', path: 'README.md' }],
  ['create_or_update_file', { owner: 'acme', repo: 'widgets', path: 'sweep.md', content: 'sweep', message: 'Sweep' }],
  ['delete_file', { owner: 'acme', repo: 'widgets', path: 'sweep.md', message: 'Unsweep' }],
  ['push_files', { owner: 'acme', repo: 'widgets', branch: 'trunk', files: [{ path: 'p.md', content: 'p' }], message: 'Push' }],
  ['search_repositories', { q: 'widgets' }],
  ['create_repository', { name: 'sweep-repo' }],
  ['fork_repository', { owner: 'mallory', repo: 'tools' }],
  ['create_branch', { owner: 'acme', repo: 'widgets', branch: 'sweep' }],
  ['list_branches', { owner: 'acme', repo: 'widgets' }],
  ['list_tags', { owner: 'acme', repo: 'widgets' }],
  ['list_commits', { owner: 'acme', repo: 'widgets' }],
  ['get_commit', { owner: 'acme', repo: 'widgets', sha: 'trunk' }],
  ['list_releases', { owner: 'acme', repo: 'widgets' }],
  ['get_latest_release', { owner: 'acme', repo: 'widgets' }],
  ['search_code', { q: 'widget' }],
  ['create_issue', { owner: 'acme', repo: 'widgets', title: 'Sweep' }],
  ['get_issue', { owner: 'acme', repo: 'widgets', issue_number: 1 }],
  ['list_issues', { owner: 'acme', repo: 'widgets' }],
  ['update_issue', { owner: 'acme', repo: 'widgets', issue_number: 2, body: 'Updated.' }],
  ['search_issues', { q: 'crash' }],
  ['add_issue_comment', { owner: 'acme', repo: 'widgets', issue_number: 2, body: 'Sweep.' }],
  ['list_issue_comments', { owner: 'acme', repo: 'widgets', issue_number: 1 }],
  ['list_labels', { owner: 'acme', repo: 'widgets' }],
  ['create_pull_request', { owner: 'acme', repo: 'widgets', title: 'Sweep', head: 'sweep' }],
  ['get_pull_request', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['list_pull_requests', { owner: 'acme', repo: 'widgets' }],
  ['search_pull_requests', { q: 'login' }],
  ['get_pull_request_files', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['get_pull_request_diff', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['get_pull_request_status', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['create_pull_request_review', { owner: 'acme', repo: 'widgets', pull_number: 3, event: 'COMMENT', body: 'Sweep.' }],
  ['get_pull_request_reviews', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['get_pull_request_comments', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['list_review_threads', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  // Before the merge, while #3 has a diff; in this order: a pending review (seeded below) deleted, another started, commented on, submitted.
  ['delete_pending_pull_request_review', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['create_pending_pull_request_review', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['add_pending_review_comment', { owner: 'acme', repo: 'widgets', pull_number: 3, path: 'src/login.ts', body: 'Sweep.', line: 1 }],
  ['submit_pending_pull_request_review', { owner: 'acme', repo: 'widgets', pull_number: 3, event: 'COMMENT' }],
  ['resolve_review_thread', { owner: 'acme', repo: 'widgets', pull_number: 3, thread_id: 'PRRT_1' }],
  ['update_pull_request_branch', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['merge_pull_request', { owner: 'acme', repo: 'widgets', pull_number: 3 }],
  ['search_users', { q: 'alice' }],
  ['list_workflows', { owner: 'acme', repo: 'widgets' }],
  ['list_workflow_runs', { owner: 'acme', repo: 'widgets' }],
  ['list_workflow_jobs', { owner: 'acme', repo: 'widgets', run_id: 9001 }],
  ['get_workflow_run_logs', { owner: 'acme', repo: 'widgets', run_id: 9001 }],
  ['list_workflow_run_artifacts', { owner: 'acme', repo: 'widgets', run_id: 9001 }],
  // In this order: the re-run leaves run 9001 queued, which cancel can then cancel.
  ['rerun_failed_jobs', { owner: 'acme', repo: 'widgets', run_id: 9001 }],
  ['cancel_workflow_run', { owner: 'acme', repo: 'widgets', run_id: 9001 }],
  ['list_sub_issues', { owner: 'acme', repo: 'widgets', issue_number: 1 }],
  // In this order: added, then removed again.
  ['add_sub_issue', { owner: 'acme', repo: 'widgets', issue_number: 1, sub_issue_number: 2 }],
  ['remove_sub_issue', { owner: 'acme', repo: 'widgets', issue_number: 1, sub_issue_number: 2 }],
  ['list_discussions', { owner: 'acme', repo: 'widgets' }],
  ['get_discussion', { owner: 'acme', repo: 'widgets', discussion_number: 100 }],
  ['list_discussion_categories', { owner: 'acme', repo: 'widgets' }],
  ['create_discussion', { owner: 'acme', repo: 'widgets', category: 'General', title: 'Sweep', body: 'Sweep.' }],
  ['add_discussion_comment', { owner: 'acme', repo: 'widgets', discussion_number: 100, body: 'Sweep.' }],
  ['list_code_scanning_alerts', { owner: 'acme', repo: 'widgets' }],
  ['get_code_scanning_alert', { owner: 'acme', repo: 'widgets', alert_number: 1 }],
  ['list_dependabot_alerts', { owner: 'acme', repo: 'widgets' }],
  ['get_dependabot_alert', { owner: 'acme', repo: 'widgets', alert_number: 1 }],
  ['list_secret_scanning_alerts', { owner: 'acme', repo: 'widgets' }],
  ['get_secret_scanning_alert', { owner: 'acme', repo: 'widgets', alert_number: 1 }],
  ['update_security_alert', { owner: 'acme', repo: 'widgets', kind: 'dependabot', alert_number: 1, state: 'open' }],
  ['list_notifications', {}],
];

/** What a leaked stack trace or exception looks like. */
const STACK_TRACE = /\n\s+at \S.*:\d+:\d+|HttpError|RequestError|TypeError|node_modules/;

let world: World;
let gh: TestSession;
beforeAll(async () => {
  world = await startWorld();
  // alice's pending review of #3, for delete_pending_pull_request_review's sample.
  world.widgets.reviews.push({ id: world.fake.state.id(), pull: 3, author: 'alice', state: 'PENDING', body: '', commitId: world.widgets.refs.get('heads/feature/login')!, submittedAt: world.fake.state.now() });
  gh = await world.connect();
});
afterAll(() => world.close());

function noLeak(text: string): void {
  for (const token of Object.values(TOKENS)) expect(text).not.toContain(token);
  expect(text).not.toMatch(STACK_TRACE);
}

describe('every tool', () => {
  it('has a sample (a new tool must be added to this matrix)', () => {
    expect(SAMPLES.map(([name]) => name).sort()).toEqual(buildServer(testConfig(world.fake), { toolsets: ['all'] }).toolNames.sort());
    expect(SAMPLES).toHaveLength(TOOLS.length);
  });

  it('succeeds with its sample against the fake GitHub', async () => {
    for (const [name, args] of SAMPLES) {
      const out = await gh.callTool(name, args);
      expect(out.isError, `${name}: ${out.text}`).toBe(false);
      noLeak(out.text);
    }
  });

  it('answers an unpaired surrogate in any string argument with an isError naming the argument, never an unexpected failure (found by the fuzzer)', async () => {
    for (const [name, args] of SAMPLES) {
      const strings = Object.entries(args).filter(([, value]) => typeof value === 'string');
      for (const [key, value] of strings) {
        const out = await gh.callTool(name, { ...args, [key]: `${value as string}\udc00` });
        // Refused by the argument's own pattern, or else by the check for well-formed text.
        expect(out, `${name}.${key}`).toMatchObject({ isError: true, text: expect.stringContaining(`Invalid arguments for ${name}: ${key}: `) });
      }
    }
  });

  /**
   * `response` is built each time its fault is armed: a rate limit's reset is a moment, and one
   * computed when this file loads would drift by however long the tests before it took.
   */
  const FAILURES: { what: string; response: () => { status: number; headers?: Record<string, string>; json: unknown }; expected: RegExp }[] = [
    { what: '404', response: () => ({ status: 404, json: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' } }), expected: /not found|does not exist/i },
    {
      what: '403 without a rate limit',
      response: () => ({ status: 403, headers: { 'x-accepted-github-permissions': 'metadata=read' }, json: { message: 'Resource not accessible by personal access token' } }),
      expected: /^GitHub denied access.*\(403: Resource not accessible by personal access token\)\. The token needs Metadata: read on /,
    },
    {
      what: '422',
      response: () => ({ status: 422, json: { message: 'Validation Failed', errors: [{ resource: 'Issue', field: 'title', code: 'missing_field' }], documentation_url: 'x' } }),
      expected: /^GitHub rejected the request as invalid: Validation Failed: Issue\.title is required\.$/,
    },
    {
      what: '502 (a read after its retries; a write never repeated)',
      response: () => ({ status: 502, json: { message: 'Server Error' } }),
      expected: /^GitHub answered 502\. This is not a problem with your request; try again in a few seconds\.$|^GitHub did not confirm the write (POST|PUT|PATCH|DELETE) \S+ \(GitHub answered 502\): it may or may not have been made, so it was not repeated\. Check before trying again: [^.]+\.$/,
    },
  ];

  for (const failure of FAILURES) {
    it(`answers ${failure.what} with an actionable isError, never a stack trace or a token`, async () => {
      for (const [name, args] of SAMPLES) {
        world.fake.upstream.fault({ times: 3, response: failure.response() });
        const out = await gh.callTool(name, args);
        expect(out.isError, `${name} should fail`).toBe(true);
        expect(out.text, name).toMatch(failure.expected);
        noLeak(out.text);
        // A tool that stopped at its first failed request leaves the fault armed: let it expire.
        await drain();
      }
    });
  }

  /**
   * A rate limit stops the token's requests until it lifts: the first tool meets GitHub's answer,
   * every later one is refused before anything is sent. Each limit on a token of its own, since
   * the limit then holds for the rest of this file.
   */
  const LIMITS: { what: string; token: string; spares?: RegExp; response: () => { status: number; headers: Record<string, string>; json: unknown }; expected: RegExp }[] = [
    {
      what: 'a primary rate limit',
      token: TOKENS.bob,
      response: () => ({
        status: 403,
        headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-limit': '5000', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3000) },
        json: { message: 'API rate limit exceeded for user ID 1.' },
      }),
      // Searches draw on GitHub's search counter and GraphQL tools (discussions, review threads, pending reviews) on its
      // GraphQL counter, which this answer (resource core) does not exhaust.
      spares: /^search_|discussion|review_thread|pending_/,
      // 2999 or 3000 seconds when the answer arrives (the reset is a whole second), rounded up.
      expected: /^GitHub rate limit reached \(5000 requests per hour used up(; nothing was sent)?\)\. Retry in 50 minutes and try again\.$/,
    },
    {
      what: 'a secondary rate limit',
      token: TOKENS.mallory,
      response: () => ({ status: 403, headers: { 'retry-after': '30' }, json: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' } }),
      // The wait counts down while the loop runs (seconds over stdio on a loaded machine), so any of the first ten seconds.
      expected: /^GitHub rate limit reached \(secondary rate limit: too many requests in a short time(; nothing was sent)?\)\. Retry in (2\d|30) seconds and try again\.$/,
    },
  ];

  for (const limit of LIMITS) {
    it(`after ${limit.what}, sends nothing more for the token until it lifts, and every tool says when to retry`, async () => {
      const limited = await world.connect({ token: limit.token });
      world.fake.upstream.fault({ path: '/user', response: limit.response() });
      const first = await limited.callTool('get_me');
      expect(first.text).toMatch(limit.expected);
      expect(first.text).not.toContain('nothing was sent');
      const before = world.fake.requests.length;
      for (const [name, args] of SAMPLES.filter(([name]) => !limit.spares?.test(name))) {
        const out = await limited.callTool(name, args);
        expect(out.isError, `${name} should fail`).toBe(true);
        expect(out.text, name).toMatch(limit.expected);
        expect(out.text, name).toContain('nothing was sent');
        noLeak(out.text);
      }
      expect(world.fake.requests.length, 'requests sent while the limit was in force').toBe(before);
    });
  }
});

/** Lets a fault with requests left over expire: three requests that no tool makes. */
async function drain(): Promise<void> {
  for (let i = 0; i < 3; i++) await fetch(`${world.fake.url}/drain`).catch(() => undefined);
}

describe('failures that need their own set-up', () => {
  it('404 on a private repository names it and explains that GitHub hides what the token cannot see', async () => {
    const out = await gh.callTool('list_issues', { owner: 'acme', repo: 'secret' });
    expect(out).toMatchObject({ isError: true, text: 'The repository acme/secret was not found, or it is private and the token has no access to it (GitHub answers 404 then). Check the owner and repo names.' });
  });

  it('a 403 without a permission header falls back to the permission the tool declares', async () => {
    world.fake.upstream.fault({ method: 'POST', response: { status: 403, json: { message: 'Must have admin rights to Repository.' } } });
    const out = await gh.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'x' });
    expect(out.text).toBe('GitHub denied access to acme/widgets (403: Must have admin rights to Repository). A fine-grained token needs "Issues: write" on acme/widgets; a classic token needs the repo scope.');
  });

  it('a bad token is a 401 that says what to fix, without the token', async () => {
    const bad = await world.connect({ token: 'expired-token-000000111111' });
    const out = await bad.callTool('get_me');
    expect(out.text).toBe(
      'GitHub rejected the token (401 Bad credentials): it is wrong, expired or revoked. Set a valid GITHUB_PERSONAL_ACCESS_TOKEN (over HTTP: send a valid token as this session\'s bearer token).',
    );
  });

  it('without a token, public reads work and writes say a token is needed', async () => {
    if (world.transport === 'http') {
      // Over HTTP there is no anonymous session: a client without a token is turned away before any call.
      await expect(world.connect({ token: undefined })).rejects.toThrow(/Unauthorized: a valid bearer token is required/);
      return;
    }
    const anonymous = await world.connect({ token: undefined });
    expect((await anonymous.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 })).isError).toBe(false);
    expect(world.fake.tokensSeen().at(-1)).toBeUndefined();
    const out = await anonymous.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'x' });
    expect(out.text).toBe('GitHub requires authentication for this request (401). Set GITHUB_PERSONAL_ACCESS_TOKEN (over HTTP: send a token as the bearer token).');
  });

  it('a token that GitHub echoes in an error message is redacted', async () => {
    world.fake.upstream.fault({ response: { status: 422, json: { message: `Validation Failed for ${TOKENS.alice}` } } });
    const out = await gh.callTool('get_me');
    expect(out.text).toBe('GitHub rejected the request as invalid: Validation Failed for [redacted].');
  });

  it('retries a 5xx of a read and succeeds when GitHub recovers', async () => {
    const before = world.fake.requests.length;
    world.fake.upstream.fault({ path: '/user', times: 2, response: { status: 503, json: { message: 'Service Unavailable' } } });
    const out = await gh.callTool('get_me');
    expect(out.isError).toBe(false);
    expect(world.fake.requests.slice(before).filter((r) => r.path === '/user')).toHaveLength(3);
  });

  it('a dropped connection, after the retries, says GitHub could not be reached', async () => {
    const before = world.fake.requests.length;
    world.fake.upstream.fault({ path: '/user', times: 3, reset: true });
    const out = await gh.callTool('get_me');
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^GitHub could not be reached: the connection to 127\.0\.0\.1:\d+ was closed before the answer was complete \([A-Z_]+\)\. This is not a problem with your request; try again in a few seconds\.$/);
    expect(world.fake.requests.slice(before).filter((r) => r.path === '/user')).toHaveLength(3);
  });

  it('a call that runs out of its time budget says so, and returns when the budget ends', async () => {
    const slow = await world.connect({ throttle: { ...testConfig(world.fake).throttle, requestTimeoutMs: 300 } });
    // GitHub holds the answer far longer than the budget, so the bound below leaves seconds for a loaded machine.
    world.fake.upstream.fault({ path: '/user', delayMs: 10_000 });
    const started = Date.now();
    const out = await slow.callTool('get_me');
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out).toMatchObject({ isError: true, text: 'GitHub did not answer within 1 second. Try again, or narrow the request.' });
  });

  it('a short rate limit is waited out once, then the call succeeds', async () => {
    // The call's time budget (retries and this wait included) is the default's, not the tests' 5 s: on a loaded
    // machine the up-to-2-second wait and the retry over stdio outran 5 s (two CI-like runs at load 13).
    const patient = await world.connect({ throttle: { ...testConfig(world.fake).throttle, maxRateLimitWaitSeconds: 3, requestTimeoutMs: 30_000 } });
    const before = world.fake.requests.length;
    // A reset 1 to 2 seconds ahead (GitHub's resets are whole seconds): the server waits until it has
    // passed. A reset of floor(now) would be over as soon as the second turned, and a retry at once would be right.
    const reset = Math.floor(Date.now() / 1000) + 2;
    world.fake.upstream.fault({
      path: '/user',
      response: { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) }, json: { message: 'API rate limit exceeded for user ID 1.' } },
    });
    const out = await patient.callTool('get_me');
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/^@alice/);
    // The read and its one retry, which reached GitHub only after the reset.
    const seen = world.fake.requests.slice(before).filter((r) => r.path === '/user');
    expect(seen).toHaveLength(2);
    expect(seen[1]!.receivedAt).toBeGreaterThanOrEqual(reset * 1000);
  });

  it('writes are spaced per token', async () => {
    const spaced = await world.connect({ throttle: { ...testConfig(world.fake).throttle, writeSpacingMs: 400 } });
    const started = Date.now();
    await Promise.all([1, 2, 3].map((i) => spaced.callTool('add_issue_comment', { owner: 'acme', repo: 'widgets', issue_number: 2, body: `spaced ${i}` })));
    expect(Date.now() - started).toBeGreaterThanOrEqual(750);
    expect(world.widgets.comments.filter((c) => c.body.startsWith('spaced '))).toHaveLength(3);
  });

  it("the fake's own rate limit answers as GitHub does, and the message says when it resets", async () => {
    // Carol's token: the limit then holds for the rest of this file.
    const limited = await world.connect({ token: TOKENS.carol });
    const reset = world.fake.exhaustRateLimit({ token: TOKENS.carol, resetInSeconds: 90 });
    try {
      const sent = Math.floor(Date.now() / 1000);
      const out = await limited.callTool('list_issues', { owner: 'acme', repo: 'widgets' });
      const answered = Math.floor(Date.now() / 1000);
      const seconds = /^GitHub rate limit reached \(5000 requests per hour used up\)\. Retry in (\d+) seconds and try again\.$/.exec(out.text)?.[1];
      expect(seconds, out.text).toBeDefined();
      // The server counts from the second its answer arrived, somewhere within the call.
      expect(Number(seconds)).toBeGreaterThanOrEqual(reset - answered);
      expect(Number(seconds)).toBeLessThanOrEqual(reset - sent);
    } finally {
      world.fake.restoreRateLimit();
    }
  });

  it('accepts null where GitHub sends null (deleted users, empty bodies, no milestone)', async () => {
    world.fake.state.addIssue(world.widgets, { title: 'Orphan', body: null, author: null });
    const number = world.widgets.issues.length;
    const out = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: number });
    expect(out.text).toContain(`acme/widgets#${number}: Orphan\nstate open · by @ghost`);
    expect(out.text).toMatch(/Body:\n\(no description\)$/);
  });
});

describe('a request the server refuses itself', () => {
  it('validates arguments before calling GitHub', async () => {
    const before = world.fake.requests.length;
    const out = await gh.callTool('get_issue', { owner: 'acme/evil', repo: 'widgets', issue_number: 0 });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('owner: not a GitHub user or organization name');
    expect(out.text).toContain('issue_number: a whole number from 1');
    expect(world.fake.requests.length).toBe(before);
  });
});
