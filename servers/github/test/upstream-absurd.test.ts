import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { linkHeader, notADiff, primaryLimitReset, retryAfter } from './fake-github/absurd.js';
import { redirect } from './fake-github/faults.js';
import { tokenOf } from './fake-github/index.js';
import { BIN, TOKENS, binEnv, startWorld, testConfig, type World } from './helpers.js';

/**
 * What a GitHub answering absurd values cannot make the server do (issue 28): follow a redirect
 * to another host, lock a token out with a limit from the year 3000, pass JSON or a web page off
 * as a diff, offer pages that do not exist, or read `..` as a sha. A scenario file: in process,
 * over stdio and over HTTP of the built bin; the command-line check spawns the bin itself.
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

const repo = { owner: 'acme', repo: 'widgets' };
const PULL_3 = '/repos/acme/widgets/pulls/3';

describe('redirects to another host', () => {
  it('a pull request diff redirected to another host is refused, with or without --repos, and nothing is read there', async () => {
    world.fake.storage.route('GET', '/evil.diff', () => ({ body: 'diff --git a/evil b/evil\n+planted\n' }));
    for (const session of [scoped, gh]) {
      const before = world.fake.storage.requests.length;
      world.fake.upstream.fault(redirect({ path: PULL_3 }, 302, `${world.fake.storage.url}/evil.diff`));
      const out = await session.callTool('get_pull_request_diff', { ...repo, pull_number: 3 });
      expect(out.isError, out.text).toBe(true);
      expect(out.text).toContain(`GitHub's answer to GET ${PULL_3} redirected (302) to another host, ${world.fake.storage.url}`);
      expect(out.text).not.toContain('planted');
      expect(world.fake.storage.requests.slice(before)).toHaveLength(0);
    }
  });

  it('a download GitHub hands to its storage is followed under --repos, without the token, and the answer names the storage', async () => {
    const before = world.fake.storage.requests.length;
    const out = await scoped.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, job_id: 502, tail_lines: 1 });
    expect(out.isError, out.text).toBe(false);
    expect(out.text).toBe(
      `Note: GitHub redirected this download to its storage at ${world.fake.storage.url}; what follows was read from there, without the token.\nLogs of workflow run 9001 in acme/widgets:\n== job 502 test (completed/failure): last 1 of 501 lines\nError: expected 2 to be 3`,
    );
    const fetched = world.fake.storage.requests.slice(before);
    expect(fetched).toHaveLength(1);
    expect(tokenOf(fetched[0]!)).toBeUndefined();
  });

  it('a storage download that redirects on to yet another host is followed only as a download, and a write never', async () => {
    // The job log's storage answer is itself a redirect to a path on the API host outside the allowlist.
    world.fake.storage.route('GET', '/hop', () => ({ status: 302, headers: { location: `${world.fake.apiUrl}/repos/acme/secret/contents/plans.md` }, body: '' }));
    world.fake.upstream.fault(redirect({ path: '/repos/acme/widgets/actions/jobs/502/logs' }, 302, `${world.fake.storage.url}/hop`));
    const out = await scoped.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, job_id: 502 });
    expect(out.isError).toBe(true);
    expect(out.text).toContain("outside this server's repository allowlist");
    expect(out.text).not.toContain('Top secret');
  });
});

describe('absurd rate-limit values', () => {
  const CASES: { what: string; fault: (path: string) => ReturnType<typeof retryAfter>; received: string; wait: RegExp }[] = [
    { what: 'x-ratelimit-reset in the year 3000', fault: (path) => primaryLimitReset({ path }, '32503680000'), received: 'x-ratelimit-reset "32503680000" asks for more than an hour', wait: /Retry in (?:60 minutes|1 hour)/ },
    { what: 'x-ratelimit-reset that is not a number', fault: (path) => primaryLimitReset({ path }, 'tomorrow'), received: 'x-ratelimit-reset "tomorrow" is not a wait this server understands', wait: /Retry in (?:60 seconds|1 minute)/ },
    { what: 'a negative x-ratelimit-reset', fault: (path) => primaryLimitReset({ path }, '-5'), received: 'x-ratelimit-reset "-5" is not a wait', wait: /Retry in (?:60 seconds|1 minute)/ },
    { what: 'retry-after: 1e308', fault: (path) => retryAfter({ path }, '1e308'), received: 'retry-after "1e308" is not a wait', wait: /Retry in (?:60 seconds|1 minute)/ },
    { what: 'retry-after: 99999999999', fault: (path) => retryAfter({ path }, '99999999999'), received: 'retry-after "99999999999" asks for more than an hour', wait: /Retry in (?:60 minutes|1 hour)/ },
    { what: 'a negative retry-after', fault: (path) => retryAfter({ path }, '-1'), received: 'retry-after "-1" is not a wait', wait: /Retry in (?:60 seconds|1 minute)/ },
    { what: 'retry-after: soon', fault: (path) => retryAfter({ path }, 'soon'), received: 'retry-after "soon" is not a wait', wait: /Retry in (?:60 seconds|1 minute)/ },
  ];
  for (const [index, { what, fault, received, wait }] of CASES.entries()) {
    it(`${what}: believed for an hour at most, and the answer says what was received`, async () => {
      // A token of its own per case: a limit, once learned, holds for the token.
      const token = `absurd-limit-token-${index}-0a1b2c3d`;
      world.fake.state.addToken(token, 'alice');
      const session = await world.connect({ token });
      world.fake.upstream.fault(fault('/repos/acme/widgets/issues/2'));
      const out = await session.callTool('get_issue', { ...repo, issue_number: 2 });
      expect(out.isError).toBe(true);
      expect(out.text).toContain(received);
      expect(out.text).toMatch(wait);
      expect(out.text).not.toMatch(/Infinity|NaN|undefined/);
      // The next call is refused before it leaves, with the same bounded wait.
      const before = world.fake.requests.length;
      const again = await session.callTool('get_issue', { ...repo, issue_number: 2 });
      expect(again.text).toMatch(wait);
      expect(world.fake.requests.length).toBe(before);
    });
  }
});

describe('a diff that is not a diff', () => {
  it('JSON or a web page answered for a diff is refused with what came instead', async () => {
    for (const [kind, named] of [
      ['json', 'JSON'],
      ['html', 'an HTML page'],
    ] as const) {
      world.fake.upstream.fault(notADiff({ path: PULL_3 }, kind));
      const out = await gh.callTool('get_pull_request_diff', { ...repo, pull_number: 3 });
      expect(out).toMatchObject({ isError: true, text: `GitHub answered 200 (${named} instead of the diff that was asked for, for GET ${PULL_3}). This is not a problem with your request; try again in a few seconds.` });
    }
    const real = await gh.callTool('get_pull_request_diff', { ...repo, pull_number: 3 });
    expect(real.text).toMatch(/^diff --git a\/src\/login\.ts b\/src\/login\.ts/);
  });
});

describe('Link headers that do not parse or lead nowhere', () => {
  const ISSUES = '/repos/acme/widgets/issues';
  const url = (page: string): string => `${world.fake.apiUrl}${ISSUES}?page=${page}&per_page=1`;
  const CASES: [string, (page: number) => string, string][] = [
    ['a next link that is not a URL', () => '<not a url>; rel="next"', ''],
    ['no angle brackets at all', () => 'page=2; rel=next', ''],
    ['page=abc', () => `<${url('abc')}>; rel="next"`, ''],
    ['a negative page', () => `<${url('-2')}>; rel="next"`, ''],
    ['an astronomically large page', () => `<${url('1e30')}>; rel="next", <${url('99999999999999999999')}>; rel="last"`, ''],
    ['a page far beyond any listing', () => `<${url('5000000')}>; rel="next"`, ''],
    ['next equal to the current page', (page) => `<${url(String(page))}>; rel="next"`, ''],
    ['next before the current page', (page) => `<${url(String(page - 1))}>; rel="next"`, ''],
    ['next skipping pages', (page) => `<${url(String(page + 5))}>; rel="next"`, ''],
    ['a good next with a garbage last', (page) => `<${url(String(page + 1))}>; rel="next", <${url('zz')}>; rel="last"`, '\nPage 2. More: call again with page: 3.'],
    ['a good next and last', (page) => `<${url(String(page + 1))}>; rel="next", <${url('9')}>; rel="last"`, '\nPage 2 of 9. More: call again with page: 3.'],
  ];
  for (const [what, link, footer] of CASES) {
    it(`${what}: ${footer ? 'only the next whole page is offered' : 'no advice, and the page itself is shown'}`, async () => {
      const remove = world.fake.upstream.transform(linkHeader(ISSUES, link(2)));
      try {
        const out = await gh.callTool('list_issues', { ...repo, state: 'all', page: 2, per_page: 1 });
        expect(out.isError, out.text).toBe(false);
        expect(out.text).toContain('#');
        if (footer) expect(out.text.endsWith(footer), out.text).toBe(true);
        else expect(out.text).not.toContain('More:');
        expect(out.text).not.toMatch(/NaN|Infinity|undefined|e\+/);
      } finally {
        remove();
      }
    });
  }
});

describe('arguments that would name another path, odd numbers, read-only with only write tools', () => {
  it('. and .. (also percent-encoded) are refused as a sha or a workflow id, and nothing is sent', async () => {
    const before = world.fake.requests.length;
    for (const sha of ['..', '.', '%2e%2e', ' .. ']) {
      const out = await gh.callTool('get_commit', { ...repo, sha });
      expect(out.isError, sha).toBe(true);
      expect(out.text).toContain('must not be . or ..');
    }
    for (const workflow_id of ['..', '.', '%2E']) {
      const out = await gh.callTool('list_workflow_runs', { ...repo, workflow_id });
      expect(out.isError, workflow_id).toBe(true);
      expect(out.text).toContain('must not be . or ..');
    }
    expect(world.fake.requests.length).toBe(before);
  });

  it('a number past the safe integers is refused, not rounded to another issue', async () => {
    const before = world.fake.requests.length;
    const out = await gh.callTool('get_issue', { ...repo, issue_number: Number.MAX_SAFE_INTEGER + 2 });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('a whole number from 1 to 9007199254740991');
    expect(world.fake.requests.length).toBe(before);
  });

  it('--read-only with --tools naming only write tools is a usage error (exit 2) naming them; with a read tool too, a warning', () => {
    const env = { ...process.env, ...binEnv(testConfig(world.fake), TOKENS.alice), SUITE_LOG_LEVEL: 'info' };
    const refused = spawnSync(process.execPath, [BIN, '--read-only', '--tools', 'create_issue,merge_pull_request'], { env, encoding: 'utf8', timeout: 20_000, input: '' });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toContain('--read-only removes every tool --tools names (create_issue, merge_pull_request change things on GitHub)');
    const warned = spawnSync(process.execPath, [BIN, '--read-only', '--tools', 'create_issue,get_issue'], { env, encoding: 'utf8', timeout: 20_000, input: '' });
    expect(warned.stderr).toContain('--read-only removes create_issue from --tools: it changes things on GitHub.');
    expect(warned.status).not.toBe(2);
  });
});
