import { execFileSync } from 'node:child_process';
import { appendFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { makeHostileRepo, type HostileRepo } from './hostile.js';
import { git, open } from './helpers.js';

/**
 * The hostile repository of hostile.ts, with history to merge, rebase, cherry-pick and revert (every
 * file has `merge=evil`, a merge driver), a stash, tags, and the remote keys a fetch or push would
 * read, against every tool of issue 29. Nothing it names may run.
 */

/** Set-up git in the hostile repository: its programs may run here (the marker is cleared after). */
function setupGit(repo: string, args: string[], input = ''): string {
  return git(repo, ['-c', 'commit.gpgSign=false', '-c', 'tag.gpgSign=false', '-c', 'core.hooksPath=/dev/null', ...args], { input });
}

describe('a hostile repository cannot run a program through the everyday tools', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let hostile: HostileRepo;

  beforeAll(async () => {
    const made = await makeTempDir('git-prompts-hostile-everyday-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
    hostile = makeHostileRepo(base);
    const repo = hostile.repo;
    const bin = path.join(base, 'hostile-bin');
    // Work in progress goes on the stash: the tree is then clean for merges.
    setupGit(repo, ['stash', 'push', '--include-untracked', '--message', 'hostile work']);
    setupGit(repo, ['checkout', '--quiet', '-b', 'side']);
    writeFileSync(path.join(repo, 'src', 'app.txt'), 'one\ntwo on side\n');
    setupGit(repo, ['commit', '--quiet', '--no-verify', '-am', 'side: change two']);
    setupGit(repo, ['checkout', '--quiet', 'main']);
    writeFileSync(path.join(repo, 'src', 'app.txt'), 'one\ntwo on main\n');
    setupGit(repo, ['commit', '--quiet', '--no-verify', '-am', 'main: change two']);
    setupGit(repo, ['tag', 'v-hostile']);
    // What a fetch, pull or push would read, and a blame that would wait on a FIFO.
    execFileSync('mkfifo', [path.join(repo, '.git', 'ignore-revs')]);
    appendFileSync(
      path.join(repo, '.git', 'config'),
      [
        '[remote "origin"]',
        `\treceivepack = ${path.join(bin, 'upload-pack')}`,
        '[remote "up"]',
        '\turl = https://token:x-secret@example.com/r.git',
        `\tuploadpack = ${path.join(bin, 'upload-pack')}`,
        '[protocol "ext"]',
        '\tallow = always',
        '[protocol "file"]',
        '\tallow = always',
        `[url "ext::${path.join(bin, 'ext-transport')} %S "]`,
        '\tinsteadOf = https://',
        '[blame]',
        `\tignoreRevsFile = ${path.join(repo, '.git', 'ignore-revs')}`,
        '[merge]',
        '\tverifySignatures = true',
        '\tlog = true',
        '[rebase]',
        '\tautoStash = true',
        '\tupdateRefs = true',
        '[stash]',
        '\tshowPatch = true',
        '',
      ].join('\n'),
    );
    rmSync(hostile.marker, { force: true });
  }, 60_000);
  afterAll(async () => {
    await cleanup();
  });

  async function expectOk(session: TestSession, name: string, args: Record<string, unknown>, expectText?: RegExp): Promise<string> {
    const out = await session.callTool(name, args);
    expect(out.isError, `${name}: ${out.text}`).toBe(false);
    if (expectText) expect(out.text, name).toMatch(expectText);
    return out.text;
  }

  it('the read tools run nothing (blame with a FIFO ignore-revs file does not wait either)', async () => {
    const session = await open([base]);
    try {
      await expectOk(session, 'git_blame', { path: 'src/app.txt' }, /main: change two/);
      await expectOk(session, 'git_blame', { path: 'README.md', revision: 'side' });
      await expectOk(session, 'git_stash_list', {}, /hostile work/);
      await expectOk(session, 'git_stash_show', { index: 0 }, /^stash@\{0\} in hostile/);
      await expectOk(session, 'git_worktree_list', {});
      await expectOk(session, 'git_tag_list', {}, /v-hostile/);
      await expectOk(session, 'git_reflog', {});
      await expectOk(session, 'git_reflog', { ref: 'side' });
      const remotes = await expectOk(session, 'git_remote_list', {});
      expect(remotes).not.toContain('x-secret');
      expect((await session.readResource(`git://hostile/blame/${encodeURIComponent('src/app.txt')}`)).text).toContain('main: change two');
      expect((await session.readResource('git://hostile/stash')).text).toContain('hostile work');
      await session.complete({ template: 'git://{repo}/blame/{path}' }, 'path', 'src/');
      await session.getPrompt('review-branch', { branch: 'side', base: 'main' });
      await session.getPrompt('resolve-conflicts');
    } finally {
      await session.close();
    }
    expect(hostile.ran()).toBe('');
  });

  it('the write tools run nothing: stash, tags, merge/rebase/cherry-pick/revert with conflicts, restore, clean, worktrees', async () => {
    const session = await open([base], { allowWrite: true });
    const repo = hostile.repo;
    try {
      // Conflicts on a file whose attributes name a merge driver: reported as data, the driver never runs.
      await expectOk(session, 'git_merge', { branch: 'side' }, /stopped with conflicts[\s\S]*src\/app\.txt/);
      expect((await session.getPrompt('resolve-conflicts')).text).toContain('src/app.txt');
      await expectOk(session, 'git_merge', { action: 'abort' });
      await expectOk(session, 'git_merge', { branch: 'side', fast_forward: 'never' });
      await expectOk(session, 'git_merge', { action: 'abort' });
      await expectOk(session, 'git_rebase', { onto: 'side' }, /stopped with conflicts/);
      await expectOk(session, 'git_rebase', { action: 'abort' });
      await expectOk(session, 'git_cherry_pick', { commits: ['side'] }, /stopped with conflicts/);
      writeFileSync(path.join(repo, 'src', 'app.txt'), 'one\ntwo, resolved\n');
      await expectOk(session, 'git_add', { files: ['src/app.txt'] });
      await expectOk(session, 'git_cherry_pick', { action: 'continue' }, /finished/);
      await expectOk(session, 'git_revert', { commits: ['HEAD'] }, /Reverted/);
      // The stash: apply the hostile work (filters and drivers on every file), put it back, pop, push, drop.
      await expectOk(session, 'git_stash_apply', { index: 0 });
      writeFileSync(path.join(repo, 'src', 'app.txt'), 'one\ntwo, stashed\n');
      writeFileSync(path.join(repo, 'data.proc'), 'processed, stashed\n');
      writeFileSync(path.join(repo, 'untracked.txt'), 'untracked\n');
      await expectOk(session, 'git_stash_push', { message: 'again', include_untracked: true }, /Stashed/);
      await expectOk(session, 'git_stash_pop', { index: 0 });
      writeFileSync(path.join(repo, 'src', 'app.txt'), 'one\ntwo, stashed once more\n');
      await expectOk(session, 'git_stash_push', { message: 'once more' }, /Stashed/);
      await expectOk(session, 'git_stash_drop', { index: 0 }, /Dropped/);
      // Tags: the repository asks for signed tags with its own gpg.program.
      await expectOk(session, 'git_tag_create', { name: 'annotated', message: 'An annotated tag' }, /annotated tag/);
      await expectOk(session, 'git_tag_delete', { name: 'annotated' });
      await expectOk(session, 'git_restore', { paths: ['src/app.txt', 'data.proc'], source: 'HEAD~2' });
      await expectOk(session, 'git_restore', { paths: ['src/app.txt', 'data.proc'] });
      await expectOk(session, 'git_clean', {}, /Would remove/);
      await expectOk(session, 'git_clean', { dry_run: false });
      // A worktree: checkout into it (smudge filters, post-checkout hook), work there, remove it.
      const tree = path.join(base, 'hostile-tree');
      await expectOk(session, 'git_worktree_add', { repo_path: repo, path: tree, new_branch: 'in-tree' });
      await expectOk(session, 'git_status', { repo_path: tree });
      await expectOk(session, 'git_diff_unstaged', { repo_path: tree });
      await expectOk(session, 'git_worktree_remove', { repo_path: repo, path: tree, force: true });
    } finally {
      await session.close();
    }
    expect(hostile.ran()).toBe('');
    // The control: plain git merging the same branches (in memory, the working tree untouched) runs the repository's merge driver.
    try {
      execFileSync('git', ['merge-tree', '--write-tree', 'v-hostile', 'side'], { cwd: repo, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
    } catch {
      // It may stop on the conflict; what ran is in the marker.
    }
    expect(hostile.ran()).toContain('merge-driver');
  });
});
