import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, makeTempDir, spawnServer, waitUntil, type SpawnedSession } from '@suite/test-kit';
import { BIN, git, makeRepo, writeFiles } from './helpers.js';

const WRITE_TOOLS = ['git_add', 'git_reset', 'git_commit', 'git_create_branch', 'git_checkout'];

describe('the built bin', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: SpawnedSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-bin-'));
    repo = makeRepo(path.join(base, 'app'), { 'src/a.ts': 'export const a = 1;\n' });
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('is read-only by default over stdio: tools, a resource, a prompt and a completion', async () => {
    session = await spawnServer(BIN, [repo]);
    const names = await session.toolNames();
    expect(names).toEqual([
      'git_status', 'git_diff_unstaged', 'git_diff_staged', 'git_diff', 'git_log', 'git_show', 'git_branch', 'draft_commit_message',
      'git_blame', 'git_stash_list', 'git_stash_show', 'git_worktree_list', 'git_tag_list', 'git_reflog', 'git_remote_list',
    ]);
    expect((await session.callTool('git_log', {})).text).toMatch(/Message: Initial commit/);
    expect((await session.readResource('git://app/status')).text).toMatch(/^On branch main in app/);
    expect((await session.getPrompt('explain-code', { code: 'src/a.ts' })).resources[0]).toMatchObject({ uri: 'git://app/file/src%2Fa.ts' });
    expect((await session.complete({ prompt: 'explain-code' }, 'code', 'src/')).values).toEqual(['src/a.ts']);
    const error = await session.callTool('git_show', { revision: 'nope' });
    expect(error.isError).toBe(true);
    expect(session.stderr()).not.toMatch(/\n\s+at /);
  });

  it('registers the write tools with --allow-write (or GIT_PROMPTS_ALLOW_WRITE=1) and commits', async () => {
    session = await spawnServer(BIN, ['--allow-write', repo]);
    expect(await session.toolNames()).toEqual(expect.arrayContaining(WRITE_TOOLS));
    writeFiles(repo, { 'b.txt': 'b\n' });
    expect((await session.callTool('git_add', { files: ['b.txt'] })).isError).toBe(false);
    expect((await session.callTool('git_commit', { message: 'Add b over stdio' })).text).toMatch(/^Committed [0-9a-f]{12} on main in app: Add b over stdio$/);
    await session.close();
    session = await spawnServer(BIN, [repo], { env: { GIT_PROMPTS_ALLOW_WRITE: '1' } });
    expect(await session.toolNames()).toEqual(expect.arrayContaining(WRITE_TOOLS));
  });

  it('applies --exclude, --no-default-excludes, --file-budget and --diff-budget', async () => {
    writeFiles(repo, { 'logo.svg': '<svg/>\n', 'package-lock.json': '{}\n', 'big.txt': 'line of text\n'.repeat(400) });
    git(repo, ['add', 'logo.svg', 'package-lock.json', 'big.txt']);
    session = await spawnServer(BIN, ['--exclude', '**/*.svg', '--no-default-excludes', '--file-budget', '1', '--diff-budget', '64', repo]);
    const text = (await session.callTool('git_diff_staged', {})).text;
    expect(text).toMatch(/diff --git a\/package-lock\.json/);
    expect(text).toMatch(/# 1 lock or generated file \(left out by pattern\):\n# {3}logo\.svg \(added\)/);
    expect(text).toMatch(/more lines of the diff of big\.txt left out: it is longer than 1 KiB/);
    git(repo, ['reset', '--quiet']);
  });

  it('delivers resources/updated and list_changed over stdio: a subscription, a clone, a roots change', async () => {
    const dir = path.join(base, 'several');
    const projects = path.join(dir, 'projects');
    const one = makeRepo(path.join(projects, 'one'));
    makeRepo(path.join(dir, 'two'));
    session = await spawnServer(BIN, [dir], { roots: [projects] });
    const WAIT = { timeoutMs: 20_000 };
    const statuses = async (): Promise<string[]> => (await session!.client.listResources()).resources.map((r) => r.uri).filter((u) => u.endsWith('/status'));
    expect(await statuses()).toEqual(['git://one/status']);

    await session.client.subscribeResource({ uri: 'git://one/status' });
    let mark = session.mark();
    writeFiles(one, { 'x.txt': 'x\n' });
    git(one, ['add', 'x.txt']);
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'git://one/status', { ...WAIT, after: mark });
    expect((await session.readResource('git://one/status')).text).toMatch(/added: +x\.txt/);

    // A repository cloned into the client's root.
    mark = session.mark();
    makeRepo(path.join(projects, 'alpha'));
    await session.waitFor('notifications/prompts/list_changed', undefined, { ...WAIT, after: mark });
    await session.waitFor('notifications/resources/list_changed', undefined, { ...WAIT, after: mark });
    expect(await statuses()).toEqual(['git://alpha/status', 'git://one/status']);

    // The client widens its roots to the whole directory: the repository beside its old root becomes available.
    mark = session.mark();
    await session.setRoots([dir]);
    await session.waitFor('notifications/prompts/list_changed', undefined, { ...WAIT, after: mark });
    expect(await statuses()).toEqual(['git://alpha/status', 'git://one/status', 'git://two/status']);
    expect(session.stderr()).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('explains itself with --help and refuses bad command lines with exit code 2', () => {
    const help = spawnSync(process.execPath, [BIN, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    for (const flag of ['--allow-write', '--exclude', '--no-default-excludes', '--file-budget', '--diff-budget', '--timeout', '--scan-depth', '--toolsets', '--http']) {
      expect(help.stdout).toContain(flag);
    }
    const missing = spawnSync(process.execPath, [BIN, path.join(base, 'typo')], { encoding: 'utf8', input: '' });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/Directory not found/);
    const budget = spawnSync(process.execPath, [BIN, '--diff-budget', 'lots', repo], { encoding: 'utf8', input: '' });
    expect(budget.status).toBe(2);
    expect(budget.stderr).toMatch(/--diff-budget must be a whole number/);
    const noGit = spawnSync(process.execPath, [BIN, '--git', path.join(base, 'no-git-here'), repo], { encoding: 'utf8', input: '' });
    expect(noGit.status).toBe(1);
    expect(noGit.stderr).toMatch(/could not be run: install git, or give its path with --git/);
    const oldGit = path.join(base, 'old-git');
    writeFileSync(oldGit, '#!/bin/sh\necho "git version 2.25.1"\n');
    chmodSync(oldGit, 0o755);
    const tooOld = spawnSync(process.execPath, [BIN, '--git', oldGit, repo], { encoding: 'utf8', input: '' });
    expect(tooOld.status).toBe(1);
    expect(tooOld.stderr).toMatch(/git 2\.31 or newer is needed; git version 2\.25\.1 is too old\./);
  });

  describe('over HTTP', () => {
    let server: ChildProcess | undefined;
    afterEach(async () => {
      if (server && server.exitCode === null) {
        const exited = new Promise((resolve) => server!.once('exit', resolve));
        server.kill('SIGTERM');
        await exited;
      }
      server = undefined;
    });

    it('serves sessions side by side: tools, resources, prompts and completion', async () => {
      server = spawn(process.execPath, [BIN, '--http', '--port', '0', '--drain-seconds', '0', repo], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      server.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      await waitUntil(() => /listening on (\S+)/.test(stderr), { what: 'the HTTP server to listen', timeoutMs: 30_000 });
      const url = /listening on (\S+)/.exec(stderr)![1]!;
      const [one, two] = await Promise.all([connectHttp(url), connectHttp(url)]);
      try {
        expect(one.sessionId()).not.toBe(two.sessionId());
        await one.client.ping();
        expect(await one.toolNames()).toContain('git_log');
        expect(await two.toolNames()).not.toContain('git_commit');
        const [status, log] = await Promise.all([one.callTool('git_status', {}), two.callTool('git_log', { max_count: 1 })]);
        expect(status.structured).toMatchObject({ repository: 'app', branch: 'main' });
        expect(log.text).toMatch(/Commit history of app/);
        expect((await one.readResource('git://app/log?limit=1')).text).toMatch(/^[0-9a-f]{10} /);
        expect((await two.getPrompt('changelog')).text).toMatch(/Write the changelog entry/);
        expect((await one.complete({ prompt: 'pr-description' }, 'base', 'm')).values).toEqual(['main']);
        expect((await one.client.listResourceTemplates()).resourceTemplates).toHaveLength(10);
      } finally {
        await one.close();
        await two.close();
      }
      expect(stderr).not.toMatch(/\n\s+at /);
    });
  });
});
