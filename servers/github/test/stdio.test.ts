import { spawn } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolError, spawnServer, type SpawnedSession } from '@suite/test-kit';
import { startFakeGithub, tokenOf, type FakeGithub } from './fake-github/index.js';
import { BIN, TAG_TEXT, TOKENS, seed } from './helpers.js';

let fake: FakeGithub;
const sessions: SpawnedSession[] = [];

/**
 * The environment of a client config entry: the token and where GitHub is, and the other GITHUB_*
 * variables emptied so nothing inherited changes them (GITHUB_TOOLSETS is left alone: shared reads
 * an empty value as "no toolsets").
 */
function env(extra: Record<string, string> = {}): Record<string, string> {
  return { GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: TOKENS.alice, GITHUB_TOKEN: '', GITHUB_HOST: '', GITHUB_TOOLS: '', GITHUB_READ_ONLY: '', GITHUB_DYNAMIC_TOOLSETS: '', GITHUB_REPOS: '', GITHUB_LOCKDOWN_MODE: '', ...extra };
}

async function start(args: string[] = [], extra: Record<string, string> = {}): Promise<SpawnedSession> {
  const session = await spawnServer(BIN, ['--log-level', 'debug', ...args], { env: env(extra) });
  sessions.push(session);
  return session;
}

/** Runs the bin to completion (start-up failures) and returns its exit code and output. */
function run(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env(extra) }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr, stdout }));
    setTimeout(() => child.stdin.end(), 2000);
  });
}

beforeAll(async () => {
  fake = await startFakeGithub();
  seed(fake);
});
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  await fake.close();
});

describe('the built bin over stdio, against the fake GitHub', () => {
  it('serves the default toolsets and answers with the token of the environment', async () => {
    const gh = await start();
    expect(await gh.toolNames()).toHaveLength(37);
    const me = await gh.callTool('get_me');
    expect(me.text).toMatch(/^@alice · Alice Liddell/);
    const last = fake.requests.filter((r) => r.path === '/user').at(-1)!;
    expect(tokenOf(last)).toBe(TOKENS.alice);
    expect(last.headers['user-agent']).toMatch(/^suite-mcp-server-github\/\d+\.\d+\.\d+ /);
  });

  it('takes the token from GITHUB_TOKEN when GITHUB_PERSONAL_ACCESS_TOKEN is not set', async () => {
    const gh = await start([], { GITHUB_PERSONAL_ACCESS_TOKEN: '', GITHUB_TOKEN: TOKENS.bob });
    expect((await gh.callTool('get_me')).text).toMatch(/^@bob/);
  });

  it('reads, writes, sanitises and maps errors like the in-process server', async () => {
    const gh = await start();
    const issue = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 1 });
    expect(issue.text).toContain('The app crashes on start.');
    expect(issue.text).not.toContain(TAG_TEXT);
    const file = await gh.callTool('get_file_contents', { owner: 'acme', repo: 'widgets', path: 'docs/a b#c%d.md' });
    expect(file.content[1]).toEqual({ type: 'text', text: 'A file whose name needs encoding.\n' });
    const created = await gh.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'From the bin' });
    expect(created.text).toMatch(/^Created acme\/widgets#\d+: /);
    const missing = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 404 });
    expect(missing).toMatchObject({ isError: true, text: expect.stringMatching(/^Not found: issue #404 in acme\/widgets\./) });
    fake.exhaustRateLimit({ resetInSeconds: 600 });
    try {
      const limited = await gh.callTool('list_issues', { owner: 'acme', repo: 'widgets' });
      expect(limited.text).toMatch(/^GitHub rate limit reached \(5000 requests per hour used up\)\. Retry in 10 minutes and try again\.$/);
    } finally {
      fake.restoreRateLimit();
    }
    expect(gh.stderr()).toContain('GitHub API at http://127.0.0.1');
    expect(gh.stderr()).not.toContain(TOKENS.alice);
  });

  it('takes the selection from GITHUB_* variables: read-only wins, toolsets, dynamic', async () => {
    const readOnly = await start([], { GITHUB_READ_ONLY: '1', GITHUB_TOOLSETS: 'all' });
    const names = await readOnly.toolNames();
    expect(names).toHaveLength(41);
    expect(names).not.toContain('create_issue');
    const actions = await start([], { GITHUB_TOOLSETS: 'actions' });
    expect(await actions.toolNames()).toEqual(['list_workflows', 'list_workflow_runs', 'list_workflow_jobs', 'get_workflow_run_logs', 'list_workflow_run_artifacts', 'rerun_failed_jobs', 'cancel_workflow_run']);
    const dynamic = await start([], { GITHUB_DYNAMIC_TOOLSETS: '1' });
    expect(await dynamic.toolNames()).toEqual(['list_available_toolsets', 'get_toolset_tools', 'enable_toolset']);
    const tools = await start([], { GITHUB_TOOLS: 'get_me,list_notifications' });
    expect(await tools.toolNames()).toEqual(['get_me', 'list_notifications']);
  });

  it('takes the selection from flags, a flag winning over its variable, --read-only over --tools', async () => {
    const flags = await start(['--toolsets', 'context', '--tools', 'create_issue,list_notifications', '--read-only'], { GITHUB_TOOLSETS: 'issues', GITHUB_TOOLS: 'get_issue' });
    expect(await flags.toolNames()).toEqual(['get_me', 'list_notifications']);
    const error = await protocolError(flags.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'x' }));
    expect(error.message).toBe('Unknown tool: create_issue');
  });

  it('enforces --repos and --lockdown from the command line', async () => {
    const gh = await start(['--repos', 'acme/gadgets', '--lockdown']);
    const refused = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(refused.text).toMatch(/^The repository acme\/widgets is outside this server's repository allowlist \(--repos acme\/gadgets\)/);
    const allowed = await gh.callTool('get_file_contents', { owner: 'acme', repo: 'gadgets', path: 'README.md' });
    expect(allowed.isError).toBe(false);
  });

  it('talks to GitHub Enterprise Server under /api/v3, derived from GITHUB_HOST or --github-host', async () => {
    const ghes = await startFakeGithub({ basePath: '/api/v3' });
    try {
      seed(ghes);
      const host = `http://127.0.0.1:${new URL(ghes.url).port}`;
      const session = await start([], { GITHUB_API_URL: '', GITHUB_HOST: host });
      expect((await session.callTool('get_me')).text).toMatch(/^@alice/);
      expect((await session.callTool('get_file_contents', { owner: 'acme', repo: 'widgets', path: 'README.md' })).isError).toBe(false);
      expect(ghes.requests.map((r) => r.path)).toEqual(expect.arrayContaining(['/api/v3/user', '/api/v3/repos/acme/widgets/contents/README.md']));
      // The flag wins over the variable, which points at the other (github.com-shaped) fake here.
      const before = ghes.requests.length;
      const flagged = await start(['--github-host', host], { GITHUB_API_URL: '', GITHUB_HOST: fake.url });
      expect((await flagged.callTool('get_me')).text).toMatch(/^@alice/);
      expect(ghes.requests.slice(before).map((r) => r.path)).toEqual(['/api/v3/user']);
      // --api-url wins over both.
      const direct = await start(['--api-url', fake.apiUrl, '--github-host', host]);
      const requests = fake.requests.length;
      expect((await direct.callTool('get_me')).text).toMatch(/^@alice/);
      expect(fake.requests.slice(requests).map((r) => r.path)).toEqual(['/user']);
    } finally {
      await ghes.close();
    }
  });

  it('gives a call the time budget of --request-timeout, retries included', async () => {
    const gh = await start(['--request-timeout', '1']);
    // GitHub holds the answer far longer than the budget, so the bound below leaves seconds for a loaded machine.
    fake.upstream.fault({ path: '/user', delayMs: 10_000 });
    const started = Date.now();
    const out = await gh.callTool('get_me');
    expect(out).toMatchObject({ isError: true, text: 'GitHub did not answer within 1 second. Try again, or narrow the request.' });
    expect(Date.now() - started).toBeLessThan(6000);
  });
});

describe('start-up', () => {
  it('refuses plain http off the machine, with a usage error', async () => {
    const out = await run([], { GITHUB_API_URL: 'http://ghe.example.com/api/v3' });
    expect(out.code).toBe(2);
    expect(out.stderr).toBe("mcp-server-github: The API URL must use https:// (plain http is only accepted on loopback addresses): http://ghe.example.com\nRun 'mcp-server-github --help' for usage.\n");
  });

  it('in OAuth mode, refuses to start without a GitHub OAuth app, or with Redis and no shared sealing key; offers the flags in --help', async () => {
    const oauth = ['--http', '--auth-issuer', 'http://127.0.0.1:1', '--public-url', 'http://127.0.0.1:2/mcp'];
    const [noApp, noKey, outside, help] = await Promise.all([
      run(oauth, { GITHUB_OAUTH_CLIENT_ID: '', GITHUB_OAUTH_CLIENT_SECRET: '' }),
      run([...oauth, '--redis-url', 'redis://127.0.0.1:6379', '--redis-prefix', `gh-oauth-start-${process.pid}:`], { GITHUB_OAUTH_CLIENT_ID: 'Iv1.x', GITHUB_OAUTH_CLIENT_SECRET: 'app-secret', GITHUB_TOKEN_ENCRYPTION_KEY: '' }),
      run(['--github-oauth-client-id', 'Iv1.x']),
      run(['--help']),
    ]);
    expect(noApp.code).toBe(2);
    expect(noApp.stderr).toMatch(/OAuth mode needs a GitHub OAuth app: its id in --github-oauth-client-id \(GITHUB_OAUTH_CLIENT_ID\) and its secret in GITHUB_OAUTH_CLIENT_SECRET/);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/With --redis-url, every replica must seal users' GitHub tokens with the same key/);
    expect(noKey.stderr).not.toContain('app-secret');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/belong to OAuth mode/);
    expect(help.stdout).toMatch(/--auth-issuer/);
    expect(help.stdout).toMatch(/--github-oauth-client-id/);
    expect(help.stdout).toMatch(/GITHUB_OAUTH_CLIENT_SECRET/);
    expect(help.stdout).not.toMatch(/--auth-token/);
  });

  it('refuses a malformed --repos and a fallback with no token to fall back to', async () => {
    expect((await run(['--repos', 'just-an-owner'])).stderr).toMatch(/^mcp-server-github: --repos entries are owner\/repo or owner\/\*, got "just-an-owner"\./);
    const fallback = await run(['--http', '--allow-env-token-fallback'], { GITHUB_PERSONAL_ACCESS_TOKEN: '' });
    expect(fallback.code).toBe(2);
    expect(fallback.stderr).toMatch(/--allow-env-token-fallback needs GITHUB_PERSONAL_ACCESS_TOKEN/);
    const unknown = await run(['--toolsets', 'repos,gists']);
    expect(unknown.stderr).toMatch(/Unknown toolset: gists\. Available: context, repos, issues, pull_requests, users, actions, code_security, sub_issues, discussions, review_threads, notifications, all, default\./);
    const unknownTool = await run([], { GITHUB_TOOLS: 'get_me,delete_everything' });
    expect(unknownTool.code).toBe(2);
    expect(unknownTool.stderr).toMatch(/delete_everything/);
  });

  it('refuses a --request-timeout that is not a whole number of seconds from 1 to 600, and a malformed test seam', async () => {
    for (const value of ['0', '1.5', 'soon', '601']) {
      const out = await run(['--request-timeout', value]);
      expect(out.code, value).toBe(2);
      expect(out.stderr, value).toMatch(/^mcp-server-github: --request-timeout /);
    }
    const seam = await run([], { SUITE_GITHUB_TEST_TUNING: '{"throttle":{"writeSpacing":0}}' });
    expect(seam.code).toBe(2);
    expect(seam.stderr).toMatch(/SUITE_GITHUB_TEST_TUNING must be JSON/);
  });

  it('documents itself in --help, and never prints the token', async () => {
    const out = await run(['--help']);
    expect(out.code).toBe(0);
    for (const flag of ['--toolsets', '--read-only', '--repos', '--lockdown', '--github-host', '--api-url', '--allow-env-token-fallback', '--dynamic-toolsets', 'GITHUB_PERSONAL_ACCESS_TOKEN']) {
      expect(out.stdout).toContain(flag);
    }
    expect(out.stdout + out.stderr).not.toContain(TOKENS.alice);
    // What the bin accepts, and only that: "default" is a toolset name it takes; --auth-token it refuses.
    expect(out.stdout).toMatch(/--toolsets <LIST> +Comma-separated toolsets to enable: context, repos, issues, pull_requests, users, actions, code_security, sub_issues, discussions, review_threads, notifications, all, default \(without the flag: context, repos, issues, pull_requests, users\)/);
    expect(out.stdout).not.toContain('--auth-token');
    const refused = await run(['--http', '--port', '0', '--auth-token', 'shared-secret-123456']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/--auth-token \(MCP_AUTH_TOKEN\) does not apply to this server/);
  });
});

describe('GitHub out of reach', () => {
  it('names the cause a person can act on: a host name that does not resolve, a port that refuses', async () => {
    // A port that was just free: nothing listens there.
    const closed = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const refused = await start([], { GITHUB_API_URL: `http://127.0.0.1:${closed}` });
    const a = await refused.callTool('get_me');
    expect(a).toMatchObject({
      isError: true,
      text: `GitHub could not be reached: 127.0.0.1:${closed} refused the connection (ECONNREFUSED): nothing accepts connections there; check the API URL and any proxy. This is not a problem with your request.`,
    });
    const unresolvable = await start([], { GITHUB_API_URL: '', GITHUB_HOST: 'ghe.no-such-host.invalid' });
    const b = await unresolvable.callTool('get_me');
    expect(b.isError).toBe(true);
    // EAI_AGAIN when the machine has no DNS server at all.
    expect(b.text).toMatch(
      /^GitHub could not be reached: the host name ghe\.no-such-host\.invalid could not be resolved( right now)? \((ENOTFOUND|EAI_AGAIN)\): (check the API URL or GITHUB_HOST, and this machine's DNS|the DNS server did not answer; check this machine's network)\. This is not a problem with your request\.$/,
    );
    // A write that never left says so, rather than "may or may not have been made".
    const c = await refused.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'x' });
    expect(c.text).toMatch(/^GitHub could not be reached: 127\.0\.0\.1:\d+ refused the connection/);
  });
});
