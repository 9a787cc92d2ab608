import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError, type TestSession } from '@suite/test-kit';
import { commit, git, makeRepo, open, writeFiles } from './helpers.js';

describe('prompts', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-prompts-'));
    repo = makeRepo(path.join(base, 'app'), { 'README.md': '# app\n', 'src/parser.ts': 'export function parse(s: string) {\n  return s.split(",");\n}\n' });
    git(repo, ['tag', 'v1.0.0']);
    commit(repo, { 'src/cli.ts': 'console.log(1);\n' }, 'feat(cli): add the command line');
    commit(repo, { 'src/parser.ts': 'export function parse(s: string) {\n  return s.trim().split(",");\n}\n' }, 'fix(parser): trim input', '2024-05-03T12:00:00Z');
    commit(repo, { 'docs/guide.md': '# guide\n' }, 'docs: add a guide\n\nBREAKING CHANGE: the guide replaces the wiki', '2024-05-04T12:00:00Z');
    git(repo, ['checkout', '--quiet', '-b', 'feature/export']);
    commit(repo, { 'src/export.ts': 'export const exported = 1;\n' }, 'feat: export data', '2024-05-05T12:00:00Z');
    writeFiles(repo, { 'src/export.ts': 'export const exported = 2;\n', 'package-lock.json': '{"lockfileVersion":3}\n' });
    git(repo, ['add', 'src/export.ts', 'package-lock.json']);
    writeFiles(repo, { 'README.md': '# app, edited\n' });
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('lists six prompts, each with optional single-token arguments except explain-code\'s code', async () => {
    session = await open([repo]);
    const { prompts } = await session.client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['git-commit', 'explain-code', 'review-changes', 'pr-description', 'summarize-changes', 'changelog', 'resolve-conflicts', 'review-branch']);
    for (const prompt of prompts) {
      expect(prompt.description!.length).toBeGreaterThan(40);
      for (const arg of prompt.arguments ?? []) {
        expect(arg.description, `${prompt.name}.${arg.name}`).toBeTruthy();
        expect(arg.required, `${prompt.name}.${arg.name}`).toBe(prompt.name === 'explain-code' && arg.name === 'code');
      }
    }
  });

  it('git-commit with no argument: instructions in the repository\'s style, and the staged diff embedded by URI', async () => {
    session = await open([repo]);
    const prompt = await session.getPrompt('git-commit');
    expect(prompt.description).toBe('Commit message for the staged changes in app');
    expect(prompt.messages).toHaveLength(2);
    const [instructions, diff] = prompt.messages;
    expect(instructions!.content).toMatchObject({ type: 'text' });
    const text = (instructions!.content as { text: string }).text;
    expect(text).toMatch(/^Write a git commit message for the staged changes in app \(their diff is attached\)\./);
    expect(text).toMatch(/This repository uses Conventional Commits/);
    expect(text).toMatch(/Recent commit subjects in this repository, for its style:\n {2}feat: export data\n {2}docs: add a guide/);
    expect(diff!.content).toMatchObject({ type: 'resource', resource: { uri: 'git://app/diff/staged', mimeType: 'text/x-diff' } });
    const embedded = (diff!.content as { resource: { text: string } }).resource.text;
    expect(embedded).toMatch(/^diff --git a\/src\/export\.ts b\/src\/export\.ts\n/);
    expect(embedded).toMatch(/# 1 lock or generated file \(left out by pattern\):\n# {3}package-lock\.json \(added\)/);
    expect(embedded).not.toMatch(/README/);
    // The embedded resource is the resource: a client can fetch it again by its URI.
    expect((await session.readResource('git://app/diff/staged')).text).toBe(embedded);
  });

  it('git-commit with changes describes those, and with nothing staged says so with the status attached', async () => {
    session = await open([repo]);
    const given = await session.getPrompt('git-commit', { changes: 'Renamed parse to parseList' });
    expect(given.messages).toHaveLength(1);
    expect(given.text).toMatch(/Write a git commit message for these changes\.[\s\S]*The changes:\n\nRenamed parse to parseList$/);

    const clean = makeRepo(path.join(base, 'clean'));
    writeFiles(clean, { 'notes.txt': 'not staged\n' });
    await session.close();
    session = await open([clean]);
    const empty = await session.getPrompt('git-commit');
    expect(empty.description).toBe('Nothing is staged in clean');
    expect(empty.text).toMatch(/^Nothing is staged in clean, so there is no commit message to write yet\./);
    expect(empty.resources).toEqual([expect.objectContaining({ uri: 'git://clean/status', mimeType: 'text/plain' })]);
    expect(empty.text).toMatch(/Untracked \(1\):\n {2}notes\.txt/);
  });

  it('review-changes picks staged, then unstaged, then the last commit, or a base branch', async () => {
    session = await open([repo]);
    const staged = await session.getPrompt('review-changes');
    expect(staged.text).toMatch(/^Review the staged changes in app \(the diff is attached\)\./);
    expect(staged.resources.map((r) => r.uri)).toEqual(['git://app/diff/staged']);
    const unstaged = await session.getPrompt('review-changes', { base: 'unstaged', focus: 'security' });
    expect(unstaged.text).toMatch(/Review the unstaged changes in app[\s\S]*Pay special attention to security\./);
    expect(unstaged.resources[0]).toMatchObject({ uri: 'git://app/diff/unstaged' });
    expect(unstaged.resources[0]!).toHaveProperty('text', expect.stringMatching(/README\.md/));
    const sinceMain = await session.getPrompt('review-changes', { base: 'main' });
    expect(sinceMain.resources[0]).toMatchObject({ uri: 'git://app/compare/main...HEAD'.replace('main...HEAD', encodeURIComponent('main...HEAD')) });
    expect(sinceMain.text).toMatch(/src\/export\.ts/);
    expect(sinceMain.text).not.toMatch(/src\/cli\.ts/);
    expect((await protocolError(session.getPrompt('review-changes', { base: 'nope' }))).message).toMatch(/Unknown base "nope"/);

    const clean = makeRepo(path.join(base, 'clean2'));
    await session.close();
    session = await open([clean]);
    const last = await session.getPrompt('review-changes');
    expect(last.text).toMatch(/Review the last commit \(nothing is staged or changed in the working tree\)/);
    expect(last.resources[0]).toMatchObject({ uri: 'git://clean2/show/HEAD' });
  });

  it('pr-description compares with the default branch: commits and diff attached', async () => {
    session = await open([repo]);
    const pr = await session.getPrompt('pr-description');
    expect(pr.description).toBe('Pull request: feature/export into main');
    expect(pr.text).toMatch(/^Write a pull request description for merging feature\/export into main in app \(1 commit\)\./);
    expect(pr.resources.map((r) => r.uri)).toEqual([`git://app/log/${encodeURIComponent('main..HEAD')}`, `git://app/compare/${encodeURIComponent('main...HEAD')}`]);
    expect(pr.resources[0]).toHaveProperty('text', expect.stringMatching(/^[0-9a-f]{10} 2024-05-05 Test User: feat: export data\n$/));
    const same = await session.getPrompt('pr-description', { base: 'feature/export' });
    expect(same.text).toMatch(/has no commits that feature\/export does not have/);
  });

  it('summarize-changes defaults to everything since the last tag, and takes a range', async () => {
    session = await open([repo]);
    const since = await session.getPrompt('summarize-changes');
    expect(since.description).toBe('Summary of the changes since v1.0.0 in app');
    expect(since.text).toMatch(/in all: 4 files changed, \d+ insertions?\(\+\)/);
    expect(since.resources[0]!.uri).toBe(`git://app/log/${encodeURIComponent('v1.0.0..HEAD')}`);
    expect(since.resources[0]).toHaveProperty('text', expect.stringMatching(/feat: export data[\s\S]*fix\(parser\): trim input[\s\S]*feat\(cli\): add the command line\n$/));
    const range = await session.getPrompt('summarize-changes', { range: 'HEAD~2..HEAD~1' });
    expect(range.resources[0]).toHaveProperty('text', expect.stringMatching(/^[0-9a-f]{10} 2024-05-04 Test User: docs: add a guide\n {4}BREAKING CHANGE: the guide replaces the wiki\n$/));
  });

  it('changelog groups a Conventional Commits history by type, breaking changes first', async () => {
    session = await open([repo]);
    const log = await session.getPrompt('changelog');
    expect(log.description).toBe('Changelog since v1.0.0 in app');
    expect(log.messages).toHaveLength(3);
    expect(log.text).toMatch(/Keep a Changelog/);
    const grouped = (log.messages[2]!.content as { text: string }).text;
    expect(grouped).toMatch(/^The history uses Conventional Commits; here are the commits grouped by type:\n\nBreaking changes:\n {2}- docs: add a guide \([0-9a-f]{10}\)\n\nFeatures:\n {2}- feat: export data \([0-9a-f]{10}\)\n {2}- feat\(cli\): add the command line \([0-9a-f]{10}\)\n\nFixes:\n {2}- fix\(parser\): trim input/);
    expect((await session.getPrompt('changelog', { from: 'HEAD' })).text).toMatch(/There are no commits since HEAD/);
  });

  it('explain-code takes code, or a file path whose file is attached as it is in the working tree', async () => {
    session = await open([repo]);
    const file = await session.getPrompt('explain-code', { code: 'src/parser.ts' });
    expect(file.text).toMatch(/^Explain the TypeScript file src\/parser\.ts of app \(attached, as it is in the working tree\)\./);
    expect(file.resources).toEqual([{ uri: `git://app/file/${encodeURIComponent('src/parser.ts')}`, mimeType: 'text/plain', text: 'export function parse(s: string) {\n  return s.trim().split(",");\n}\n' }]);
    const code = await session.getPrompt('explain-code', { code: 'const x = [1, 2].map((n) => n * 2);', language: 'JavaScript' });
    expect(code.resources).toEqual([]);
    expect(code.text).toMatch(/Explain this JavaScript code\.[\s\S]*```javascript\nconst x = \[1, 2\]\.map\(\(n\) => n \* 2\);\n```$/);
    expect((await protocolError(session.getPrompt('explain-code', {}))).code).toBe(-32602);
  });

  it('treats empty arguments (which some clients send for optional ones) as omitted', async () => {
    session = await open([repo]);
    expect((await session.getPrompt('git-commit', { changes: '', repo: '' })).description).toBe('Commit message for the staged changes in app');
    expect((await session.getPrompt('review-changes', { base: '', focus: '', repo: '' })).text).toMatch(/^Review the staged changes in app/);
    expect((await session.getPrompt('pr-description', { base: '', repo: '' })).description).toBe('Pull request: feature/export into main');
    expect((await session.getPrompt('summarize-changes', { range: '', repo: '' })).description).toBe('Summary of the changes since v1.0.0 in app');
    expect((await session.getPrompt('changelog', { from: '', repo: '' })).description).toBe('Changelog since v1.0.0 in app');
    expect((await session.getPrompt('explain-code', { code: 'src/parser.ts', language: '', repo: '' })).text).toMatch(/^Explain the TypeScript file src\/parser\.ts/);
  });

  it('asks which repository when there are several, naming them', async () => {
    makeRepo(path.join(base, 'other'));
    session = await open([base]);
    const error = await protocolError(session.getPrompt('review-changes'));
    expect(error.message).toMatch(/^Several repositories are available: app, clean, clean2, other\. Say which one with repo \(/);
    expect((await session.getPrompt('review-changes', { repo: 'app' })).text).toMatch(/in app/);
  });
});

describe('prompts on a history without tags or Conventional Commits', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-plain-history-'));
    repo = path.join(base, 'plain');
    mkdirSync(repo);
    git(repo, ['init', '--quiet', '--initial-branch=main']);
    // 60 commits in one fast-import (60 separate commits would take seconds on a busy machine):
    // plain subjects, and at the end five where only two of five follow Conventional Commits.
    const subjects = [...Array.from({ length: 55 }, (_, i) => `Update the parser, step ${i + 1}`), 'feat: add export', 'Fix a typo in the guide', 'Tidy up the tests', 'fix: trim input', 'Bump the version'];
    const stream = subjects
      .map((subject, i) => {
        const content = `step ${i + 1}\n`;
        return [
          'commit refs/heads/main',
          `mark :${i + 1}`,
          `author Test User <test@example.com> ${1_714_000_000 + i * 60} +0000`,
          `committer Test User <test@example.com> ${1_714_000_000 + i * 60} +0000`,
          `data ${Buffer.byteLength(subject)}`,
          subject,
          ...(i > 0 ? [`from :${i}`] : []),
          `M 100644 inline notes.txt`,
          `data ${Buffer.byteLength(content)}`,
          content,
        ].join('\n');
      })
      .join('\n');
    git(repo, ['fast-import', '--quiet'], { input: stream });
    git(repo, ['reset', '--quiet', '--hard', 'main']);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('summarize-changes with no tag summarises the last 50 commits, and says so', async () => {
    session = await open([repo]);
    const summary = await session.getPrompt('summarize-changes');
    expect(summary.description).toBe('The last 50 commits of plain');
    expect(summary.text).toMatch(/^Summarise the recent work in plain: the last 50 commits are attached \(the repository has no tag to start from\)\./);
    expect(summary.resources.map((r) => r.uri)).toEqual(['git://plain/log?limit=50']);
    const log = (summary.resources[0] as { text: string }).text;
    expect(log.split('\n').filter((l) => /^[0-9a-f]{10} /.test(l))).toHaveLength(50);
    expect(log).toMatch(/^[0-9a-f]{10} 2024-04-2\d Test User: Bump the version\n/);
    expect(log).toMatch(/# … more commits on the current branch: only the 50 newest are shown\.\n$/);
  });

  it('changelog with no tag covers the whole history, and groups nothing when most commits are not Conventional', async () => {
    session = await open([repo]);
    const whole = await session.getPrompt('changelog');
    expect(whole.description).toBe('Changelog of the whole history (no tag yet) in plain');
    expect(whole.text).toMatch(/^Write the changelog entry for the changes of the whole history \(no tag yet\) in plain \(60 commits, attached\)\./);
    expect(whole.resources.map((r) => r.uri)).toEqual(['git://plain/log?limit=300']);
    // The instructions and the log, and no third message grouping by type.
    expect(whole.messages).toHaveLength(2);
    expect(whole.text).not.toMatch(/Conventional Commits/);

    // Since a tag: 2 of the 5 commits are Conventional, under the half that grouping needs.
    git(repo, ['tag', 'v0.1.0', 'HEAD~5']);
    const since = await session.getPrompt('changelog');
    expect(since.description).toBe('Changelog since v0.1.0 in plain');
    expect(since.text).toMatch(/\(5 commits, attached\)/);
    expect(since.messages).toHaveLength(2);
    expect(since.text).toMatch(/feat: add export/);
    expect(since.text).not.toMatch(/grouped by type/);
  });
});

describe('prompts describe the repository as it is', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-as-is-'));
    const empty = path.join(base, 'empty');
    mkdirSync(empty);
    git(empty, ['init', '--quiet', '--initial-branch=main']);
    const solo = makeRepo(path.join(base, 'solo'), { 'a.txt': 'a\n' });
    commit(solo, { 'b.txt': 'b\n' }, 'Add b');
    commit(solo, { 'c.txt': 'c\n' }, 'Add c');
    session = await open([base]);
  });
  afterAll(async () => {
    await session?.close();
    await cleanup();
  });

  it('a repository without commits: no commits to summarise, describe, review or list', async () => {
    const texts: Record<string, string> = {};
    for (const name of ['summarize-changes', 'pr-description', 'review-changes', 'changelog']) {
      const prompt = await session!.getPrompt(name, { repo: 'empty' });
      expect(prompt.resources, name).toEqual([]);
      texts[name] = prompt.text;
    }
    expect(texts).toEqual({
      'summarize-changes': 'empty has no commits yet, so there are no changes to summarise. Commit some work first.',
      'pr-description': 'empty has no commits yet (main is still to be born), so there is no pull request to describe. Commit the work first.',
      'review-changes': 'empty has no commits yet and nothing staged or changed in its working tree, so there is nothing to review.',
      changelog: 'empty has no commits yet, so there is nothing for a changelog.',
    });
  });

  it('pr-description on main says that main is the base, not that there is no main; summarize-changes counts the commits there are', async () => {
    const error = await protocolError(session!.getPrompt('pr-description', { repo: 'solo' }));
    expect(error.message).toMatch(
      /solo is on main, which is the branch a pull request would go into, and there is no other base to compare it with\. Switch to the branch of the pull request \(git_checkout\), or give base\./,
    );
    const summary = await session!.getPrompt('summarize-changes', { repo: 'solo' });
    expect(summary.description).toBe('All 3 commits of solo');
    expect(summary.text).toMatch(/^Summarise the recent work in solo: all 3 commits are attached \(the repository has no tag to start from\)\./);
  });
});

describe('completion', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-complete-'));
    repo = makeRepo(path.join(base, 'code', 'app'), { 'src/a.ts': 'a\n', 'src/lib/b.ts': 'b\n', 'README.md': '# r\n' });
    makeRepo(path.join(base, 'code', 'api'));
    for (const b of ['main-next', 'feature/one', 'feature/two', 'fix/bug']) git(repo, ['branch', b]);
    git(repo, ['tag', 'v1.0.0']);
    git(repo, ['tag', 'v2.0.0']);
    writeFiles(repo, { 'src/untracked.ts': 'u\n', 'ignored.log': 'x\n', '.gitignore': '*.log\n' });
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('completes repositories, refs (branches, then tags), ranges and file paths', async () => {
    session = await open([path.join(base, 'code')]);
    expect((await session.complete({ prompt: 'git-commit' }, 'repo', 'a')).values).toEqual(['api', 'app']);
    expect((await session.complete({ prompt: 'git-commit' }, 'repo', 'app')).values).toEqual(['app']);
    const ctx = { repo: 'app' };
    expect((await session.complete({ prompt: 'pr-description' }, 'base', 'ma', ctx)).values).toEqual(['main', 'main-next']);
    expect((await session.complete({ prompt: 'pr-description' }, 'base', 'feature/', ctx)).values).toEqual(['feature/one', 'feature/two']);
    expect((await session.complete({ prompt: 'changelog' }, 'from', 'v', ctx)).values).toEqual(['v1.0.0', 'v2.0.0']);
    expect((await session.complete({ prompt: 'review-changes' }, 'base', 's', ctx)).values).toEqual(['staged']);
    expect((await session.complete({ prompt: 'summarize-changes' }, 'range', 'v1.0.0..ma', ctx)).values).toEqual(['v1.0.0..main', 'v1.0.0..main-next']);
    expect((await session.complete({ prompt: 'summarize-changes' }, 'range', 'v1.0.0...H', ctx)).values).toEqual(['v1.0.0...HEAD']);
    expect((await session.complete({ prompt: 'explain-code' }, 'code', '', ctx)).values).toEqual(['.gitignore', 'README.md', 'src/']);
    expect((await session.complete({ prompt: 'explain-code' }, 'code', 'src/', ctx)).values).toEqual(['src/a.ts', 'src/lib/', 'src/untracked.ts']);
    expect((await session.complete({ prompt: 'explain-code' }, 'code', 'src/l', ctx)).values).toEqual(['src/lib/']);
    expect((await session.complete({ prompt: 'explain-code' }, 'language', 'ty')).values).toEqual(['TypeScript']);
    // Without a repository to complete in, nothing (not an error).
    expect((await session.complete({ prompt: 'pr-description' }, 'base', 'ma')).values).toEqual([]);
  });

  it('completes template variables of the resources', async () => {
    session = await open([repo]);
    expect((await session.complete({ template: 'git://{repo}/status' }, 'repo', '')).values).toEqual(['app']);
    expect((await session.complete({ template: 'git://{repo}/show/{rev}' }, 'rev', 'v', { repo: 'app' })).values).toEqual(['v1.0.0', 'v2.0.0']);
    expect((await session.complete({ template: 'git://{repo}/file/{path}' }, 'path', 'src/lib/', { repo: 'app' })).values).toEqual(['src/lib/b.ts']);
    expect((await session.complete({ template: 'git://{repo}/compare/{range}' }, 'range', 'fix', { repo: 'app' })).values).toEqual(['fix/bug']);
    expect((await session.complete({ template: 'git://{repo}/log{?limit}' }, 'limit', '1')).values).toEqual(['10', '100']);
  });

  it('offers only what the tools accept, and says the true total', async () => {
    const more = path.join(base, 'more');
    const lib = makeRepo(path.join(more, 'lib'), { 'ok.txt': 'ok\n', 'src/x.ts': 'x\n', 'gone.txt': 'soon deleted\n' });
    const outsideFile = path.join(base, 'outside-secret.txt');
    writeFileSync(outsideFile, 'secret\n');
    symlinkSync(outsideFile, path.join(lib, 'leak.txt'));
    symlinkSync(base, path.join(lib, 'escape'));
    symlinkSync('ok.txt', path.join(lib, 'inner-link'));
    writeFileSync(path.join(lib, 'bad\x1b]8;;x\x07name.txt'), 'osc\n');
    rmSync(path.join(lib, 'gone.txt'));
    const head = git(lib, ['rev-parse', 'HEAD']).trim();
    git(lib, ['update-ref', '--stdin'], { input: Array.from({ length: 1004 }, (_, i) => `create refs/heads/bulk/${String(i).padStart(4, '0')} ${head}\n`).join('') });
    // A repository every call refuses: its git data lies outside the allowed directories.
    mkdirSync(path.join(more, 'decoy'));
    writeFileSync(path.join(more, 'decoy', '.git'), `gitdir: ${path.join(repo, '.git')}\n`);
    session = await open([more]);
    expect((await session.callTool('git_status', { repo_path: 'decoy' })).isError).toBe(true);
    expect((await session.complete({ prompt: 'git-commit' }, 'repo', '')).values).toEqual(['lib']);

    const refs = await session.complete({ prompt: 'pr-description' }, 'base', 'bulk/', { repo: 'lib' });
    expect(refs).toEqual({ values: Array.from({ length: 100 }, (_, i) => `bulk/${String(i).padStart(4, '0')}`), total: 1004, hasMore: true });
    const ranges = await session.complete({ template: 'git://{repo}/log/{range}' }, 'range', 'main..b', { repo: 'lib' });
    expect([ranges.total, ranges.hasMore]).toEqual([1004, true]);

    const files = await session.complete({ prompt: 'explain-code' }, 'code', '', { repo: 'lib' });
    expect(files).toEqual({ values: ['inner-link', 'ok.txt', 'src/'], total: 3, hasMore: false });
    for (const value of files.values.filter((v) => !v.endsWith('/'))) {
      await session.readResource(`git://lib/file/${encodeURIComponent(value)}`);
    }
  });
});

describe('prompts/list_changed', () => {
  it('is sent when the client\'s roots change the set of repositories, and not otherwise', async () => {
    const { dir: base, cleanup } = await makeTempDir('git-prompts-roots-');
    const a = makeRepo(path.join(base, 'a'));
    const b = makeRepo(path.join(base, 'b'));
    const session = await open([base], { roots: [a] });
    try {
      await session.waitFor('notifications/prompts/list_changed', undefined, { timeoutMs: 20_000 });
      expect((await session.complete({ prompt: 'git-commit' }, 'repo', '')).values).toEqual(['a']);
      const mark = session.mark();
      await session.setRoots([b]);
      await session.waitFor('notifications/prompts/list_changed', undefined, { timeoutMs: 20_000, after: mark });
      await session.waitFor('notifications/resources/list_changed', undefined, { timeoutMs: 20_000, after: mark });
      expect((await session.complete({ prompt: 'git-commit' }, 'repo', '')).values).toEqual(['b']);
      // Roots that change nothing about the repositories (a directory inside b) send nothing.
      const quiet = session.mark();
      await session.setRoots([b, path.join(b, '.git', '..')]);
      await expect.poll(() => session.rootsRequests).toBe(3);
      await new Promise((r) => setTimeout(r, 500));
      expect(session.notifications.slice(quiet).filter((n) => n.method === 'notifications/prompts/list_changed')).toEqual([]);
    } finally {
      await session.close();
      await cleanup();
    }
  });
});
