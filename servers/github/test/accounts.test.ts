import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { connectHttp, spawnServer, type FakeRequest, type TestSession } from '@suite/test-kit';
import { UsageError } from '@suite/shared';
import { ownerOfPath } from '../src/github-client.js';
import { parseOwnerTokens } from '../src/owner-tokens.js';
import { tokenOf } from './fake-github/index.js';
import { BIN, TOKENS, binEnv, serveHttp, startWorld, testConfig, type World } from './helpers.js';

/**
 * Several accounts: the operator's default token (alice's) and one per owner (--token-for): acme's
 * requests carry bob's token, mallory's carry mallory's. acme/secret is private and only bob may
 * read it, so a request that carried the wrong token would fail as well as be counted.
 */
let world: World;
const OWNER_TOKENS = { acme: TOKENS.bob, mallory: TOKENS.mallory };
const FLAGS = ['--toolsets', 'all', '--token-for', 'acme=ACME_GH_TOKEN', '--token-for', 'mallory=MALLORY_GH_TOKEN'];
const ENV = { ACME_GH_TOKEN: TOKENS.bob, MALLORY_GH_TOKEN: TOKENS.mallory };
const children: ChildProcess[] = [];
const sessions: TestSession[] = [];

beforeAll(async () => {
  world = await startWorld({ transport: 'in-process' });
  world.fake.state.repo('acme', 'secret')!.collaborators.set('bob', 'read');
});
afterAll(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  for (const child of children) child.kill('SIGTERM');
  await world.close();
});

/** The token a request must carry: its owner's, else the session's default. */
function expectedToken(request: FakeRequest, fallback: string): string {
  const owner = ownerOfPath(request.path)?.toLowerCase();
  return (owner !== undefined ? (OWNER_TOKENS as Record<string, string>)[owner] : undefined) ?? fallback;
}

/** Calls on three owners and none, all at once, so the requests of different tokens interleave on one session. */
async function interleaved(gh: TestSession): Promise<string[]> {
  const calls = await Promise.all([
    gh.callTool('get_file_contents', { owner: 'acme', repo: 'secret', path: 'plans.md' }),
    gh.callTool('get_file_contents', { owner: 'mallory', repo: 'tools', path: 'x.sh' }),
    gh.callTool('get_file_contents', { owner: 'alice', repo: 'private-notes', path: 'notes.md' }),
    gh.callTool('get_me'),
    gh.callTool('list_issues', { owner: 'acme', repo: 'widgets' }),
    gh.callTool('get_workflow_run_logs', { owner: 'acme', repo: 'widgets', run_id: 9001, tail_lines: 1 }),
    gh.callTool('list_branches', { owner: 'mallory', repo: 'tools' }),
    gh.callTool('get_file_contents', { owner: 'acme', repo: 'secret', path: 'plans.md' }),
  ]);
  for (const call of calls) expect(call.isError, call.text).toBeFalsy();
  return calls.map((c) => c.text);
}

function mismatches(from: number, fallback: string): string[] {
  return world.fake.requests
    .slice(from)
    .filter((r) => tokenOf(r) !== expectedToken(r, fallback))
    .map((r) => `${r.method} ${r.path}`);
}

describe('--token-for: each request carries the token of the owner it addresses', () => {
  it('over stdio: interleaved calls on three owners, zero mismatches, and no result names a token', async () => {
    const from = world.fake.requests.length;
    const gh = await spawnServer(BIN, [...FLAGS, '--log-level', 'debug'], { env: { ...binEnv(testConfig(world.fake), TOKENS.alice), ...ENV } });
    sessions.push(gh);
    const texts = await interleaved(gh);
    expect(texts[0]).toContain('Top secret.');
    expect(texts[3]).toMatch(/^@alice/);
    const seen = world.fake.requests.slice(from);
    expect(new Set(seen.map(tokenOf))).toEqual(new Set([TOKENS.alice, TOKENS.bob, TOKENS.mallory]));
    expect(mismatches(from, TOKENS.alice)).toEqual([]);
    // The log download went to another origin without any token.
    expect(world.fake.storage.requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    for (const token of Object.values(TOKENS)) expect(texts.join('\n')).not.toContain(token);
    expect(gh.stderr()).toContain('Own tokens for 2 owners: acme, mallory');
    for (const token of Object.values(TOKENS)) expect(gh.stderr()).not.toContain(token);
  });

  it('over HTTP: a session on the operator\'s tokens uses them per owner; a session with its own bearer token uses only that', async () => {
    const server = await serveHttp([...FLAGS, '--allow-env-token-fallback', '--log-level', 'debug'], { ...binEnv(testConfig(world.fake), TOKENS.alice), ...ENV });
    children.push(server.child);
    const operator = await connectHttp(server.url);
    const client = await connectHttp(server.url, { token: TOKENS.carol });
    sessions.push(operator, client);
    const from = world.fake.requests.length;
    // The bearer session reads a repository of acme (public): with carol's token, never bob's.
    const [texts, own] = await Promise.all([interleaved(operator), Promise.all([client.callTool('list_issues', { owner: 'acme', repo: 'gadgets' }), client.callTool('get_me')])]);
    expect(texts[0]).toContain('Top secret.');
    expect(own[1]!.text).toMatch(/^@carol/);
    const seen = world.fake.requests.slice(from);
    const carols = seen.filter((r) => r.path === '/repos/acme/gadgets/issues' || (r.path === '/user' && tokenOf(r) === TOKENS.carol));
    expect(carols.length).toBe(2);
    expect(carols.map(tokenOf)).toEqual([TOKENS.carol, TOKENS.carol]);
    const rest = seen.filter((r) => !carols.includes(r));
    expect(rest.filter((r) => tokenOf(r) !== expectedToken(r, TOKENS.alice)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
    // carol has no access to acme/secret: her session must not reach it through bob's token.
    const denied = await client.callTool('get_file_contents', { owner: 'acme', repo: 'secret', path: 'plans.md' });
    expect(denied).toMatchObject({ isError: true, text: expect.stringMatching(/not found/i) });
    expect(server.stderr()).not.toContain(TOKENS.bob);
    expect(server.stderr()).not.toContain(TOKENS.mallory);
  });

  it('in process: the allowlist applies whichever token a request carries', async () => {
    const gh = await world.connect({ ownerTokens: OWNER_TOKENS, repos: [{ owner: 'acme', repo: 'widgets' }] });
    const before = world.fake.requests.length;
    const out = await gh.callTool('get_file_contents', { owner: 'acme', repo: 'secret', path: 'plans.md' });
    expect(out).toMatchObject({ isError: true, text: expect.stringContaining("outside this server's repository allowlist") });
    expect(world.fake.requests.length).toBe(before);
  });

  it('a revoked owner token is named by its owner only', async () => {
    const gh = await world.connect({ ownerTokens: { acme: 'revoked-acme-token-9f8e7d' } });
    const out = await gh.callTool('list_issues', { owner: 'acme', repo: 'widgets' });
    expect(out).toMatchObject({
      isError: true,
      text: 'GitHub rejected the token configured for acme (401 Bad credentials): it is wrong, expired or revoked. Ask the operator to renew the token they set for acme with --token-for.',
    });
    expect(out.text).not.toContain('revoked-acme-token');
    expect((await gh.callTool('get_me')).text).toMatch(/^@alice/);
  });
});

describe('parsing --token-for and GITHUB_TOKEN_FOR', () => {
  const env = { A: 'token-of-a-123456', B: 'token-of-b-654321', EMPTY: '' };
  it('reads owner=VAR entries, repeated or comma-separated, owners lower-cased', () => {
    expect(parseOwnerTokens(['Acme=A', 'bob=B'], env)).toEqual({ acme: env.A, bob: env.B });
    expect(parseOwnerTokens(['acme=A, bob=B'], env)).toEqual({ acme: env.A, bob: env.B });
    expect(parseOwnerTokens([], env)).toEqual({});
  });

  it('refuses what cannot be right, naming variables but never a value', () => {
    const message = (entries: string[]): string => {
      try {
        parseOwnerTokens(entries, env);
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        return (error as Error).message;
      }
      throw new Error('accepted');
    };
    expect(message(['acme=MISSING'])).toBe('--token-for acme=MISSING: the environment variable MISSING is not set or empty.');
    expect(message(['acme=EMPTY'])).toContain('EMPTY is not set or empty');
    expect(message(['acme=A', 'ACME=B'])).toBe('--token-for names ACME twice: give each owner one token.');
    expect(message(['acme'])).toMatch(/^--token-for takes OWNER=ENV_VAR/);
    expect(message(['../x=A'])).toMatch(/^--token-for takes OWNER=ENV_VAR/);
    const pasted = message(['acme=ghp_abcdefghijklmnopqrstuvwxyz0123456789']);
    expect(pasted).toContain('not the token itself');
    expect(pasted).not.toContain('ghp_abc');
  });
});
