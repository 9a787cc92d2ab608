import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSIONS_META_KEY } from '../src/github-tool.js';
import { TABLE_END, TABLE_START, classicVerdict, permissionsTable } from '../src/permissions.js';
import { TOOLS } from '../src/server.js';
import { BIN, TOKENS, binEnv, startWorld, testConfig, type World } from './helpers.js';

const run = promisify(execFile);
const README = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const CLASSIC = 'classic-public-repo-token-4d5e6f';
const FINE = 'fine-grained-contents-token-7a8b9c';

let world: World;
beforeAll(async () => {
  world = await startWorld({ transport: 'in-process' });
  world.fake.state.addToken(CLASSIC, 'alice', { scopes: ['public_repo', 'read:user'] });
  world.fake.state.addToken(FINE, 'alice', { permissions: { contents: 'read' } });
});
afterAll(() => world.close());

describe('the permission each tool needs, from its definition', () => {
  it("the README's table is the one the definitions generate (UPDATE_README=1 rewrites it)", async () => {
    const readme = await readFile(README, 'utf8');
    const table = permissionsTable(TOOLS);
    const start = readme.indexOf(TABLE_START);
    const end = readme.indexOf(TABLE_END);
    expect(start, 'the README has the table markers').toBeGreaterThan(0);
    const current = readme.slice(start + TABLE_START.length, end).trim();
    if (process.env.UPDATE_README === '1' && current !== table) {
      await writeFile(README, `${readme.slice(0, start + TABLE_START.length)}\n${table}\n${readme.slice(end)}`);
      return;
    }
    expect(current, 'the README table is stale: run UPDATE_README=1 npx vitest run test/permissions.test.ts').toBe(table);
    expect(table.split('\n')).toHaveLength(TOOLS.length + 2);
  });

  it("every tool publishes its permission and classic scope in tools/list's _meta", async () => {
    const gh = await world.connect({}, { toolsets: ['all'] });
    const { tools } = await gh.client.listTools();
    expect(tools).toHaveLength(TOOLS.length);
    for (const tool of tools) {
      const access = TOOLS.find((t) => t.access.name === tool.name)!.access;
      expect(tool._meta, tool.name).toEqual({ [PERMISSIONS_META_KEY]: { fineGrained: access.permission, classic: access.scope } });
    }
    const logs = tools.find((t) => t.name === 'get_workflow_run_logs')!;
    expect(logs._meta).toEqual({ [PERMISSIONS_META_KEY]: { fineGrained: 'Actions: read', classic: 'repo' } });
  });

  it('classic scopes: repo covers repositories and notifications, public_repo public ones', () => {
    const read = { scope: 'repo' as const, readOnly: true };
    const write = { scope: 'repo' as const, readOnly: false };
    expect(classicVerdict(read, new Set(['repo']))).toBe('yes');
    expect(classicVerdict(write, new Set(['public_repo']))).toBe('public repositories only');
    expect(classicVerdict(write, new Set([]))).toBe('no');
    expect(classicVerdict(read, new Set([]))).toBe('public repositories only');
    expect(classicVerdict({ scope: 'notifications', readOnly: true }, new Set(['repo']))).toBe('yes');
    expect(classicVerdict({ scope: 'notifications', readOnly: true }, new Set(['public_repo']))).toBe('no');
    expect(classicVerdict({ scope: 'none', readOnly: true }, new Set())).toBe('yes');
  });
});

describe('--check-token', () => {
  const check = async (token: string, extra: string[] = [], env: Record<string, string> = {}): Promise<string> => {
    const { stdout } = await run(process.execPath, [BIN, '--check-token', ...extra], { env: { ...process.env, ...binEnv(testConfig(world.fake), token), ...env } });
    return stdout;
  };

  it("a classic token: its scopes from GitHub's header, each tool's verdict", async () => {
    const out = await check(CLASSIC);
    expect(out).toContain('the default token acts as @alice: a classic token with the scopes public_repo, read:user.');
    expect(out).toContain('\nyes  get_me\n');
    expect(out).toContain('\npublic  list_issues (needs the repo scope for private repositories)\n');
    expect(out).toContain('\npublic  create_issue (needs the repo scope for private repositories)\n');
    expect(out).toContain('\nno   list_notifications (needs the notifications scope)\n');
    expect(out).not.toContain(CLASSIC);
  });

  it("a fine-grained token: reads probed on a repository, writes never tried; each --token-for token too", async () => {
    const before = world.fake.requests.length;
    const out = await check(FINE, ['--check-repo', 'alice/private-notes', '--token-for', 'acme=ACME_TOKEN_X'], { ACME_TOKEN_X: TOKENS.bob });
    expect(out).toContain('the default token acts as @alice: a fine-grained token');
    expect(out).toContain('\nyes  get_file_contents\n');
    expect(out).toContain('\nno   list_workflow_runs (needs Actions: read)\n');
    expect(out).toContain('\n?    create_issue (needs Issues: write: reading works, writing not probed)\n');
    expect(out).toContain('the token for acme acts as @bob');
    expect(world.fake.requests.slice(before).every((r) => r.method === 'GET')).toBe(true);
    expect(out).not.toContain(FINE);
    expect(out).not.toContain(TOKENS.bob);
  });

  it('a revoked token is said to be one', async () => {
    expect(await check('revoked-token-000111222')).toBe('the default token: GitHub rejected it (401): it is wrong, expired or revoked.\n');
  });
});
