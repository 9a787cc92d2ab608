import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { commit, git, makeRepo, open, writeFiles } from './helpers.js';

describe('read tools', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-tools-'));
    repo = makeRepo(path.join(base, 'app'), { 'README.md': '# app\n', 'src/old.ts': 'export const old = 1;\n' });
    commit(repo, { 'src/feature.ts': 'export const feature = true;\n' }, 'feat: add the feature', '2024-05-10T12:00:00Z');
    git(repo, ['rm', '--quiet', 'src/old.ts']);
    commit(repo, {}, 'chore: remove old', '2024-05-20T12:00:00Z');
    git(repo, ['commit', '--quiet', '--allow-empty', '--message', 'docs: an empty commit by someone else'], {
      env: { GIT_AUTHOR_NAME: 'Grace Hopper', GIT_AUTHOR_EMAIL: 'grace@example.com', GIT_AUTHOR_DATE: '2024-06-01T12:00:00Z', GIT_COMMITTER_DATE: '2024-06-01T12:00:00Z' },
    });
    git(repo, ['tag', '--annotate', 'v1.0.0', '--message', 'Version 1.0.0'], { env: { GIT_COMMITTER_DATE: '2024-06-01T12:00:00Z' } });
    git(repo, ['branch', 'feature/login', 'HEAD~2']);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('git_status reports branch, upstream and every kind of change, as text and structured', async () => {
    const clone = path.join(base, 'clone');
    git(base, ['clone', '--quiet', repo, clone]);
    commit(clone, { 'local.txt': 'ahead\n' }, 'Local work');
    writeFiles(clone, { 'README.md': '# changed\n', 'staged.txt': 'staged\n', 'untracked.txt': 'u\n', 'a  name with spaces.txt': 's\n' });
    git(clone, ['add', 'staged.txt', 'a  name with spaces.txt']);
    git(clone, ['mv', 'src/feature.ts', 'src/renamed ä.ts']);
    session = await open([clone]);
    const out = await session.callTool('git_status', {});
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({
      repository: 'clone',
      branch: 'main',
      upstream: 'origin/main',
      ahead: 1,
      behind: 0,
      staged: [
        { path: 'a  name with spaces.txt', change: 'added' },
        { path: 'src/renamed ä.ts', from: 'src/feature.ts', change: 'renamed' },
        { path: 'staged.txt', change: 'added' },
      ],
      unstaged: [{ path: 'README.md', change: 'modified' }],
      untracked: [{ path: 'untracked.txt', change: 'untracked' }],
      conflicted: [],
    });
    expect(out.text).toMatch(/^On branch main in clone, tracking origin\/main \(ahead 1, behind 0\)/);
    expect(out.text).toMatch(/renamed:\s+src\/feature\.ts -> src\/renamed ä\.ts/);
    rmSync(clone, { recursive: true, force: true });
  });

  it('git_log: max_count, dates (ISO, relative, absolute), author, path (deleted files too), one shape', async () => {
    session = await open([repo]);
    const all = await session.callTool('git_log', {});
    expect(all.isError).toBe(false);
    expect((all.structured as { commits: unknown[] }).commits).toHaveLength(4);
    expect(all.text).toMatch(/^Commit history of app:\nCommit: [0-9a-f]{40}\nAuthor: Grace Hopper <grace@example\.com>\nDate: 2024-06-01T12:00:00\+00:00\nMessage: docs: an empty commit by someone else\n/);

    const capped = await session.callTool('git_log', { max_count: 2 });
    expect(capped.structured).toMatchObject({ more: true });
    expect((capped.structured as { commits: unknown[] }).commits).toHaveLength(2);
    expect(capped.text).toMatch(/raise max_count above 2/);

    const byDate = await session.callTool('git_log', { start_timestamp: '2024-05-09', end_timestamp: '2024-05-25T00:00:00' });
    expect((byDate.structured as { commits: { subject: string }[] }).commits.map((c) => c.subject)).toEqual(['chore: remove old', 'feat: add the feature']);
    const relative = await session.callTool('git_log', { start_timestamp: '20 years ago', end_timestamp: 'May 15 2024' });
    expect((relative.structured as { commits: { subject: string }[] }).commits.map((c) => c.subject)).toEqual(['feat: add the feature', 'Initial commit']);

    const byAuthor = await session.callTool('git_log', { author: 'GRACE' });
    expect((byAuthor.structured as { commits: { author: string }[] }).commits.map((c) => c.author)).toEqual(['Grace Hopper']);
    const deleted = await session.callTool('git_log', { path: 'src/old.ts' });
    expect((deleted.structured as { commits: { subject: string }[] }).commits.map((c) => c.subject)).toEqual(['chore: remove old', 'Initial commit']);

    // The same shape whether or not filters are given (the official server has two).
    const keys = (o: unknown): string[] => Object.keys((o as { commits: Record<string, unknown>[] }).commits[0]!).sort();
    expect(keys(byDate.structured)).toEqual(keys(all.structured));
    expect(byAuthor.text.split('\n')[1]).toMatch(/^Commit: [0-9a-f]{40}$/);

    const bad = await session.callTool('git_log', { start_timestamp: 'yesterday; rm -rf /' });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/start_timestamp must be a date/);
    // git reads a date it cannot parse as "now": an end date would return every commit, a start date none.
    for (const [name, value] of [['end_timestamp', 'garbage'], ['start_timestamp', 'not a date'], ['end_timestamp', 'never']] as const) {
      const out = await session.callTool('git_log', { [name]: value });
      expect(out.isError, `${name} ${value}`).toBe(true);
      expect(out.text).toBe(`${name} "${value}" is not a date git can read. Give a date such as 2024-01-15, 2024-01-15T14:30:25, "2 weeks ago" or "yesterday".`);
    }

    // An optional argument sent as null (the official server's schema allows it) is absent: the default applies.
    const nulls = await session.callTool('git_log', { max_count: null, start_timestamp: null, end_timestamp: null, author: null, path: null, repo_path: null });
    expect(nulls.isError, nulls.text).toBe(false);
    expect(nulls.structured).toEqual(all.structured);
  });

  it('git_show: a commit with its diff, an annotated tag, a file and a directory at a revision', async () => {
    session = await open([repo]);
    const shown = await session.callTool('git_show', { revision: 'HEAD~2' });
    expect(shown.text).toMatch(/^commit [0-9a-f]{40}\nAuthor: Test User <test@example\.com>\nDate: {3}2024-05-10T12:00:00\+00:00\n\n {4}feat: add the feature\n/);
    expect(shown.text).toMatch(/\+\+\+ b\/src\/feature\.ts\n@@ -0,0 \+1 @@\n\+export const feature = true;/);
    const root = await session.callTool('git_show', { revision: 'HEAD~3' });
    expect(root.text).toMatch(/new file mode 100644/);
    expect((await session.callTool('git_show', { revision: 'v1.0.0' })).text).toMatch(/^object [0-9a-f]{40}\ntype commit\ntag v1\.0\.0\n[\s\S]*Version 1\.0\.0/);
    expect((await session.callTool('git_show', { revision: 'HEAD~2:src/feature.ts' })).text).toBe('export const feature = true;\n');
    expect((await session.callTool('git_show', { revision: 'HEAD~2:src' })).text).toBe('feature.ts  (29 bytes)\nold.ts  (22 bytes)\n');
    const unknown = await session.callTool('git_show', { revision: 'nope' });
    expect(unknown).toMatchObject({ isError: true });
    expect(unknown.text).toMatch(/^Unknown revision "nope"/);
  });

  it('git_branch: local, remote and all, with contains and not_contains', async () => {
    const clone = path.join(base, 'clone2');
    git(base, ['clone', '--quiet', repo, clone]);
    session = await open([clone]);
    const local = await session.callTool('git_branch', {});
    expect(local.text).toMatch(/^\* main {2}[0-9a-f]{10} \[origin\/main\] docs: an empty commit by someone else$/);
    const remote = await session.callTool('git_branch', { branch_type: 'remote' });
    expect((remote.structured as { branches: { name: string }[] }).branches.map((b) => b.name).sort()).toEqual(['origin/feature/login', 'origin/main']);
    const all = await session.callTool('git_branch', { branch_type: 'all' });
    expect((all.structured as { branches: unknown[] }).branches).toHaveLength(3);
    const containing = await session.callTool('git_branch', { branch_type: 'all', contains: 'HEAD~1' });
    expect((containing.structured as { branches: { name: string }[] }).branches.map((b) => b.name).sort()).toEqual(['main', 'origin/main']);
    const notContaining = await session.callTool('git_branch', { branch_type: 'all', not_contains: 'HEAD~1' });
    expect((notContaining.structured as { branches: { name: string }[] }).branches.map((b) => b.name)).toEqual(['origin/feature/login']);
    rmSync(clone, { recursive: true, force: true });
  });

  it('git_diff_unstaged, git_diff_staged and git_diff against a target, with context_lines', async () => {
    const work = makeRepo(path.join(base, 'work'), { 'a.txt': '1\n2\n3\n4\n5\n6\n7\n8\n9\n' });
    writeFiles(work, { 'a.txt': '1\n2\n3\n4\nfive\n6\n7\n8\n9\n', 'b.txt': 'b\n' });
    git(work, ['add', 'b.txt']);
    session = await open([work]);
    const unstaged = await session.callTool('git_diff_unstaged', { context_lines: 1 });
    expect(unstaged.text).toMatch(/^Unstaged changes in work:\ndiff --git a\/a\.txt b\/a\.txt\n[\s\S]*@@ -4,3 \+4,3 @@\n 4\n-5\n\+five\n 6\n$/);
    const staged = await session.callTool('git_diff_staged', {});
    expect(staged.text).toMatch(/^Staged changes in work:\ndiff --git a\/b\.txt b\/b\.txt\nnew file mode/);
    expect(staged.text).not.toMatch(/a\.txt/);
    const target = await session.callTool('git_diff', { target: 'HEAD' });
    expect(target.text).toMatch(/^Changes against HEAD in work:/);
    expect(target.text).toMatch(/a\.txt[\s\S]*b\.txt/);
    git(work, ['reset', '--quiet']);
    git(work, ['checkout', '--quiet', '--', 'a.txt']);
    expect((await session.callTool('git_diff_unstaged', {})).text).toBe('No unstaged changes in work.');
    expect((await session.callTool('git_diff_staged', {})).text).toBe('No staged changes in work.');
    rmSync(work, { recursive: true, force: true });
  });
});

describe('the diff budget', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-budget-'));
    repo = makeRepo(path.join(base, 'big'), { 'README.md': '# big\n', 'logo.png': Buffer.alloc(2048, 1) });
    const files: Record<string, string | Buffer> = {
      'package-lock.json': JSON.stringify({ lockfileVersion: 3, packages: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, { version: '1.0.0' }])) }, null, 2),
      'web/dist/app.min.js': 'var a=1;'.repeat(1000),
      'huge.ts': Array.from({ length: 3000 }, (_, i) => `export const value${i} = ${i};`).join('\n') + '\n',
      'logo.png': Buffer.concat([Buffer.alloc(10, 0), Buffer.alloc(4086, 2)]),
    };
    for (let i = 0; i < 60; i++) files[`src/module${String(i).padStart(2, '0')}.ts`] = Array.from({ length: 40 }, (_, j) => `export const m${i}_${j} = ${j};`).join('\n') + '\n';
    writeFiles(repo, files);
    git(repo, ['add', '--all']);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('leaves out lock and generated files, cuts a long file, stops at the total and says what it left out', async () => {
    session = await open([repo], { config: { budget: { perFileBytes: 4096, totalBytes: 20_000, exclude: ['**/package-lock.json', '**/*.min.js'] } } });
    const out = await session.callTool('git_diff_staged', {});
    expect(out.isError).toBe(false);
    const text = out.text;
    expect(Buffer.byteLength(text)).toBeLessThan(20_000 + 8_000);
    expect(text).not.toMatch(/lockfileVersion|var a=1/);
    expect(text).toMatch(/\[… \d+ more lines of the diff of huge\.ts left out: it is longer than 4 KiB\]/);
    expect(text).toMatch(/Binary file logo\.png \(modified\): 2 KiB -> 4 KiB/);
    expect(text).toMatch(/# Left out of this diff \(64 files changed; \d+ shown above\):/);
    expect(text).toMatch(/# \d+ files past the size budget \(19.5 KiB for the whole diff\):\n# {3}src\/module\d\d\.ts \(added\)/);
    expect(text).toMatch(/# 2 lock or generated files \(left out by pattern\):\n# {3}package-lock\.json \(added\)\n# {3}web\/dist\/app\.min\.js \(added\)/);
    expect(text).toMatch(/call git_diff_staged again with path set to it/);
    // Naming a left-out file shows it.
    const lock = await session.callTool('git_diff_staged', { path: 'package-lock.json' });
    expect(lock.text).toMatch(/lockfileVersion/);
  });

  it('lists at most 40 left-out files by name and counts the rest', async () => {
    session = await open([repo], { config: { budget: { perFileBytes: 1024, totalBytes: 2048, exclude: [] } } });
    const text = (await session.callTool('git_diff_staged', {})).text;
    expect(text.match(/^# {3}/gm)?.length).toBe(41);
    expect(text).toMatch(/# {3}… and \d+ more\n/);
  });

  it('honours a configured exclusion and an empty one', async () => {
    session = await open([repo], { config: { budget: { perFileBytes: 100_000, totalBytes: 10_000_000, exclude: ['src/**'] } } });
    const text = (await session.callTool('git_diff_staged', {})).text;
    expect(text).not.toMatch(/diff --git a\/src\//);
    expect(text).toMatch(/lockfileVersion/);
    expect(text).toMatch(/# 60 lock or generated files \(left out by pattern\):\n# {3}src\/module00\.ts \(added\)/);
  });
});

describe('diffs of awkward states', () => {
  it('keeps each file\'s diff with its name: conflicts, quoted names, renames', async () => {
    const { dir, cleanup } = await makeTempDir('git-prompts-awkward-');
    const repo = makeRepo(path.join(dir, 'app'), { 'conflict.txt': '1\n2\n', 'old-name.txt': 'same content for the rename\n'.repeat(5), 'z.txt': 'z\n' });
    git(repo, ['checkout', '--quiet', '-b', 'other']);
    commit(repo, { 'conflict.txt': '1\nother\n' }, 'other side');
    git(repo, ['checkout', '--quiet', 'main']);
    commit(repo, { 'conflict.txt': '1\nmain\n' }, 'main side');
    try {
      git(repo, ['merge', '--quiet', 'other']);
    } catch {
      // The conflict is the point.
    }
    git(repo, ['mv', 'old-name.txt', 'new-name.txt']);
    writeFiles(repo, { 'quote"d.txt': 'q\n', 'tab\there.txt': 't\n', 'z.txt': 'zz\n' });
    git(repo, ['add', 'quote"d.txt', 'tab\there.txt', 'z.txt']);
    writeFiles(repo, { 'z.txt': 'zzz\n' });
    const session = await open([repo]);
    try {
      const staged = (await session.callTool('git_diff_staged', {})).text;
      expect(staged).toMatch(/Unmerged file conflict\.txt: it has a conflict to resolve/);
      expect(staged).toMatch(/diff --git a\/old-name\.txt b\/new-name\.txt\nsimilarity index 100%\nrename from old-name\.txt\nrename to new-name\.txt\n/);
      expect(staged).toMatch(/diff --git "a\/quote\\"d\.txt" "b\/quote\\"d\.txt"\nnew file mode 100644\n[^]*\n\+q\n/);
      expect(staged).toMatch(/diff --git "a\/tab\\there\.txt" "b\/tab\\there\.txt"\nnew file mode 100644\n[^]*\n\+t\n/);
      expect(staged).toMatch(/diff --git a\/z\.txt b\/z\.txt\n[^]*-z\n\+zz\n/);
      expect(staged).not.toMatch(/Left out/);
      const unstaged = (await session.callTool('git_diff_unstaged', {})).text;
      expect(unstaged).toMatch(/^Unstaged changes in app:\ndiff --cc conflict\.txt\n/);
      expect(unstaged).toMatch(/diff --git a\/z\.txt b\/z\.txt\n[^]*-zz\n\+zzz\n$/);
      expect(unstaged.match(/^diff --.*conflict\.txt$/gm)).toHaveLength(1);
      expect(unstaged).not.toMatch(/Left out|Unmerged file/);
      const status = await session.callTool('git_status', {});
      expect(status.structured).toMatchObject({ conflicted: [{ path: 'conflict.txt', change: 'conflicted' }] });
    } finally {
      await session.close();
      await cleanup();
    }
  });
});

describe('choosing the repository', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-choose-'));
    makeRepo(path.join(base, 'code', 'app'));
    makeRepo(path.join(base, 'code', 'lib'), { 'lib.txt': 'lib\n' });
    makeRepo(path.join(base, 'code', 'group', 'app'), { 'other.txt': 'other\n' });
    mkdirSync(path.join(base, 'code', 'node_modules', 'dep'), { recursive: true });
    makeRepo(path.join(base, 'code', 'node_modules', 'dep'));
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('needs no repo_path with one repository, and asks for one with several', async () => {
    session = await open([path.join(base, 'code', 'lib')]);
    expect((await session.callTool('git_status', {})).text).toMatch(/in lib/);
    await session.close();
    session = await open([path.join(base, 'code')]);
    const out = await session.callTool('git_status', {});
    expect(out.isError).toBe(true);
    expect(out.text).toBe('Several repositories are available: app, app-2, lib. Say which one with repo_path (one of these names, or a path).');
  });

  it('takes a name, an absolute path or a path relative to the first root, and a directory inside a repository', async () => {
    session = await open([path.join(base, 'code')]);
    expect((await session.callTool('git_status', { repo_path: 'lib' })).text).toMatch(/in lib/);
    expect((await session.callTool('git_status', { repo_path: 'app-2' })).text).toMatch(/in app-2/);
    expect((await session.callTool('git_status', { repo_path: path.join(base, 'code', 'group', 'app') })).text).toMatch(/in app-2/);
    expect((await session.callTool('git_status', { repo_path: 'group/app' })).text).toMatch(/in app-2/);
    mkdirSync(path.join(base, 'code', 'lib', 'deep', 'er'), { recursive: true });
    expect((await session.callTool('git_status', { repo_path: 'lib/deep/er' })).text).toMatch(/in lib/);
    const missing = await session.callTool('git_status', { repo_path: 'nope' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toMatch(/Not found: nope/);
  });

  it('does not look into node_modules or deeper than --scan-depth', async () => {
    session = await open([path.join(base, 'code')], { config: { scanDepth: 1 } });
    expect((await session.complete({ prompt: 'git-commit' }, 'repo', '')).values).toEqual(['app', 'lib']);
  });

  it('reports a repository with no commits yet plainly', async () => {
    const empty = path.join(base, 'empty');
    mkdirSync(empty);
    git(empty, ['init', '--quiet', '--initial-branch=main']);
    session = await open([empty]);
    expect((await session.callTool('git_status', {})).text).toMatch(/^On branch main in empty \(no commits yet\)/);
    expect((await session.callTool('git_log', {})).text).toBe('No commits in empty match.');
    expect((await session.callTool('git_show', { revision: 'HEAD' })).text).toMatch(/Unknown revision "HEAD"/);
  });
});
