import { existsSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChangeHub } from '@suite/shared';
import { makeTempDir, protocolError, spawnServer, type TestSession } from '@suite/test-kit';
import { BIN, commit, git, makeRepo, open, writeFiles } from './helpers.js';

/**
 * The everyday git of issue 29 (blame, stash, worktrees, tags, reflog, remotes, merge, rebase,
 * cherry-pick, revert, restore, clean), through the protocol on repositories built here.
 */

const GRACE = { GIT_AUTHOR_NAME: 'Grace Hopper', GIT_AUTHOR_EMAIL: 'grace@example.com' };

/** main and feature both change line 2 of shared.txt; clean-feature adds a file of its own. */
function conflictRepo(dir: string): string {
  makeRepo(dir, { 'shared.txt': 'one\ntwo\nthree\n', 'README.md': '# app\n' });
  git(dir, ['branch', 'feature']);
  git(dir, ['branch', 'clean-feature']);
  commit(dir, { 'shared.txt': 'one\nTWO on main\nthree\n' }, 'main: change two');
  git(dir, ['checkout', '--quiet', 'feature']);
  commit(dir, { 'feature.txt': 'first feature commit\n' }, 'feature: add a file');
  commit(dir, { 'shared.txt': 'one\ntwo on feature\nthree\n' }, 'feature: change two');
  git(dir, ['checkout', '--quiet', 'clean-feature']);
  commit(dir, { 'clean.txt': 'clean\n' }, 'clean: add clean.txt');
  git(dir, ['checkout', '--quiet', 'main']);
  return dir;
}

describe('everyday git tools', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  let history: string;

  beforeAll(async () => {
    const made = await makeTempDir('git-prompts-everyday-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
    history = makeRepo(path.join(base, 'history'), { 'src/app.ts': 'line 1\nline 2\nline 3\nline 4\n' });
    git(history, ['tag', 'v0.1']);
    writeFiles(history, { 'src/app.ts': 'line 1\nline 2 by grace\nline 3 by grace\nline 4\n' });
    git(history, ['commit', '--quiet', '-am', 'grace: rework lines 2 and 3'], { env: { ...GRACE, GIT_AUTHOR_DATE: '2024-06-01T10:00:00+02:00' } });
    git(history, ['tag', '--annotate', 'v1.0', '--message', 'Version 1.0'], { env: { GIT_COMMITTER_DATE: '2024-06-02T12:00:00Z' } });
    git(history, ['remote', 'add', 'origin', 'https://user:s3cr3t-token@example.com/org/app.git']);
    git(history, ['remote', 'add', 'mirror', 'git@example.com:org/app.git']);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('git_blame gives line ranges with commit, author, date and summary, within a line range', async () => {
    session = await open([history]);
    const out = await session.callTool('git_blame', { path: 'src/app.ts' });
    expect(out.isError, out.text).toBe(false);
    const { ranges, more } = out.structured as { ranges: { start: number; end: number; author: string; email: string; date: string; summary: string }[]; more: boolean };
    expect(more).toBe(false);
    expect(ranges.map((r) => [r.start, r.end, r.author, r.summary])).toEqual([
      [1, 1, 'Test User', 'Initial commit'],
      [2, 3, 'Grace Hopper', 'grace: rework lines 2 and 3'],
      [4, 4, 'Test User', 'Initial commit'],
    ]);
    expect(ranges[1]).toMatchObject({ email: 'grace@example.com', date: '2024-06-01T10:00:00+02:00' });
    expect(out.text).toContain('L2-3 ');
    expect(out.text).toContain('    2│ line 2 by grace');

    const part = await session.callTool('git_blame', { path: 'src/app.ts', revision: 'v0.1', start_line: 2, end_line: 3 });
    expect((part.structured as { ranges: unknown[] }).ranges).toEqual([expect.objectContaining({ start: 2, end: 3, summary: 'Initial commit' })]);
    expect(part.text).toContain('line 2\n');
    const past = await session.callTool('git_blame', { path: 'src/app.ts', start_line: 9 });
    expect(past).toMatchObject({ isError: true, text: 'src/app.ts has only 4 lines at HEAD; start_line 9 is past its end.' });
    expect(await session.callTool('git_blame', { path: 'missing.ts' })).toMatchObject({ isError: true, text: 'missing.ts does not exist at HEAD in history.' });
    expect((await session.callTool('git_blame', { path: '../outside' })).isError).toBe(true);
    expect((await session.callTool('git_blame', { path: 'src/app.ts', revision: '--output=/tmp/x' })).text).toMatch(/starts with "-"/);
  });

  it('git_tag_list, git_reflog and git_remote_list read tags, ref moves and remotes (credentials hidden)', async () => {
    session = await open([history]);
    const tags = await session.callTool('git_tag_list');
    expect((tags.structured as { tags: { name: string; annotated: boolean; subject: string }[] }).tags.map((t) => [t.name, t.annotated, t.subject])).toEqual([
      ['v1.0', true, 'Version 1.0'],
      ['v0.1', false, 'Initial commit'],
    ]);
    expect((await session.callTool('git_tag_list', { pattern: 'v0.*' })).text).toMatch(/^Tags of history matching v0\.\* \(1 tag\):\nv0\.1 /);

    const reflog = await session.callTool('git_reflog', { max_count: 1 });
    const entries = (reflog.structured as { entries: { selector: string; action: string; subject: string; date: string }[]; more: boolean }).entries;
    expect(entries).toEqual([expect.objectContaining({ selector: 'HEAD@{0}', action: 'commit: grace: rework lines 2 and 3', subject: 'grace: rework lines 2 and 3' })]);
    expect(entries[0]!.date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect((reflog.structured as { more: boolean }).more).toBe(true);
    expect(await session.callTool('git_reflog', { ref: 'nope' })).toMatchObject({ isError: true });

    const remotes = await session.callTool('git_remote_list');
    expect(remotes.structured).toMatchObject({
      remotes: [
        { name: 'origin', fetch: ['https://***@example.com/org/app.git'], push: ['https://***@example.com/org/app.git'] },
        { name: 'mirror', fetch: ['git@example.com:org/app.git'] },
      ],
    });
    expect(JSON.stringify(remotes)).not.toContain('s3cr3t');
  });

  it('stash: push (message, paths, untracked), list, show, apply, pop with a conflict kept as data, drop', async () => {
    const repo = makeRepo(path.join(base, 'stash'), { 'a.txt': 'a\n', 'b.txt': 'b\n' });
    session = await open([repo], { allowWrite: true });
    expect((await session.callTool('git_stash_list')).text).toBe('The stash of stash is empty.');
    expect((await session.callTool('git_stash_push')).text).toBe('No local changes to stash in stash; nothing was saved.');
    writeFiles(repo, { 'a.txt': 'a changed\n', 'b.txt': 'b changed\n', 'new.txt': 'untracked\n' });
    const pushed = await session.callTool('git_stash_push', { message: 'only a', paths: ['a.txt'] });
    expect(pushed.text).toMatch(/^Stashed as stash@\{0\} \([0-9a-f]{12}: On main: only a\) in stash\./);
    expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(path.join(repo, 'b.txt'), 'utf8')).toBe('b changed\n');
    await session.callTool('git_stash_push', { message: 'the rest', include_untracked: true });
    expect(existsSync(path.join(repo, 'new.txt'))).toBe(false);

    const list = await session.callTool('git_stash_list');
    expect((list.structured as { entries: { name: string; message: string }[] }).entries.map((e) => [e.name, e.message])).toEqual([
      ['stash@{0}', 'On main: the rest'],
      ['stash@{1}', 'On main: only a'],
    ]);
    const shown = await session.callTool('git_stash_show', { index: 0 });
    expect(shown.text).toContain('+b changed');
    expect(shown.text).toContain('Untracked files saved with it (1):\n  new.txt');
    expect(await session.callTool('git_stash_show', { index: 5 })).toMatchObject({ isError: true, text: 'There is no stash@{5} in stash: it has stash@{0} to stash@{1}.' });

    expect((await session.callTool('git_stash_apply', { index: 1 })).text).toMatch(/^Applied stash@\{1\} .* it stays on the stash\.$/);
    expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('a changed\n');
    // b.txt is committed differently now: popping the entry that changed b conflicts, and the entry is kept.
    git(repo, ['checkout', '--quiet', '--', 'a.txt']);
    commit(repo, { 'b.txt': 'b committed differently\n' }, 'change b');
    const popped = await session.callTool('git_stash_pop', { index: 0 });
    expect(popped.isError).toBe(false);
    expect(popped.text).toMatch(/^Applying stash@\{0\} in stash stopped with conflicts; the entry stays on the stash\.\n1 file with conflicts:\n\n== b\.txt\n-- conflict at line 1\n<<<<<<< ours \(Updated upstream\)\nb committed differently\n\|\|\|\|\|\|\| base\nb\n=======\nb changed\n>>>>>>> theirs \(Stashed changes\)/);
    expect((await session.callTool('git_stash_list')).text).toContain('stash@{1}');

    git(repo, ['checkout', '--quiet', 'HEAD', '--', 'b.txt']);
    const dropped = await session.callTool('git_stash_drop', { index: 1 });
    expect(dropped.text).toMatch(/^Dropped stash@\{1\} \([0-9a-f]{12}\) from stash\. To recover it: git stash store -m "recovered" [0-9a-f]{40}$/);
    expect((await session.callTool('git_stash_list')).text).toMatch(/\(1 entry\):\nstash@\{0\} .* On main: the rest$/);
  });

  it('git_tag_create (lightweight, annotated) and git_tag_delete; existing and invalid names refused', async () => {
    const repo = makeRepo(path.join(base, 'tags'));
    session = await open([repo], { allowWrite: true });
    expect((await session.callTool('git_tag_create', { name: 'v1' })).text).toMatch(/^Created lightweight tag v1 at [0-9a-f]{12} in tags\.$/);
    expect((await session.callTool('git_tag_create', { name: 'v2', message: 'Second release' })).text).toMatch(/^Created annotated tag v2 /);
    expect(git(repo, ['cat-file', '-t', 'v2']).trim()).toBe('tag');
    expect(git(repo, ['tag', '-l', '--format=%(contents:subject)', 'v2']).trim()).toBe('Second release');
    expect(await session.callTool('git_tag_create', { name: 'v1' })).toMatchObject({ isError: true, text: 'A tag named v1 already exists in tags; it was left as it is.' });
    expect((await session.callTool('git_tag_create', { name: '--force' })).text).toMatch(/not a valid tag name: it starts with "-"/);
    expect((await session.callTool('git_tag_create', { name: 'a..b' })).isError).toBe(true);
    expect((await session.callTool('git_tag_delete', { name: 'v1' })).text).toMatch(/^Deleted tag v1 \(was [0-9a-f]{12}\) in tags\./);
    expect(git(repo, ['tag', '-l'])).toBe('v2\n');
    expect(await session.callTool('git_tag_delete', { name: 'v1' })).toMatchObject({ isError: true });
  });

  it('git_merge: clean, then a conflict as data (both sides and the base), continue after resolving; abort restores', async () => {
    const repo = conflictRepo(path.join(base, 'merge'));
    session = await open([repo], { allowWrite: true });
    expect((await session.callTool('git_merge', { branch: 'clean-feature' })).text).toMatch(/^Merged clean-feature in merge; main is at [0-9a-f]{12}\.$/);
    expect(git(repo, ['log', '-1', '--format=%s'])).toBe("Merge branch 'clean-feature'\n");
    expect((await session.callTool('git_merge', { branch: 'clean-feature' })).text).toBe("clean-feature is already merged into merge's current branch; nothing changed.");

    const stopped = await session.callTool('git_merge', { branch: 'feature' });
    expect(stopped.isError).toBe(false);
    expect(stopped.text).toContain('Merging feature stopped with conflicts in merge.\n1 file with conflicts (a merge is in progress):');
    expect(stopped.text).toContain('<<<<<<< ours (HEAD)\nTWO on main\n||||||| base\ntwo\n=======\ntwo on feature\n>>>>>>> theirs (');
    expect(stopped.text).toContain('Next: Edit each file');
    // Another start meanwhile is refused; continue with the conflict unresolved answers with the conflict again.
    expect((await session.callTool('git_merge', { branch: 'clean-feature' })).text).toMatch(/in the middle of a merge; finish it first/);
    expect((await session.callTool('git_merge', { action: 'continue' })).text).toMatch(/^merge cannot continue in merge: a file is still unmerged\./);
    expect((await session.callTool('git_rebase', { action: 'continue' })).text).toMatch(/in the middle of a merge, not rebase/);

    expect((await session.callTool('git_merge', { action: 'abort' })).text).toMatch(/^Aborted the merge in merge; main is at /);
    expect(existsSync(path.join(repo, '.git', 'MERGE_HEAD'))).toBe(false);
    expect(readFileSync(path.join(repo, 'shared.txt'), 'utf8')).toBe('one\nTWO on main\nthree\n');

    await session.callTool('git_merge', { branch: 'feature', fast_forward: 'never', message: 'Merge the feature' });
    writeFileSync(path.join(repo, 'shared.txt'), 'one\ntwo, agreed\nthree\n');
    expect((await session.callTool('git_add', { files: ['shared.txt'] })).isError).toBe(false);
    expect((await session.callTool('git_merge', { action: 'continue' })).text).toMatch(/^The merge went on and finished in merge; main is at /);
    expect(git(repo, ['log', '-1', '--format=%s%n%P']).split('\n')[0]).toBe('Merge the feature');
    expect(await session.callTool('git_merge', { action: 'abort' })).toMatchObject({ isError: true, text: 'There is no merge in progress in merge.' });
    // A dirty working tree is refused before anything starts.
    writeFiles(repo, { 'README.md': 'dirty\n' });
    expect((await session.callTool('git_merge', { branch: 'clean-feature' })).text).toMatch(/has uncommitted changes to tracked files; a merge needs a clean working tree/);
  });

  it('git_rebase stops halfway on a conflict, reports it, continues after resolving; abort goes back', async () => {
    const repo = conflictRepo(path.join(base, 'rebase'));
    git(repo, ['checkout', '--quiet', 'feature']);
    const before = git(repo, ['rev-parse', 'HEAD']).trim();
    session = await open([repo], { allowWrite: true });
    const stopped = await session.callTool('git_rebase', { onto: 'main' });
    expect(stopped.text).toContain('Rebasing onto main stopped with conflicts in rebase.\n1 file with conflicts (a rebase is in progress):');
    expect(stopped.text).toContain('== shared.txt');
    // The first commit of feature is already replayed: the rebase stopped halfway.
    expect(git(repo, ['log', '-1', '--format=%s', 'HEAD'])).toBe('feature: add a file\n');
    expect((await session.callTool('git_rebase', { action: 'abort' })).text).toMatch(/^Aborted the rebase in rebase; feature is at /);
    expect(git(repo, ['rev-parse', 'HEAD']).trim()).toBe(before);

    await session.callTool('git_rebase', { onto: 'main' });
    writeFileSync(path.join(repo, 'shared.txt'), 'one\nTWO on main, then feature\nthree\n');
    await session.callTool('git_add', { files: ['shared.txt'] });
    expect((await session.callTool('git_rebase', { action: 'continue' })).text).toMatch(/^The rebase went on and finished in rebase; feature is at /);
    expect(git(repo, ['log', '--format=%s', 'main..feature'])).toBe('feature: change two\nfeature: add a file\n');
    expect(git(repo, ['merge-base', '--is-ancestor', 'main', 'feature'])).toBe('');
  });

  it('git_cherry_pick and git_revert, with a conflict as data and skip/abort', async () => {
    const repo = conflictRepo(path.join(base, 'pick'));
    session = await open([repo], { allowWrite: true });
    const clean = git(repo, ['rev-parse', 'clean-feature']).trim();
    expect((await session.callTool('git_cherry_pick', { commits: ['clean-feature'] })).text).toMatch(/^Cherry-picked [0-9a-f]{12} in pick; main is at /);
    expect(readFileSync(path.join(repo, 'clean.txt'), 'utf8')).toBe('clean\n');
    const stopped = await session.callTool('git_cherry_pick', { commits: ['feature'] });
    expect(stopped.text).toContain('The cherry-pick stopped with conflicts in pick.\n1 file with conflicts (a cherry-pick is in progress):');
    expect((await session.callTool('git_cherry_pick', { action: 'abort' })).text).toMatch(/^Aborted the cherry-pick in pick/);
    expect(existsSync(path.join(repo, '.git', 'CHERRY_PICK_HEAD'))).toBe(false);

    expect((await session.callTool('git_revert', { commits: ['HEAD'] })).text).toMatch(/^Reverted [0-9a-f]{12} in pick; main is at /);
    expect(git(repo, ['log', '-1', '--format=%s'])).toMatch(/^Revert "clean: add clean.txt"/);
    expect(existsSync(path.join(repo, 'clean.txt'))).toBe(false);
    expect(clean).toMatch(/^[0-9a-f]{40}$/);
    // Reverting main's change to shared.txt after editing it again conflicts.
    commit(repo, { 'shared.txt': 'one\nTWO on main, edited\nthree\n' }, 'edit again');
    const revert = await session.callTool('git_revert', { commits: ['HEAD~3'] });
    expect(revert.text).toContain('The revert stopped with conflicts in pick.');
    expect((await session.callTool('git_revert', { action: 'skip' })).text).toMatch(/^Skipped the commit and went on with the revert in pick/);
    expect(existsSync(path.join(repo, '.git', 'REVERT_HEAD'))).toBe(false);
  });

  it('git_restore from the index, from a revision and for the index; git_clean lists by default and removes when told', async () => {
    const repo = makeRepo(path.join(base, 'restore'), { 'a.txt': 'one\n', 'keep.txt': 'keep\n', '.gitignore': 'build/\n' });
    commit(repo, { 'a.txt': 'two\n' }, 'a two');
    session = await open([repo], { allowWrite: true });
    writeFiles(repo, { 'a.txt': 'edited\n' });
    expect((await session.callTool('git_restore', { paths: ['a.txt'] })).text).toBe('Restored a.txt in the working tree of restore from the index.');
    expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('two\n');
    expect((await session.callTool('git_restore', { paths: ['a.txt'], source: 'HEAD~1' })).isError).toBe(false);
    expect(readFileSync(path.join(repo, 'a.txt'), 'utf8')).toBe('one\n');
    git(repo, ['add', 'a.txt']);
    expect((await session.callTool('git_restore', { paths: ['a.txt'], staged: true })).text).toBe('Restored a.txt in the index of restore from HEAD.');
    expect(git(repo, ['diff', '--cached', '--name-only'])).toBe('');
    expect(await session.callTool('git_restore', { paths: ['nope.txt'] })).toMatchObject({ isError: true });
    expect((await session.callTool('git_restore', { paths: ['../x'] })).isError).toBe(true);

    writeFiles(repo, { 'junk.txt': 'j\n', 'tmp/deep.txt': 'd\n', 'build/out.js': 'o\n' });
    const listed = await session.callTool('git_clean');
    expect(listed.text).toBe('Would remove 1 path from restore (dry run; nothing was removed: call again with dry_run false to remove them):\n  junk.txt');
    expect(existsSync(path.join(repo, 'junk.txt'))).toBe(true);
    expect((await session.callTool('git_clean', { directories: true, ignored: true })).text).toMatch(/Would remove 3 paths[\s\S]*build\/[\s\S]*junk\.txt[\s\S]*tmp\//);
    expect((await session.callTool('git_clean', { dry_run: false, directories: true })).text).toBe('Removed 2 paths from restore:\n  junk.txt\n  tmp/');
    expect(existsSync(path.join(repo, 'junk.txt'))).toBe(false);
    expect(existsSync(path.join(repo, 'build', 'out.js'))).toBe(true);
  });

  it('worktrees: add inside the allowed directories (not inside the repository, not outside), use one as repo_path, list, remove', async () => {
    const parent = path.join(base, 'wt');
    const repo = makeRepo(path.join(parent, 'main-repo'), { 'a.txt': 'a\n' });
    git(repo, ['branch', 'topic']);
    session = await open([parent], { allowWrite: true });
    const linked = path.join(parent, 'topic-tree');
    expect((await session.callTool('git_worktree_add', { repo_path: repo, path: linked, branch: 'topic' })).text).toBe(
      `Added a worktree of main-repo at ${linked} (branch topic). Give that path as repo_path to work in it.`,
    );
    const detached = path.join(parent, 'detached-tree');
    expect((await session.callTool('git_worktree_add', { repo_path: repo, path: detached })).isError).toBe(false);
    expect((await session.callTool('git_worktree_add', { repo_path: repo, path: path.join(repo, 'inner') })).text).toMatch(/is inside the working tree or git directory of main-repo/);
    const outside = await session.callTool('git_worktree_add', { repo_path: repo, path: path.join(base, 'elsewhere') });
    expect(outside.isError).toBe(true);
    expect(existsSync(path.join(base, 'elsewhere'))).toBe(false);
    expect((await session.callTool('git_worktree_add', { repo_path: repo, path: path.join(parent, 'again'), branch: 'topic' })).text).toMatch(/already checked out in another worktree/);

    const list = await session.callTool('git_worktree_list', { repo_path: repo });
    expect((list.structured as { worktrees: { path: string; branch?: string; main: boolean; detached: boolean }[] }).worktrees.map((w) => [w.path, w.branch, w.main, w.detached])).toEqual([
      [repo, 'main', true, false],
      [detached, undefined, false, true],
      [linked, 'topic', false, false],
    ]);
    // Every tool takes a worktree as repo_path: status, a commit there, the log.
    expect((await session.callTool('git_status', { repo_path: linked })).text).toMatch(/^On branch topic in topic-tree/);
    writeFiles(linked, { 'b.txt': 'b\n' });
    await session.callTool('git_add', { repo_path: linked, files: ['b.txt'] });
    expect((await session.callTool('git_commit', { repo_path: linked, message: 'work in the worktree' })).text).toMatch(/on topic in topic-tree/);
    expect(git(repo, ['log', '-1', '--format=%s', 'topic'])).toBe('work in the worktree\n');

    writeFiles(linked, { 'dirty.txt': 'x\n' });
    expect((await session.callTool('git_worktree_remove', { repo_path: repo, path: linked })).text).toMatch(/has uncommitted changes or untracked files; nothing was removed/);
    expect((await session.callTool('git_worktree_remove', { repo_path: repo, path: linked, force: true })).text).toBe(`Removed the worktree at ${linked} from main-repo; branch topic is kept.`);
    expect(existsSync(linked)).toBe(false);
    expect((await session.callTool('git_worktree_remove', { repo_path: repo, path: repo })).text).toMatch(/is the main worktree/);
  });

  it('prompts resolve-conflicts (hunks with both sides and the base, how to continue) and review-branch (with the previous authors of the touched lines)', async () => {
    const repo = conflictRepo(path.join(base, 'prompts'));
    session = await open([repo], { allowWrite: true });
    expect((await session.getPrompt('resolve-conflicts')).text).toBe('There are no conflicted files in prompts, so there is nothing to resolve.');
    await session.callTool('git_merge', { branch: 'feature' });
    const resolve = await session.getPrompt('resolve-conflicts');
    expect(resolve.description).toBe('Resolve the conflicts in prompts');
    expect(resolve.text).toContain('<<<<<<< ours (HEAD)\nTWO on main\n||||||| base\ntwo\n=======\ntwo on feature\n>>>>>>> theirs (');
    expect(resolve.text).toContain('Next: Edit each file to the text it should have (remove the markers), stage it with git_add, then git_merge with action continue');
    await session.callTool('git_merge', { action: 'abort' });

    // shared.txt's line 2 was last changed before feature forked (by Grace, in this fixture): review-branch names her.
    const other = makeRepo(path.join(base, 'review'), { 'shared.txt': 'one\ntwo\nthree\n' });
    writeFiles(other, { 'shared.txt': 'one\ntwo by grace\nthree\n' });
    git(other, ['commit', '--quiet', '-am', 'grace: line two'], { env: GRACE });
    git(other, ['checkout', '--quiet', '-b', 'topic']);
    commit(other, { 'shared.txt': 'one\ntwo, reworked on topic\nthree\n', 'added.txt': 'new\n' }, 'topic: rework two');
    await session.close();
    session = await open([other]);
    const review = await session.getPrompt('review-branch', { base: 'main' });
    expect(review.description).toBe('Review topic against main in review');
    expect(review.text).toContain('- shared.txt lines 2-2: Grace Hopper (');
    expect(review.text).toContain('grace: line two)');
    expect(review.resources.map((r) => r.uri)[0]).toMatch(/^git:\/\/review\/compare\/[0-9a-f]{40}\.\.[0-9a-f]{40}$/);
    expect(review.text).toContain('+two, reworked on topic');
    expect((await session.getPrompt('review-branch', { branch: 'main', base: 'topic' })).text).toMatch(/has no commits that topic does not have/);
  });

  it('resources git://<repo>/blame/{path} and git://<repo>/stash: read, listed, completed, and updated when the stash changes', async () => {
    const repo = makeRepo(path.join(base, 'resources'), { 'src/main.ts': 'a\nb\n' });
    const hub = new ChangeHub();
    try {
      session = await open([repo], { changes: hub, allowWrite: true });
      const blamed = await session.readResource(`git://resources/blame/${encodeURIComponent('src/main.ts')}`);
      expect(blamed.text).toMatch(/^# L1-2 [0-9a-f]{12} Test User <test@example\.com> 2024-05-01T12:00:00\+00:00 Initial commit\na\nb\n$/);
      expect((await session.complete({ template: 'git://{repo}/blame/{path}' }, 'path', 'src/')).values).toEqual(['src/main.ts']);
      expect((await session.complete({ template: 'git://{repo}/stash' }, 'repo', 'res')).values).toEqual(['resources']);
      const listed = (await session.client.listResources()).resources.map((r) => r.uri);
      expect(listed).toContain('git://resources/stash');
      expect((await session.readResource('git://resources/stash')).text).toBe('# The stash of resources is empty.\n');

      await session.client.subscribeResource({ uri: 'git://resources/stash' });
      let mark = session.mark();
      writeFiles(repo, { 'src/main.ts': 'changed\n' });
      await session.callTool('git_stash_push', { message: 'first' });
      await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'git://resources/stash', { timeoutMs: 20_000, after: mark });
      expect((await session.readResource('git://resources/stash')).text).toMatch(/^# 1 stash entry in resources\nstash@\{0\} \S+ On main: first/);
      writeFiles(repo, { 'src/main.ts': 'changed again\n' });
      await session.callTool('git_stash_push', { message: 'second' });
      mark = session.mark();
      // Dropping the older entry leaves refs/stash as it is: only the stash's reflog changes.
      await session.callTool('git_stash_drop', { index: 1 });
      await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'git://resources/stash', { timeoutMs: 20_000, after: mark });
      expect((await session.readResource('git://resources/stash')).text).toMatch(/^# 1 stash entry in resources\nstash@\{0\} \S+ On main: second/);
    } finally {
      await session?.close();
      session = undefined;
      await hub.close();
    }
  });

  it('read-only mode (the default) has the read tools and none of the writes; the built bin over stdio too', async () => {
    const repo = conflictRepo(path.join(base, 'stdio'));
    const readOnly = await spawnServer(BIN, [repo]);
    try {
      const names = (await readOnly.client.listTools()).tools.map((t) => t.name);
      for (const name of ['git_blame', 'git_stash_list', 'git_stash_show', 'git_worktree_list', 'git_tag_list', 'git_reflog', 'git_remote_list']) expect(names).toContain(name);
      for (const name of ['git_stash_push', 'git_stash_pop', 'git_tag_create', 'git_merge', 'git_rebase', 'git_cherry_pick', 'git_revert', 'git_restore', 'git_clean', 'git_worktree_add', 'git_worktree_remove']) {
        expect(names).not.toContain(name);
      }
      expect((await readOnly.callTool('git_blame', { path: 'shared.txt' })).text).toContain('main: change two');
      const refused = await protocolError(readOnly.callTool('git_merge', { branch: 'feature' }));
      expect(refused.message).toMatch(/git_merge/);
    } finally {
      await readOnly.close();
    }
    const writer = await spawnServer(BIN, ['--allow-write', repo]);
    try {
      const stopped = await writer.callTool('git_merge', { branch: 'feature' });
      expect(stopped.text).toContain('||||||| base\ntwo\n=======\ntwo on feature');
      expect((await writer.callTool('git_merge', { action: 'abort' })).isError).toBe(false);
      expect((await writer.callTool('git_tag_create', { name: 'from-bin', message: 'over stdio' })).isError).toBe(false);
      expect((await writer.callTool('git_tag_list')).text).toContain('from-bin');
    } finally {
      await writer.close();
    }
  });
});
