import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { git, makeRepo, open, writeFiles } from './helpers.js';

const WRITE_TOOLS = ['git_add', 'git_reset', 'git_commit', 'git_create_branch', 'git_checkout'];

describe('write tools', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeEach(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-write-'));
    repo = makeRepo(path.join(base, 'app'), { 'README.md': '# app\n', '.gitignore': 'secret.env\n' });
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await cleanup();
  });

  it('are not there without --allow-write: not listed, and unknown when called', async () => {
    session = await open([repo]);
    const names = await session.toolNames();
    for (const name of WRITE_TOOLS) expect(names).not.toContain(name);
    await expect(session.callTool('git_commit', { message: 'x' })).rejects.toThrow(/Unknown tool: git_commit/);
  });

  it('stage, unstage and commit; refuse to commit with nothing staged', async () => {
    session = await open([repo], { allowWrite: true });
    writeFiles(repo, { 'a.txt': 'a\n', 'b.txt': 'b\n', 'secret.env': 'TOKEN=1\n' });
    const nothing = await session.callTool('git_commit', { message: 'Empty' });
    expect(nothing).toMatchObject({ isError: true });
    expect(nothing.text).toBe('Nothing is staged in app, so there is nothing to commit. Stage changes with git_add first (git_status shows what changed).');

    const ignored = await session.callTool('git_add', { files: ['secret.env'] });
    expect(ignored.isError).toBe(true);
    expect(ignored.text).toMatch(/is ignored \(\.gitignore\)/);
    const unmatched = await session.callTool('git_add', { files: ['missing.txt'] });
    expect(unmatched.text).toMatch(/"missing\.txt" matches no file with changes in app/);

    const added = await session.callTool('git_add', { files: ['a.txt', 'b.txt'] });
    expect(added.text).toBe('Staged 2 paths in app.\nStaged now (2):\n  added:        a.txt\n  added:        b.txt');
    const reset = await session.callTool('git_reset', { files: ['b.txt'] });
    expect(reset.text).toBe('Unstaged b.txt in app; the working tree is unchanged.\nStaged now (1):\n  added:        a.txt');

    const committed = await session.callTool('git_commit', { message: '  Add a\n\nBecause we need it.\n' });
    expect(committed.isError).toBe(false);
    expect(committed.structured).toMatchObject({ repository: 'app', branch: 'main', summary: 'Add a' });
    expect(committed.text).toMatch(/^Committed [0-9a-f]{12} on main in app: Add a$/);
    expect(git(repo, ['log', '-1', '--format=%B'])).toBe('Add a\n\nBecause we need it.\n\n');
    expect(git(repo, ['log', '-1', '--format=%an <%ae>'])).toBe('Test User <test@example.com>\n');
    expect(git(repo, ['status', '--porcelain'])).toBe('?? b.txt\n');

    // Deleting a file and staging the deletion by name.
    rmSync(path.join(repo, 'a.txt'));
    expect((await session.callTool('git_add', { files: ['a.txt'] })).text).toMatch(/deleted:\s+a\.txt/);
    expect((await session.callTool('git_reset', {})).text).toMatch(/^Unstaged everything in app; the working tree is unchanged\.\nNothing is staged now\.$/);
  });

  it('unstage before the first commit', async () => {
    const fresh = path.join(base, 'fresh');
    mkdirSync(fresh);
    git(fresh, ['init', '--quiet', '--initial-branch=main']);
    writeFiles(fresh, { 'x.txt': 'x\n', 'y.txt': 'y\n' });
    session = await open([fresh], { allowWrite: true });
    await session.callTool('git_add', { files: ['.'] });
    expect((await session.callTool('git_reset', { files: ['x.txt'] })).text).toMatch(/Staged now \(1\):\n\s+added:\s+y\.txt/);
    expect((await session.callTool('git_reset', {})).text).toMatch(/Nothing is staged now/);
    expect(git(fresh, ['status', '--porcelain'])).toBe('?? x.txt\n?? y.txt\n');
    const created = await session.callTool('git_create_branch', { branch_name: 'topic' });
    expect(created.text).toMatch(/has no commits yet/);
  });

  it('says what to do when git does not know who the user is', async () => {
    const home = process.env.HOME!;
    const emptyHome = path.join(base, 'home');
    mkdirSync(emptyHome);
    session = await open([repo], { allowWrite: true });
    writeFiles(repo, { 'a.txt': 'a\n' });
    await session.callTool('git_add', { files: ['a.txt'] });
    process.env.HOME = emptyHome;
    try {
      // Without a configured identity git would guess one from the host; the server never lets it.
      const out = await session.callTool('git_commit', { message: 'Add a' });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/git does not know who you are\. Set your name and email in your global git configuration/);
    } finally {
      process.env.HOME = home;
    }
  });

  it('signs only as the user\'s own global configuration says, with the user\'s program', async () => {
    const home = process.env.HOME!;
    const gitconfig = path.join(home, '.gitconfig');
    const before = readFileSync(gitconfig, 'utf8');
    const signer = path.join(base, 'fake-gpg');
    // Answers like gpg: a status line on the status fd (2), the signature on stdout.
    writeFileSync(signer, '#!/bin/sh\ncat > /dev/null\necho "[GNUPG:] SIG_CREATED D 1 8 00 1714564800 FAKE" >&2\nprintf -- "-----BEGIN PGP SIGNATURE-----\\n\\nfake\\n-----END PGP SIGNATURE-----\\n"\n');
    chmodSync(signer, 0o755);
    session = await open([repo], { allowWrite: true });
    try {
      writeFileSync(gitconfig, `${before}[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = ${signer}\n`);
      writeFiles(repo, { 'signed.txt': 's\n' });
      await session.callTool('git_add', { files: ['signed.txt'] });
      const out = await session.callTool('git_commit', { message: 'Signed by the user' });
      expect(out.isError, out.text).toBe(false);
      expect(git(repo, ['cat-file', 'commit', 'HEAD'])).toMatch(/gpgsig -----BEGIN PGP SIGNATURE-----/);
    } finally {
      writeFileSync(gitconfig, before);
    }
    writeFiles(repo, { 'unsigned.txt': 'u\n' });
    await session.callTool('git_add', { files: ['unsigned.txt'] });
    expect((await session.callTool('git_commit', { message: 'Not signed' })).isError).toBe(false);
    expect(git(repo, ['cat-file', 'commit', 'HEAD'])).not.toMatch(/gpgsig/);
  });

  it('create branches and switch between them, never discarding work', async () => {
    session = await open([repo], { allowWrite: true });
    const created = await session.callTool('git_create_branch', { branch_name: 'feature/x' });
    expect(created.text).toMatch(/^Created branch feature\/x at [0-9a-f]{12} \(from HEAD\) in app\. Switch to it with git_checkout\.$/);
    expect((await session.callTool('git_create_branch', { branch_name: 'feature/x' })).text).toBe('A branch named feature/x already exists in app.');
    for (const [bad, why] of [
      ['has space', 'it contains a space, which git does not allow in a branch name'],
      ['a..b', 'it contains "..", which git reads as a range'],
      ['end.lock', 'its part "end.lock" ends with ".lock", which git reserves for its lock files'],
      ['HEAD', '"HEAD" is reserved by git'],
      ['x@{1}', 'it contains "@{", which git reads as a reflog reference'],
      ['-x', 'it starts with "-", which git would read as an option'],
      ['refs/heads/-x', 'it starts with "refs/"; give the short name of the branch, as git_branch lists it (without refs/heads/)'],
      ['refs/heads/topic', 'it starts with "refs/"; give the short name of the branch, as git_branch lists it (without refs/heads/)'],
      ['a/.hidden', 'its part ".hidden" begins with ".", which git does not allow'],
      ['trailing/', 'it begins or ends with "/", or has an empty part between two slashes'],
      ['what?', 'it contains "?", which git does not allow in a branch name'],
      ['tab\there', 'it contains a control character, which git does not allow in a branch name'],
    ] as const) {
      expect((await session.callTool('git_create_branch', { branch_name: bad })).text, bad).toBe(`${JSON.stringify(bad)} is not a valid branch name: ${why}.`);
    }
    expect(git(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads'])).toBe('refs/heads/feature/x\nrefs/heads/main\n');
    expect((await session.callTool('git_checkout', { branch_name: 'refs/heads/feature/x' })).text).toMatch(/^"refs\/heads\/feature\/x" is not a valid branch name: it starts with "refs\/"/);
    expect((await session.callTool('git_create_branch', { branch_name: 'y', base_branch: 'nope' })).text).toMatch(/Unknown base branch "nope"/);

    writeFiles(repo, { 'README.md': '# changed, not committed\n' });
    const refused = await session.callTool('git_checkout', { branch_name: 'feature/x' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/^app has uncommitted changes \(README\.md\)\. Commit them \(git_commit\) or stash them yourself before switching branches; nothing was changed\.$/);
    expect(readFileSync(path.join(repo, 'README.md'), 'utf8')).toBe('# changed, not committed\n');
    expect(git(repo, ['branch', '--show-current'])).toBe('main\n');

    git(repo, ['checkout', '--quiet', '--', 'README.md']);
    expect((await session.callTool('git_checkout', { branch_name: 'feature/x' })).text).toBe('Switched to branch feature/x in app.');
    expect(git(repo, ['branch', '--show-current'])).toBe('feature/x\n');
    expect((await session.callTool('git_checkout', { branch_name: 'feature/x' })).text).toBe('Already on feature/x in app.');
    const missing = await session.callTool('git_checkout', { branch_name: 'nope' });
    expect(missing.text).toMatch(/There is no local branch nope in app\. Local branches: /);
  });

  it('refuse a checkout that would overwrite untracked files', async () => {
    git(repo, ['checkout', '--quiet', '-b', 'other']);
    writeFiles(repo, { 'clash.txt': 'committed on other\n' });
    git(repo, ['add', 'clash.txt']);
    git(repo, ['commit', '--quiet', '-m', 'clash']);
    git(repo, ['checkout', '--quiet', 'main']);
    writeFiles(repo, { 'clash.txt': 'my untracked work\n' });
    session = await open([repo], { allowWrite: true });
    const out = await session.callTool('git_checkout', { branch_name: 'other' });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/would overwrite untracked files/);
    expect(readFileSync(path.join(repo, 'clash.txt'), 'utf8')).toBe('my untracked work\n');
  });

  it('point at the remote branch when only a remote-tracking one exists', async () => {
    const clone = path.join(base, 'clone');
    git(repo, ['branch', 'topic']);
    git(base, ['clone', '--quiet', repo, clone]);
    session = await open([clone], { allowWrite: true });
    const out = await session.callTool('git_checkout', { branch_name: 'topic' });
    expect(out.text).toBe('There is no local branch topic, but there is origin/topic. Create it with git_create_branch (branch_name topic, base_branch origin/topic), then switch.');
    expect((await session.callTool('git_create_branch', { branch_name: 'topic', base_branch: 'origin/topic' })).isError).toBe(false);
    expect((await session.callTool('git_checkout', { branch_name: 'topic' })).isError).toBe(false);
  });

  it('never discard a merge in progress: git_reset refuses, or unstages other files and keeps the merge', async () => {
    writeFiles(repo, { 'shared.txt': 'base\n' });
    git(repo, ['add', 'shared.txt']);
    git(repo, ['commit', '--quiet', '-m', 'base']);
    git(repo, ['checkout', '--quiet', '-b', 'topic']);
    writeFiles(repo, { 'shared.txt': 'topic\n' });
    git(repo, ['commit', '--quiet', '-am', 'topic']);
    git(repo, ['checkout', '--quiet', 'main']);
    writeFiles(repo, { 'shared.txt': 'main\n' });
    git(repo, ['commit', '--quiet', '-am', 'main']);
    expect(() => git(repo, ['merge', '--quiet', 'topic'])).toThrow();
    writeFiles(repo, { 'other.txt': 'other\n' });
    git(repo, ['add', 'other.txt']);
    const mergeState = (): boolean[] => ['MERGE_HEAD', 'MERGE_MSG'].map((f) => existsSync(path.join(repo, '.git', f)));
    expect(mergeState()).toEqual([true, true]);

    session = await open([repo], { allowWrite: true });
    const all = await session.callTool('git_reset', {});
    expect(all.isError).toBe(true);
    expect(all.text).toBe(
      'app is in the middle of a merge; unstaging everything would discard its state (and its conflicts), so nothing was changed. Finish it (git_merge with action continue once the conflicts are resolved and staged (git_add), or abort), or name the files to unstage.',
    );
    for (const files of [['shared.txt'], ['.']]) {
      const out = await session.callTool('git_reset', { files });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/^app is in the middle of a merge and shared\.txt has a conflict; unstaging would discard the conflict, so nothing was changed\./);
    }
    expect(mergeState()).toEqual([true, true]);
    expect(git(repo, ['ls-files', '--unmerged'])).not.toBe('');

    const other = await session.callTool('git_reset', { files: ['other.txt'] });
    expect(other.isError, other.text).toBe(false);
    expect(other.text).toMatch(/^Unstaged other\.txt in app; the working tree is unchanged\. The merge in progress is kept\./);
    expect(mergeState()).toEqual([true, true]);
    expect(git(repo, ['ls-files', '--unmerged'])).not.toBe('');
    expect(git(repo, ['status', '--porcelain'])).toBe('UU shared.txt\n?? other.txt\n');
  });
});
