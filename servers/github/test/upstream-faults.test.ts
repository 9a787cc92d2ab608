import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { badGateway, connectionReset, cutOffBody, emptyBody, htmlPage, malformedJson, primaryLimit, redirect, secondaryLimit, stalledBody, tooManyRequests } from './fake-github/faults.js';
import { tokenOf } from './fake-github/index.js';
import { TOKENS, startWorld, testConfig, type World } from './helpers.js';

/**
 * What a failing or hostile GitHub cannot make the server do (issue 18): follow a redirect out of
 * the allowlist or with a write, take a broken body for an answer, repeat a write, or send
 * requests while a rate limit is known to be in force. Through the protocol, against the fake's
 * real HTTP. The request layer is the same over every transport, so this file runs in-process;
 * what differs over HTTP (limits shared by the sessions of one server) is tested at its end.
 */

let world: World;
let gh: TestSession;
let scoped: TestSession;
beforeAll(async () => {
  world = await startWorld();
  gh = await world.connect();
  scoped = await world.connect({ repos: [{ owner: 'acme', repo: 'widgets' }] });
});
afterAll(() => world.close());

const since = (before: number) => world.fake.requests.slice(before);
const ISSUE_2 = '/repos/acme/widgets/issues/2';

describe('redirects', () => {
  it('with --repos, a read redirected to another repository by name is not followed, and the result says so', async () => {
    const before = world.fake.requests.length;
    world.fake.upstream.fault(redirect({ path: ISSUE_2 }, 301, `${world.fake.apiUrl}/repos/acme/secret/issues/1`));
    const out = await scoped.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(out).toMatchObject({
      isError: true,
      text: `GitHub redirected the request for acme/widgets (/repos/acme/widgets/issues/2) (301) to acme/secret (/repos/acme/secret/issues/1), which is outside this server's repository allowlist (--repos acme/widgets), so it was not followed. If the repository was renamed or transferred, ask the operator to allow its new name.`,
    });
    expect(since(before).map((r) => r.path)).toEqual([ISSUE_2]);
  });

  it('with --repos, a read redirected to /repositories/ID/... is not followed (the allowlist cannot check an id)', async () => {
    const secret = world.fake.state.repo('acme', 'secret')!;
    for (const status of [302, 307, 308] as const) {
      const before = world.fake.requests.length;
      world.fake.upstream.fault(redirect({ path: '/repos/acme/widgets/contents/README.md' }, status, `/repositories/${secret.id}/contents/plans.md`));
      const out = await scoped.callTool('get_file_contents', { owner: 'acme', repo: 'widgets', path: 'README.md' });
      expect(out.isError, String(status)).toBe(true);
      expect(out.text).toContain(`(${status}) to /repositories/${secret.id}/contents/plans.md, a repository named only by its numeric id`);
      expect(out.text).not.toContain('Top secret');
      expect(since(before).map((r) => r.path)).toEqual(['/repos/acme/widgets/contents/README.md']);
    }
  });

  it('without --repos, a read redirected to /repositories/ID/... (a renamed repository) is followed with the token on the same origin', async () => {
    const widgets = world.widgets;
    const before = world.fake.requests.length;
    world.fake.upstream.fault(redirect({ path: ISSUE_2 }, 301, `/repositories/${widgets.id}/issues/2`));
    const out = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(out.isError, out.text).toBe(false);
    expect(out.text).toContain('Add a blue widget');
    // The answer says where it came from.
    expect(out.text).toMatch(
      new RegExp(`^Note: GitHub redirected acme/widgets \\(301\\) to /repositories/${widgets.id}/issues/2; the repository was probably renamed or transferred, and what follows comes from there\\.\n`),
    );
    const seen = since(before);
    expect(seen.map((r) => r.path)).toEqual([ISSUE_2, `/repositories/${widgets.id}/issues/2`]);
    expect(seen.map(tokenOf)).toEqual([TOKENS.alice, TOKENS.alice]);
  });

  it('a write is never redirected: not to another repository, not even to the same one, and nothing is sent there', async () => {
    for (const [status, target] of [
      [307, '/repos/acme/secret/issues'],
      [308, '/repos/acme/widgets/issues'],
      [301, `/repositories/${world.widgets.id}/issues`],
    ] as const) {
      for (const session of [gh, scoped]) {
        const issues = world.widgets.issues.length;
        const before = world.fake.requests.length;
        world.fake.upstream.fault(redirect({ method: 'POST', path: '/repos/acme/widgets/issues' }, status, target));
        const out = await session.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'Redirected' });
        expect(out.isError).toBe(true);
        expect(out.text).toMatch(new RegExp(`^GitHub answered the write POST /repos/acme/widgets/issues with a redirect \\(${status}\\) to .+\\. Writes never follow a redirect, so nothing was sent there, and GitHub did not make the change\\.`));
        expect(since(before).map((r) => `${r.method} ${r.path}`)).toEqual(['POST /repos/acme/widgets/issues']);
        expect(world.widgets.issues).toHaveLength(issues);
        expect(world.fake.state.repo('acme', 'secret')!.issues).toHaveLength(0);
      }
    }
  });

  it('a read redirected to another host is refused, with or without --repos: a first request would not go there', async () => {
    world.fake.storage.route('GET', '/mirror/user', () => ({ json: { login: 'mirror', id: 1, type: 'User', name: 'Mirrored', html_url: 'https://github.example/mirror' } }));
    for (const session of [gh, scoped]) {
      const before = world.fake.storage.requests.length;
      world.fake.upstream.fault(redirect({ path: '/user' }, 302, `${world.fake.storage.url}/mirror/user`));
      const out = await session.callTool('get_me');
      expect(out.isError, out.text).toBe(true);
      expect(out.text).toBe(
        `GitHub's answer to GET /user redirected (302) to another host, ${world.fake.storage.url}, which is not the GitHub API this server was started with; the redirect was not followed and nothing from there is shown. A first request would not go there either: only downloads GitHub hands to its storage (logs, archives) may leave ${world.fake.url}. If GitHub moved, check the server's --api-url or --github-host.`,
      );
      expect(out.text).not.toContain('@mirror');
      expect(world.fake.storage.requests.slice(before)).toHaveLength(0);
    }
  });
});

describe('2xx answers that are not what was asked for', () => {
  const CASES = [
    { what: 'an HTML page', fault: htmlPage, expected: 'GitHub answered 200 (an HTML page instead of JSON, for GET /repos/acme/widgets/issues/2). This is not a problem with your request; try again in a few seconds.' },
    { what: 'an empty body', fault: emptyBody, expected: 'GitHub answered 200 (an empty body instead of JSON, for GET /repos/acme/widgets/issues/2). This is not a problem with your request; try again in a few seconds.' },
    { what: 'malformed JSON', fault: malformedJson, expected: 'GitHub answered 200 (malformed JSON (35 bytes), for GET /repos/acme/widgets/issues/2). This is not a problem with your request; try again in a few seconds.' },
  ];
  for (const { what, fault, expected } of CASES) {
    it(`a read answered with ${what} is an isError naming it`, async () => {
      world.fake.upstream.fault(fault({ path: ISSUE_2 }));
      expect(await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 })).toMatchObject({ isError: true, text: expected });
    });
  }

  it('a write answered 201 with a body that is not JSON says the change was probably made, and how to check', async () => {
    const before = world.fake.requests.length;
    world.fake.upstream.fault(emptyBody({ method: 'POST', path: '/repos/acme/widgets/issues' }, 201));
    const out = await gh.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'Half answered' });
    expect(out).toMatchObject({
      isError: true,
      text: 'GitHub answered 201 with an empty body instead of JSON to the write POST /repos/acme/widgets/issues: the change was probably made, but its result could not be read. It was not repeated. Check before trying again: list_issues (newest first) shows whether the issue was created.',
    });
    expect(out.text).not.toContain('undefined');
    expect(since(before).filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('a body that stops arriving is covered by the time budget', async () => {
    const slow = await world.connect({ throttle: { ...testConfig(world.fake).throttle, requestTimeoutMs: 400 } });
    world.fake.upstream.fault(stalledBody({ path: ISSUE_2 }));
    const started = Date.now();
    const out = await slow.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out).toMatchObject({ isError: true, text: 'GitHub did not answer within 1 second. Try again, or narrow the request.' });
  });

  it('a body cut off by a closed connection is an isError after the retries of a read', async () => {
    world.fake.upstream.fault(cutOffBody({ path: ISSUE_2, times: 3 }));
    const out = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^GitHub answered 200 \(an answer that was cut off before it was complete \(the connection to 127\.0\.0\.1:\d+ was closed before the answer was complete \([A-Z_]+\)\), for GET \/repos\/acme\/widgets\/issues\/2\)\./);
  });

  it('a valid JSON answer of more than 8 MB is parsed, not mangled', async () => {
    const body = `Start of a long body. ${'word '.repeat(1_800_000)}`;
    const issue = { number: 2, title: 'Very long', state: 'open', user: { login: 'bob' }, labels: [], assignees: [], body, html_url: 'https://github.example/acme/widgets/issues/2', comments: 0, created_at: '2025-01-01T00:00:00Z', updated_at: '2025-01-01T00:00:00Z' };
    expect(JSON.stringify(issue).length).toBeGreaterThan(8 * 1024 * 1024);
    world.fake.upstream.fault({ path: ISSUE_2, response: { status: 200, json: issue } });
    const out = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(out.isError, out.text.slice(0, 300)).toBe(false);
    expect(out.text).toContain('acme/widgets#2: Very long');
    expect(out.text).toContain('Start of a long body.');
  });

  it('an answer over the cap (64 MiB by default; 1 MiB here) is refused with what to do, never cut and parsed', async () => {
    const capped = await world.connect({ limits: { ...testConfig(world.fake).limits, maxAnswerBytes: 1024 * 1024 } });
    world.fake.upstream.fault({ path: '/repos/acme/widgets/issues', response: { status: 200, json: Array.from({ length: 300 }, (_, i) => ({ number: i + 1, title: 'x'.repeat(4000) })) } });
    expect(await capped.callTool('list_issues', { owner: 'acme', repo: 'widgets' })).toMatchObject({
      isError: true,
      text: "GitHub's answer to GET /repos/acme/widgets/issues is larger than 1 MiB, more than this server reads. Narrow the request (fewer items per page, a narrower query or path).",
    });
  });
});

describe('writes are never repeated', () => {
  it('a 502 to create_issue is sent once, and the message says it may or may not have happened and how to check', async () => {
    const before = world.fake.requests.length;
    world.fake.upstream.fault(badGateway({ method: 'POST', path: '/repos/acme/widgets/issues', times: 3 }));
    const out = await gh.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'Once' });
    expect(out).toMatchObject({
      isError: true,
      text: 'GitHub did not confirm the write POST /repos/acme/widgets/issues (GitHub answered 502): it may or may not have been made, so it was not repeated. Check before trying again: list_issues (newest first) shows whether the issue was created.',
    });
    expect(since(before).filter((r) => r.method === 'POST')).toHaveLength(1);
    await drain();
  });

  it('a write still waiting for its answer when the time budget runs out says it may have been made', async () => {
    const slow = await world.connect({ throttle: { ...testConfig(world.fake).throttle, requestTimeoutMs: 400 } });
    world.fake.upstream.fault({ method: 'POST', path: '/repos/acme/widgets/issues/2/comments', delayMs: 3000 });
    const out = await slow.callTool('add_issue_comment', { owner: 'acme', repo: 'widgets', issue_number: 2, body: 'Slow.' });
    expect(out).toMatchObject({
      isError: true,
      text: 'GitHub did not confirm the write POST /repos/acme/widgets/issues/2/comments (no answer before the call ended: its time budget ran out, or it was cancelled): it may or may not have been made, so it was not repeated. Check before trying again: list_issue_comments shows whether the comment is there.',
    });
  });

  it('a connection reset on add_issue_comment is sent once, with the same advice', async () => {
    const before = world.fake.requests.length;
    world.fake.upstream.fault(connectionReset({ method: 'POST', path: '/repos/acme/widgets/issues/2/comments', times: 3 }));
    const out = await gh.callTool('add_issue_comment', { owner: 'acme', repo: 'widgets', issue_number: 2, body: 'Once.' });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(
      /^GitHub did not confirm the write POST \/repos\/acme\/widgets\/issues\/2\/comments \(the connection to 127\.0\.0\.1:\d+ was closed before the answer was complete \([A-Z_]+\)\): it may or may not have been made, so it was not repeated\. Check before trying again: list_issue_comments shows whether the comment is there\.$/,
    );
    expect(since(before).filter((r) => r.method === 'POST')).toHaveLength(1);
    await drain();
  });
});

/** Lets a fault with requests left over expire. */
async function drain(): Promise<void> {
  for (let i = 0; i < 3; i++) await fetch(`${world.fake.url}/drain`).catch(() => undefined);
}

describe('known rate limits', () => {
  /** A token of its own per test: a limit holds for every later request of its token in this process. */
  let tokens = 0;
  async function freshSessions(count: number, throttle: Partial<ReturnType<typeof testConfig>['throttle']> = {}): Promise<{ token: string; sessions: TestSession[] }> {
    tokens += 1;
    const token = `limit-token-${tokens}-0123456789`;
    world.fake.state.addToken(token, 'bob');
    const sessions = await Promise.all(Array.from({ length: count }, () => world.connect({ token, throttle: { ...testConfig(world.fake).throttle, ...throttle } })));
    return { token, sessions };
  }
  const sentWith = (token: string, before: number) => since(before).filter((r) => tokenOf(r) === token);

  it('after a 429 with retry-after, no request goes out for the token, in this session or another, and each result says when to retry', async () => {
    const { token, sessions } = await freshSessions(2);
    const before = world.fake.requests.length;
    world.fake.upstream.fault(tooManyRequests({ path: '/user' }, 60));
    expect((await sessions[0]!.callTool('get_me')).text).toBe('GitHub rate limit reached (secondary rate limit: too many requests in a short time). Retry in 60 seconds and try again.');
    for (const session of sessions) {
      const out = await session.callTool('list_issues', { owner: 'acme', repo: 'widgets' });
      expect(out.text).toMatch(/^GitHub rate limit reached \(secondary rate limit: too many requests in a short time; nothing was sent\)\. Retry in (59|60) seconds and try again\.$/);
    }
    expect(sentWith(token, before)).toHaveLength(1);
  });

  it('after a 403 with x-ratelimit-remaining: 0, reads of that counter wait for the reset; searches (their own counter) still go', async () => {
    const { token, sessions } = await freshSessions(1);
    const [session] = sessions as [TestSession];
    const before = world.fake.requests.length;
    world.fake.upstream.fault(primaryLimit({ path: ISSUE_2 }, Math.floor(Date.now() / 1000) + 600));
    expect((await session.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 })).text).toMatch(/^GitHub rate limit reached \(5000 requests per hour used up\)\. Retry in 10 minutes/);
    expect((await session.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'Not now' })).text).toMatch(/^GitHub rate limit reached \(5000 requests per hour used up; nothing was sent\)\. Retry in 10 minutes/);
    expect((await session.callTool('search_issues', { q: 'crash' })).isError).toBe(false);
    expect(sentWith(token, before).map((r) => r.path)).toEqual([ISSUE_2, '/search/issues']);
  });

  it('a secondary limit without retry-after holds for a minute', async () => {
    const { token, sessions } = await freshSessions(1);
    const before = world.fake.requests.length;
    world.fake.upstream.fault(secondaryLimit({ path: '/user' }));
    await sessions[0]!.callTool('get_me');
    const out = await sessions[0]!.callTool('get_me');
    expect(out.text).toMatch(/^GitHub rate limit reached \(secondary rate limit: too many requests in a short time; nothing was sent\)\. Retry in (59|60) seconds and try again\.$/);
    expect(sentWith(token, before)).toHaveLength(1);
  });

  it('a limit that lifts within the wait the server allows (3 s by default) is waited out, by later calls too, never sent early', async () => {
    const { token, sessions } = await freshSessions(2, { maxRateLimitWaitSeconds: 3 });
    const before = world.fake.requests.length;
    world.fake.upstream.fault(tooManyRequests({ path: '/user' }, 2));
    const [first, second] = await Promise.all([
      sessions[0]!.callTool('get_me'),
      // Sent while the limit is known: it waits for it too.
      new Promise<Awaited<ReturnType<TestSession['callTool']>>>((resolve) => setTimeout(() => resolve(sessions[1]!.callTool('list_issues', { owner: 'acme', repo: 'widgets' })), 300)),
    ]);
    expect(first.isError, first.text).toBe(false);
    expect(second.isError, second.text).toBe(false);
    const seen = sentWith(token, before);
    expect(seen).toHaveLength(3);
    const limited = seen[0]!.receivedAt;
    for (const later of seen.slice(1)) expect(later.receivedAt).toBeGreaterThanOrEqual(limited + 1900);
  });
});

describe('GitHub out of reach', () => {
  it('a refused connection is not retried (it would only wait): the cause comes back at once', async () => {
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    // A retry would wait 2 s first, past the 1.5 s budget, and the answer would be the timeout.
    const session = await world.connect({ apiUrl: `http://127.0.0.1:${closed}`, throttle: { ...testConfig(world.fake).throttle, retryBaseMs: 2000, requestTimeoutMs: 1500 } });
    expect((await session.callTool('get_me')).text).toBe(
      `GitHub could not be reached: 127.0.0.1:${closed} refused the connection (ECONNREFUSED): nothing accepts connections there; check the API URL and any proxy. This is not a problem with your request.`,
    );
  });
});

describe('arguments', () => {
  it('an optional argument sent as null is treated as absent (clients of the archived server send it)', async () => {
    const withNull = await gh.callTool('list_issues', { owner: 'acme', repo: 'widgets', state: null, labels: null });
    const without = await gh.callTool('list_issues', { owner: 'acme', repo: 'widgets' });
    expect(withNull.isError, withNull.text).toBe(false);
    expect(withNull.text).toBe(without.text);
    // A required one stays invalid.
    expect(await gh.callTool('list_issues', { owner: null, repo: 'widgets' })).toMatchObject({ isError: true, text: expect.stringContaining('owner') });
  });
});
