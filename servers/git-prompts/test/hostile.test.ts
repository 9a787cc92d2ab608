import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError, spawnServer, type TestSession } from '@suite/test-kit';
import { makeHostileRepo, type HostileRepo } from './hostile.js';
import { BIN, git, open } from './helpers.js';

/** Plain git, as a user would run it in the repository: what the server must never do. */
function plainGit(repo: string, args: string[]): void {
  try {
    execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore', input: '' });
  } catch {
    // Some of these fail once their program has run (a signature that does not verify); what ran is in the marker.
  }
}

/** Every read the server offers, through tools, resources, prompts and completion. */
async function readEverything(session: TestSession): Promise<void> {
  const calls: [string, Record<string, unknown>][] = [
    ['git_status', {}],
    ['git_diff_unstaged', {}],
    ['git_diff_unstaged', { path: 'data.proc' }],
    ['git_diff_staged', {}],
    ['git_diff', { target: 'HEAD~1' }],
    ['git_log', { max_count: 5 }],
    ['git_log', { max_count: 5, path: 'src/app.txt', author: 'mallory', start_timestamp: '2000-01-01' }],
    ['git_show', { revision: 'HEAD~1' }],
    ['git_show', { revision: 'HEAD:src/app.txt' }],
    ['git_show', { revision: 'HEAD' }],
    ['git_branch', { branch_type: 'all', contains: 'HEAD~1' }],
    ['draft_commit_message', { changes: 'Rename a variable' }],
  ];
  for (const [name, args] of calls) {
    const out = await session.callTool(name, args);
    expect(out.isError, `${name}: ${out.text}`).toBe(false);
  }
  for (const uri of [
    'git://hostile/status',
    'git://hostile/diff/staged',
    'git://hostile/diff/unstaged',
    'git://hostile/log',
    'git://hostile/log?limit=3',
    'git://hostile/log/HEAD~2..HEAD',
    'git://hostile/compare/HEAD~2...HEAD',
    'git://hostile/show/HEAD~1',
    `git://hostile/file/${encodeURIComponent('src/app.txt')}`,
  ]) {
    await session.readResource(uri);
  }
  for (const [name, args] of [
    ['git-commit', {}],
    ['review-changes', {}],
    ['review-changes', { base: 'unstaged' }],
    ['review-changes', { base: 'HEAD~2' }],
    ['pr-description', { base: 'HEAD~2' }],
    ['summarize-changes', { range: 'HEAD~2..HEAD' }],
    ['changelog', {}],
    ['explain-code', { code: 'src/app.txt' }],
  ] as const) {
    await session.getPrompt(name, args as Record<string, string>);
  }
  for (const [prompt, argument, value] of [
    ['review-changes', 'base', 'ma'],
    ['pr-description', 'base', ''],
    ['summarize-changes', 'range', 'main..'],
    ['changelog', 'from', ''],
    ['explain-code', 'code', 'src/'],
    ['explain-code', 'code', 's'],
    ['git-commit', 'repo', 'h'],
  ] as const) {
    await session.complete({ prompt }, argument, value);
  }
  for (const [uri, argument, value] of [
    ['git://{repo}/show/{rev}', 'rev', 'HEAD'],
    ['git://{repo}/compare/{range}', 'range', 'main...'],
    ['git://{repo}/log/{range}', 'range', ''],
    ['git://{repo}/file/{path}', 'path', 'su'],
    ['git://{repo}/status', 'repo', ''],
  ] as const) {
    await session.complete({ template: uri }, argument, value);
  }
}

describe('a hostile repository cannot run a program', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let hostile: HostileRepo;
  let session: TestSession | undefined;
  beforeEach(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-hostile-'));
    hostile = makeHostileRepo(base);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await cleanup();
  });

  it('is really hostile: plain git runs its programs (the control for the tests below)', () => {
    plainGit(hostile.repo, ['status']);
    plainGit(hostile.repo, ['diff']);
    plainGit(hostile.repo, ['diff', '--no-ext-diff']);
    plainGit(hostile.repo, ['log', '-3']);
    plainGit(hostile.repo, ['add', 'src/app.txt', 'data.proc']);
    plainGit(hostile.repo, ['commit', '-m', 'x']);
    const ran = hostile.ran();
    plainGit(hostile.repo, ['add', '.']);
    for (const program of ['fsmonitor', 'diff-driver-command', 'textconv', 'gpg-program', 'filter-clean', 'filter-process', 'hook:pre-commit', 'hook:commit-msg', 'hook:post-index-change', 'sub-filter-clean', 'vendored-filter-clean', 'filter-clean-worktree']) {
      expect(ran, `plain git should have run ${program}`).toContain(program);
    }
  });

  it('runs nothing in read-only mode, through every tool, resource, prompt and completion', async () => {
    session = await open([base]);
    await readEverything(session);
    expect(hostile.ran()).toBe('');
  });

  it('runs nothing with --allow-write: add, reset, commit (no hooks, not signed), branch, checkout, submodules and all', async () => {
    session = await open([base], { allowWrite: true });
    await readEverything(session);
    const call = async (name: string, args: Record<string, unknown>): Promise<void> => {
      const out = await session!.callTool(name, args);
      expect(out.isError, `${name}: ${out.text}`).toBe(false);
    };
    for (const [name, args] of [
      ['git_add', { files: ['src/app.txt', 'data.proc', 'new.txt'] }],
      ['git_reset', { files: ['new.txt'] }],
      ['git_reset', {}],
      // The submodule and the embedded repository, by name and through ".": git add would start a git inside each.
      ['git_add', { files: ['sub'] }],
      ['git_add', { files: ['vendored', 'notes.wt', 'later.ob'] }],
      ['git_reset', { files: ['sub', 'vendored'] }],
      ['git_add', { files: ['.'] }],
      ['git_commit', { message: 'Work in the hostile repository' }],
      ['git_create_branch', { branch_name: 'older', base_branch: 'HEAD~1' }],
      // On "older", the configuration includes one more file (includeIf onbranch) with a filter of its own.
      ['git_checkout', { branch_name: 'older' }],
    ] as const) {
      await call(name, args);
    }
    writeFileSync(path.join(hostile.repo, 'later.ob'), 'on brunch\n');
    await readEverything(session);
    await call('git_add', { files: ['later.ob'] });
    await call('git_reset', {});
    writeFileSync(path.join(hostile.repo, 'later.ob'), 'on branch\n');
    // Leaving "older" writes later.ob of main through the driver of the file "older" includes.
    await call('git_checkout', { branch_name: 'main' });
    expect(hostile.ran()).toBe('');
    // The commit landed, unsigned (the repository's commit.gpgSign does not count), with the checked-out files intact.
    expect(git(hostile.repo, ['log', '-1', '--format=%s'])).toBe('Work in the hostile repository\n');
    expect(git(hostile.repo, ['cat-file', 'commit', 'HEAD'])).not.toMatch(/gpgsig/);
    expect(git(hostile.repo, ['status', '--porcelain', '--untracked-files=no', '--ignore-submodules=all'], { env: { GIT_CONFIG_GLOBAL: '/dev/null' } }).trim()).toBe('');
    expect(readFileSync(path.join(hostile.repo, 'later.ob'), 'utf8')).toBe('on branch again\n');
  });

  it('runs nothing through the built bin over stdio either (read-only, then --allow-write)', async () => {
    for (const args of [[base], ['--allow-write', base]]) {
      const bin = await spawnServer(BIN, args);
      try {
        await readEverything(bin);
        if (args[0] === '--allow-write') {
          expect((await bin.callTool('git_add', { files: ['src/app.txt'] })).isError).toBe(false);
          expect((await bin.callTool('git_commit', { message: 'From the bin' })).isError).toBe(false);
        }
      } finally {
        await bin.close();
      }
    }
    expect(hostile.ran()).toBe('');
  });

  it('reads the configuration again when it changes between two calls (an included file that appears later too)', async () => {
    session = await open([base]);
    expect((await session.callTool('git_diff_unstaged', {})).isError).toBe(false);
    // A new driver under a new name, in a file the configuration includes but that did not exist at the first call.
    // In the working tree, not in .git: creating it changes nothing else the server looks at.
    mkdirSync(path.join(hostile.repo, 'config'));
    const later = path.join(hostile.repo, 'config', 'later.cfg');
    git(hostile.repo, ['config', '--add', 'include.path', '../config/later.cfg']);
    expect((await session.callTool('git_diff_unstaged', {})).isError).toBe(false);
    writeFileSync(later, `[filter "late"]\n\tclean = ${path.join(base, 'hostile-bin', 'filter-clean')}\n\trequired = true\n`);
    writeFileSync(path.join(hostile.repo, '.gitattributes'), '* diff=evil filter=late\n');
    const out = await session.callTool('git_diff_unstaged', {});
    expect(out.isError, out.text).toBe(false);
    expect(hostile.ran()).toBe('');
    // The control: plain git would have run it.
    plainGit(hostile.repo, ['diff', '--no-ext-diff', '--no-textconv']);
    expect(hostile.ran()).toContain('filter-clean');
  });

  it('refuses a repository whose configuration moves its working tree outside the roots', async () => {
    const { dir: outside, cleanup: dropOutside } = await makeTempDir('git-prompts-elsewhere-');
    try {
      git(hostile.repo, ['config', 'core.worktree', outside]);
      session = await open([base]);
      const out = await session.callTool('git_status', { repo_path: hostile.repo });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/outside the allowed directories/);
      expect(out.text).not.toContain(outside);
      const error = await protocolError(session.readResource('git://hostile/status'));
      expect(error.data).toMatchObject({ kind: 'access_denied' });
    } finally {
      await dropOutside();
    }
  });
});
