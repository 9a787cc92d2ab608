import { execFileSync } from 'node:child_process';
import { mkdirSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { DEFAULT_BUDGET } from '../src/server.js';
import { commit, git, makeRepo, open, writeFiles } from './helpers.js';

/**
 * What a bounded git output does when the repository is larger than the bound: every count is the
 * whole one, or the answer says it was cut (issue 28). Plus the wording and discovery points of the
 * same issue.
 */
describe('large outputs, odd .git entries and counts', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  let big: string;

  beforeAll(async () => {
    const made = await makeTempDir('git-prompts-caps-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
    // 100,000 staged paths (one blob, index entries only: the files are absent, so each is also
    // an unstaged deletion). git status prints about 13 MB for them, past runProcess's 10 MiB default.
    big = makeRepo(path.join(base, 'big'));
    const blob = git(big, ['hash-object', '-w', '--stdin'], { input: 'x\n' }).trim();
    const lines: string[] = [];
    for (let i = 0; i < 100_000; i++) lines.push(`100644 ${blob}\tdirectory-with-a-long-name-${Math.floor(i / 1000)}/file-number-${String(i).padStart(6, '0')}.txt`);
    git(big, ['update-index', '--index-info'], { input: `${lines.join('\n')}\n` });
  }, 60_000);
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('git_status and the status resource count all 100,000 staged files', async () => {
    session = await open([big]);
    const out = await session.callTool('git_status');
    expect(out.isError).toBe(false);
    const structured = out.structured as { staged: unknown[]; unstaged: unknown[]; complete: boolean };
    expect(structured.staged).toHaveLength(100_000);
    expect(structured.unstaged).toHaveLength(100_000);
    expect(structured.complete).toBe(true);
    expect(out.text).toContain('Staged for commit (100000):');
    expect(out.text).toContain('… and 99800 more');
    const resource = await session.readResource('git://big/status');
    expect(resource.text).toContain('Staged for commit (100000):');
    expect(resource.text).not.toContain('at least');
  }, 60_000);

  it('git_show of a tree longer than the listing cap says it was cut', async () => {
    const blob = git(big, ['hash-object', '-w', '--stdin'], { input: 'y\n' }).trim();
    const entries: string[] = [];
    for (let i = 0; i < 20_000; i++) entries.push(`100644 blob ${blob}\tan-entry-with-a-rather-long-file-name-${String(i).padStart(5, '0')}.txt`);
    const tree = git(big, ['mktree'], { input: `${entries.join('\n')}\n` }).trim();
    session = await open([big]);
    const out = await session.callTool('git_show', { revision: tree });
    expect(out.isError).toBe(false);
    const shown = out.text.split('\n').filter((l) => l.startsWith('an-entry-')).length;
    expect(shown).toBeGreaterThan(1000);
    expect(shown).toBeLessThan(20_000);
    expect(out.text).toContain(`[… the listing is longer than 1 MiB: only its first ${shown} entries are shown]`);
  });

  it('git_diff_staged shows the first part of a file whose diff is past every cap', async () => {
    const repo = makeRepo(path.join(base, 'huge-file'));
    // About 600 KB of diff: past the patch cap (256 KiB), so git is stopped inside this one file.
    writeFiles(repo, { 'data.txt': Array.from({ length: 12_000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n') + '\n', 'small.txt': 'small\n' });
    git(repo, ['add', '--all']);
    session = await open([repo]);
    const all = await session.callTool('git_diff_staged');
    expect(all.isError).toBe(false);
    expect(all.text).toContain('+line 0 ');
    expect(all.text).toContain(`[… the rest of the diff of data.txt left out: it is longer than 12 KiB]`);

    const one = await session.callTool('git_diff_staged', { path: 'data.txt' });
    expect(one.isError).toBe(false);
    expect(one.text).toContain('+line 0 ');
    expect(one.text).toContain('+line 100 ');
    expect(Buffer.byteLength(one.text)).toBeLessThan(DEFAULT_BUDGET.perFileBytes + 1024);
    expect(one.text).not.toContain('call git_diff_staged again');
    expect(one.text).toContain('[… the rest of the diff of data.txt left out');
  });

  it('a file whose cut diff is larger than the whole budget is shown within the per-file budget when asked for by path', async () => {
    const repo = makeRepo(path.join(base, 'budget'));
    writeFiles(repo, { 'big.txt': Array.from({ length: 2000 }, (_, i) => `row ${i}`).join('\n') + '\n' });
    git(repo, ['add', '--all']);
    session = await open([repo], { config: { budget: { ...DEFAULT_BUDGET, perFileBytes: 8 * 1024, totalBytes: 4 * 1024 } } });
    const all = await session.callTool('git_diff_staged');
    expect(all.text).toContain('# Left out of this diff (1 file changed; 0 shown above):');
    expect(all.text).toContain('# 1 file past the size budget (4 KiB for the whole diff):');
    expect(all.text).toContain('call git_diff_staged again with path');
    const one = await session.callTool('git_diff_staged', { path: 'big.txt' });
    expect(one.text).toContain('+row 0\n');
    expect(one.text).toMatch(/\[… \d+ more lines of the diff of big\.txt left out: it is longer than 8 KiB\]/);
    expect(one.text).not.toContain('Left out of this diff');
  });

  it('a folder whose .git is a FIFO, a socket-like entry or a dangling link is not a repository', async () => {
    const parent = path.join(base, 'odd');
    const fifo = path.join(parent, 'fifo-git');
    const dangling = path.join(parent, 'dangling-git');
    mkdirSync(fifo, { recursive: true });
    mkdirSync(dangling, { recursive: true });
    execFileSync('mkfifo', [path.join(fifo, '.git')]);
    execFileSync('ln', ['-s', path.join(parent, 'missing'), path.join(dangling, '.git')]);
    makeRepo(path.join(parent, 'real'));
    session = await open([parent]);
    const resources = await session.client.listResources();
    expect(resources.resources.map((r) => r.uri).filter((u) => u.endsWith('/status'))).toEqual(['git://real/status']);
    const refused = await session.callTool('git_status', { repo_path: fifo });
    expect(refused).toMatchObject({ isError: true });
    expect(refused.text).toContain('has a .git entry that is neither a directory nor a file');
    // The one real repository is still the default.
    expect((await session.callTool('git_status')).text).toMatch(/^On branch main in real/);
  });

  it('summarize-changes says there are no commits when the range is empty, and counts them when there are', async () => {
    const repo = makeRepo(path.join(base, 'tagged'));
    git(repo, ['tag', 'v1']);
    session = await open([repo]);
    const empty = await session.getPrompt('summarize-changes');
    expect(empty.description).toBe('No commits since v1 in tagged');
    expect(empty.text).toMatch(/^There are no commits since v1 in tagged, so there is nothing to summarise\./);
    expect(empty.text).not.toContain('attached');
    expect(empty.resources).toEqual([]);
    commit(repo, { 'a.txt': 'a\n' }, 'feat: a');
    const one = await session.getPrompt('summarize-changes');
    expect(one.text).toMatch(/^Summarise the changes since v1 in tagged\. Their 1 commit is attached; in all: 1 file changed, 1 insertion\(\+\)\./);
  });
});
