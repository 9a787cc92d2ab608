import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError, snapshotTree, type TestSession } from '@suite/test-kit';
import { commit, git, makeRepo, open, writeFiles } from './helpers.js';

describe('security', () => {
  let base: string;
  let repo: string;
  let outside: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;

  beforeEach(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-security-'));
    repo = makeRepo(path.join(base, 'roots', 'app'), { 'src/a.ts': 'export const a = 1;\n' });
    commit(repo, { 'src/b.ts': 'export const b = 1;\n' }, 'Add b');
    outside = path.join(base, 'outside');
    makeRepo(outside, { 'secret.txt': 'the secret\n' });
    writeFiles(repo, { 'src/a.ts': 'export const a = 2;\n' });
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await cleanup();
  });

  const roots = (): string[] => [path.join(base, 'roots')];

  describe('argument injection (CVE class: options smuggled in as revisions, paths or names)', () => {
    const OUTPUT = (): string => path.join(base, 'injected');
    const options = (): string[] => [`--output=${OUTPUT()}`, '-o', `--output-directory=${OUTPUT()}`, '--exec=touch injected', `--upload-pack=touch ${OUTPUT()}`];

    it('refuses option-like revisions in every tool, resource and prompt, and creates nothing', async () => {
      session = await open(roots(), { allowWrite: true });
      const before = await snapshotTree(base);
      for (const evil of options()) {
        const calls: [string, Record<string, unknown>][] = [
          ['git_show', { revision: evil }],
          ['git_diff', { target: evil }],
          ['git_branch', { contains: evil }],
          ['git_branch', { not_contains: evil }],
          ['git_log', { start_timestamp: evil }],
          ['git_log', { end_timestamp: evil }],
          ['git_create_branch', { branch_name: evil }],
          ['git_create_branch', { branch_name: 'ok-name', base_branch: evil }],
          ['git_checkout', { branch_name: evil }],
        ];
        for (const [name, args] of calls) {
          const out = await session.callTool(name, args);
          expect(out.isError, `${name} ${JSON.stringify(args)}`).toBe(true);
          expect(out.text).toMatch(/starts with "-"|must be a date|not a valid branch name/);
        }
        for (const uri of [`git://app/show/${encodeURIComponent(evil)}`, `git://app/compare/${encodeURIComponent(`${evil}...HEAD`)}`, `git://app/log/${encodeURIComponent(`${evil}..HEAD`)}`]) {
          expect((await protocolError(session.readResource(uri))).data).toMatchObject({ kind: 'invalid_argument' });
        }
        for (const [name, args] of [
          ['review-changes', { base: evil }],
          ['pr-description', { base: evil }],
          ['summarize-changes', { range: evil }],
          ['changelog', { from: evil }],
        ] as const) {
          expect((await protocolError(session.getPrompt(name, args))).message).toMatch(/starts with "-"/);
        }
      }
      // Where an option-like text is a legitimate value (a path, an author), it stays one.
      expect((await session.callTool('git_log', { path: `--output=${OUTPUT()}` })).text).toMatch(/No commits in app match/);
      expect((await session.callTool('git_log', { path: '--output=x' })).text).toMatch(/No commits in app match/);
      expect((await session.callTool('git_log', { author: `--output=${OUTPUT()}` })).text).toMatch(/No commits in app match/);
      const add = await session.callTool('git_add', { files: ['--output=x', '-A'] });
      expect(add.isError).toBe(true);
      expect(add.text).toMatch(/matches no file/);
      // Paths, not options: nothing is reset hard, the work in progress stays.
      expect((await session.callTool('git_reset', { files: ['-q', '--hard'] })).isError).toBe(false);
      expect(git(repo, ['status', '--porcelain'])).toBe(' M src/a.ts\n');
      expect(existsSync(OUTPUT())).toBe(false);
      // The index is rewritten by that reset (fresh stat data); every other file is as it was.
      const after = await snapshotTree(base);
      delete after['roots/app/.git/index'];
      delete before['roots/app/.git/index'];
      expect(after).toEqual(before);
    });

    it('refuses a branch whose name starts with "-" even when such a ref exists on disk', async () => {
      const oid = git(repo, ['rev-parse', 'HEAD']).trim();
      writeFileSync(path.join(repo, '.git', 'refs', 'heads', '-f'), `${oid}\n`);
      session = await open(roots(), { allowWrite: true });
      for (const name of ['-f', '--orphan']) {
        const out = await session.callTool('git_checkout', { branch_name: name });
        expect(out.isError).toBe(true);
        expect(out.text).toMatch(/starts with "-"/);
      }
      expect((await session.callTool('git_show', { revision: '-f' })).text).toMatch(/starts with "-"/);
      // The work in progress is untouched: nothing was checked out or forced.
      expect(git(repo, ['status', '--porcelain'])).toBe(' M src/a.ts\n');
    });

    it('resolves revisions to object ids before using them, so odd but valid syntax stays data', async () => {
      session = await open(roots());
      expect((await session.callTool('git_show', { revision: ':/Add b' })).text).toMatch(/Add b/);
      expect((await session.callTool('git_show', { revision: 'HEAD:src/b.ts' })).text).toBe('export const b = 1;\n');
      const missing = await session.callTool('git_show', { revision: 'HEAD:../../outside/secret.txt' });
      expect(missing.isError).toBe(true);
      expect(missing.text).toMatch(/Unknown revision/);
      expect((await session.callTool('git_diff', { target: 'no-such-branch' })).text).toMatch(/Unknown target "no-such-branch"/);
    });
  });

  describe('paths stay inside the repository (by real path, symlinks included)', () => {
    beforeEach(() => {
      symlinkSync(outside, path.join(repo, 'linked-dir'));
      symlinkSync(path.join(outside, 'secret.txt'), path.join(repo, 'leak.txt'));
    });

    it('refuses paths outside it in every tool that takes one', async () => {
      session = await open(roots(), { allowWrite: true });
      for (const p of ['../outside/secret.txt', path.join(outside, 'secret.txt'), 'linked-dir/secret.txt', 'leak.txt', '/etc/passwd', 'src/../../x']) {
        for (const [name, args] of [
          ['git_add', { files: [p] }],
          ['git_reset', { files: [p] }],
          ['git_log', { path: p }],
          ['git_diff_unstaged', { path: p }],
          ['git_diff_staged', { path: p }],
          ['git_diff', { target: 'HEAD', path: p }],
        ] as const) {
          const out = await session.callTool(name, args);
          expect(out.isError, `${name} ${p}`).toBe(true);
          expect(out.text).toMatch(/outside the repository/);
        }
      }
      expect(git(repo, ['diff', '--cached', '--name-only'])).toBe('');
    });

    it('refuses what lies inside .git', async () => {
      session = await open(roots(), { allowWrite: true });
      for (const p of ['.git/config', '.git', 'src/../.git/HEAD', '.GIT/config']) {
        const out = await session.callTool('git_add', { files: [p] });
        expect(out.isError).toBe(true);
        expect(out.text).toMatch(/inside a \.git directory|outside the repository/);
      }
    });

    it('refuses them in the file resource and in explain-code', async () => {
      session = await open(roots());
      for (const p of ['../outside/secret.txt', 'leak.txt', 'linked-dir/secret.txt', path.join(outside, 'secret.txt')]) {
        const error = await protocolError(session.readResource(`git://app/file/${encodeURIComponent(p)}`));
        expect(error.data).toMatchObject({ kind: 'access_denied' });
        expect(error.message).not.toContain('the secret');
        const prompt = await protocolError(session.getPrompt('explain-code', { code: p }));
        expect(prompt.data).toMatchObject({ kind: 'access_denied' });
      }
      expect((await session.readResource(`git://app/file/${encodeURIComponent('src/a.ts')}`)).text).toBe('export const a = 2;\n');
    });
  });

  describe('repositories stay inside the roots (by real path)', () => {
    it('refuses a repository outside the roots, however it is named', async () => {
      symlinkSync(outside, path.join(base, 'roots', 'sneaky'));
      session = await open(roots());
      for (const repoPath of [outside, path.join(base, 'roots', 'sneaky'), path.join(base, 'roots', '..', 'outside'), '../outside']) {
        const out = await session.callTool('git_log', { repo_path: repoPath });
        expect(out.isError, repoPath).toBe(true);
        expect(out.text).toMatch(/outside the allowed directories/);
        expect(out.text).not.toContain('the secret');
      }
      expect((await session.complete({ prompt: 'git-commit' }, 'repo', '')).values).toEqual(['app']);
    });

    it('says when the client\'s roots leave none of the server\'s repositories, not to start the server with one', async () => {
      session = await open(roots(), { roots: [outside] });
      const out = await session.callTool('git_log', { repo_path: 'app' });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/^No repository is allowed: the client's roots leave none of the server's repositories/);
      expect(out.text).not.toMatch(/Start the server with/);
    });

    it('refuses a repository whose .git file points at git data outside the roots', async () => {
      const decoy = path.join(base, 'roots', 'decoy');
      mkdirSync(decoy);
      writeFileSync(path.join(decoy, '.git'), `gitdir: ${path.join(outside, '.git')}\n`);
      session = await open(roots());
      const out = await session.callTool('git_log', { repo_path: decoy });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/keeps its git data outside the allowed directories/);
      expect(out.text).not.toContain(outside);
    });

    it('refuses a repository that reads objects from a store outside the roots (alternates), and says why', async () => {
      const secret = git(outside, ['rev-parse', 'HEAD:secret.txt']).trim();
      const alternates = path.join(repo, '.git', 'objects', 'info', 'alternates');
      mkdirSync(path.dirname(alternates), { recursive: true });
      // The control: plain git reads the secret through the alternate.
      writeFileSync(alternates, `${path.join(outside, '.git', 'objects')}\n`);
      expect(git(repo, ['cat-file', 'blob', secret.slice(0, 8)])).toBe('the secret\n');
      session = await open(roots());
      const objectsDir = path.join(repo, '.git', 'objects');
      for (const line of [path.join(outside, '.git', 'objects'), path.relative(objectsDir, path.join(outside, '.git', 'objects')), `"${path.join(outside, '.git', 'objects')}"`]) {
        writeFileSync(alternates, `# a comment\n${line}\n`);
        for (const revision of [secret, secret.slice(0, 7)]) {
          const out = await session.callTool('git_show', { revision });
          expect(out.isError, line).toBe(true);
          expect(out.text).toMatch(/reads objects from a store outside the allowed directories/);
          expect(out.text).not.toContain('the secret');
          expect(out.text).not.toContain(outside);
        }
        expect((await protocolError(session.readResource(`git://app/show/${secret.slice(0, 7)}`))).data).toMatchObject({ kind: 'access_denied' });
      }
      // An alternates file git would block on (a FIFO) is refused before any git reads it.
      rmSync(alternates);
      execFileSync('mkfifo', [alternates]);
      const fifo = await session.callTool('git_log', { repo_path: 'app' });
      expect(fifo.isError).toBe(true);
      expect(fifo.text).toMatch(/names its alternate object stores in a file that cannot be read/);
      rmSync(alternates);
      // An objects directory that is a symlink to another repository's store.
      const linked = makeRepo(path.join(base, 'roots', 'linked'));
      rmSync(path.join(linked, '.git', 'objects'), { recursive: true });
      symlinkSync(path.join(outside, '.git', 'objects'), path.join(linked, '.git', 'objects'));
      const viaLink = await session.callTool('git_show', { repo_path: 'linked', revision: secret });
      expect(viaLink.isError).toBe(true);
      expect(viaLink.text).toMatch(/reads objects from a store outside the allowed directories/);
      expect(viaLink.text).not.toContain('the secret');
      // An alternate inside the roots (a clone made with --shared next to its source) is fine.
      const lib = makeRepo(path.join(base, 'roots', 'lib'), { 'lib.txt': 'shared content\n' });
      const shared = git(lib, ['rev-parse', 'HEAD:lib.txt']).trim();
      writeFileSync(alternates, `${path.join(lib, '.git', 'objects')}\n`);
      const out = await session.callTool('git_show', { repo_path: 'app', revision: shared });
      expect(out.isError, out.text).toBe(false);
      expect(out.text).toContain('shared content');
    });

    it('refuses a directory inside a repository whose top lies above the roots', async () => {
      session = await open([path.join(repo, 'src')]);
      const out = await session.callTool('git_status', { repo_path: path.join(repo, 'src') });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/working tree reaches outside the allowed directories|not inside a git repository/);
    });

    it('follows client roots: a narrower root hides the repositories outside it', async () => {
      const other = makeRepo(path.join(base, 'roots', 'other'));
      session = await open(roots(), { roots: [other] });
      expect((await session.callTool('git_status', {})).text).toMatch(/in other/);
      const out = await session.callTool('git_status', { repo_path: repo });
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/outside the allowed directories/);
    });

    it('never creates a repository: there is no init tool, and a plain directory stays plain', async () => {
      const plain = path.join(base, 'roots', 'plain');
      mkdirSync(plain);
      session = await open(roots(), { allowWrite: true });
      expect(await session.toolNames()).not.toContain('git_init');
      for (const [name, args] of [
        ['git_status', { repo_path: plain }],
        ['git_add', { repo_path: plain, files: ['.'] }],
        ['git_commit', { repo_path: plain, message: 'x' }],
      ] as const) {
        const out = await session.callTool(name, args);
        expect(out.isError).toBe(true);
        expect(out.text).toMatch(/not inside a git repository/);
      }
      expect(readdirSync(plain)).toEqual([]);
    });

    it('answers with how to configure a repository when there is none', async () => {
      session = await open([]);
      const out = await session.callTool('git_status', {});
      expect(out.isError).toBe(true);
      expect(out.text).toMatch(/No repository is configured/);
    });
  });

  it.runIf(process.getuid?.() === 0)('keeps git\'s ownership check: a repository of another user is refused unless the user trusts it in their own configuration', async () => {
    const foreign = makeRepo(path.join(base, 'roots', 'foreign'));
    const chownTree = (dir: string): void => {
      chownSync(dir, 65534, 65534);
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        if (entry.isDirectory()) chownTree(full);
        else chownSync(full, 65534, 65534);
      }
    };
    chownTree(foreign);
    session = await open(roots());
    const refused = await session.callTool('git_status', { repo_path: foreign });
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/belongs to another user.*safe\.directory/);
    await session.close();
    session = await open(roots(), { config: { safeDirectories: [foreign] } });
    expect((await session.callTool('git_status', { repo_path: foreign })).isError).toBe(false);
  });

  it('reads names and messages that are not UTF-8 without failing (invalid bytes become U+FFFD)', async () => {
    const latin1Name = Buffer.concat([Buffer.from(path.join(repo, 'caf')), Buffer.from([0xe9]), Buffer.from('.txt')]);
    writeFileSync(latin1Name, 'bonjour\n');
    git(repo, ['add', '--all']);
    // Written as a raw object (git commit would convert it): the message holds the byte 0xE9 and no encoding header.
    const tree = git(repo, ['write-tree']).trim();
    const parent = git(repo, ['rev-parse', 'HEAD']).trim();
    const raw = Buffer.concat([
      Buffer.from(`tree ${tree}\nparent ${parent}\nauthor A <a@example.com> 1714564800 +0000\ncommitter A <a@example.com> 1714564800 +0000\n\nCaf`),
      Buffer.from([0xe9]),
      Buffer.from(' au lait\n'),
    ]);
    const oid = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: repo, input: raw, env: process.env }).toString().trim();
    git(repo, ['update-ref', 'HEAD', oid]);
    writeFileSync(latin1Name, 'salut\n');
    session = await open(roots());
    const status = await session.callTool('git_status', {});
    expect(status.isError).toBe(false);
    expect(status.text).toContain('caf\uFFFD.txt');
    const log = await session.callTool('git_log', { max_count: 1 });
    expect(log.isError).toBe(false);
    expect(log.text).toContain('Caf\uFFFD au lait');
    const diff = await session.callTool('git_diff_unstaged', {});
    expect(diff.text).toContain('caf\uFFFD.txt');
  });
});

describe('terminal control sequences from a repository reach clients escaped', () => {
  // ESC (a colour and a screen clear), an OSC 8 hyperlink ended by BEL, a bare CR that would overwrite the line.
  const NAME = 'evil\x1b[31m\x1b]8;;http:x\x07link\x1b]8;;\x07\rname.txt';
  // Paths with a line break (CR included) are refused as arguments: this one is for the file resource and explain-code.
  const READABLE = 'osc\x1b]8;;http:x\x07link\x1b]8;;\x07.txt';
  const MESSAGE = 'Fix \x1b[2Jthe \x1b]8;;https://evil.example\x07cart\x1b]8;;\x07\rOverwritten\n\nBody \x1b[1mbold\x07';
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-terminal-'));
    const repo = makeRepo(path.join(base, 'app'), { 'README.md': '# app\n', 'crlf.txt': 'one\r\ntwo\r\n' });
    writeFileSync(path.join(repo, NAME), 'colour \x1b[32mgreen\x1b[0m\n');
    writeFileSync(path.join(repo, READABLE), 'bell \x07 and \x1b[5mblink\n');
    git(repo, ['add', '--all']);
    git(repo, ['commit', '--quiet', '--cleanup=verbatim', '-m', MESSAGE]);
    writeFileSync(path.join(repo, NAME), 'colour \x1b[32mgreen\x1b[0m and \x1b]0;title\x07\n');
    writeFileSync(path.join(repo, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
    git(repo, ['add', 'crlf.txt']);
    session = await open([repo], { allowWrite: true });
  });
  afterAll(async () => {
    await session.close();
    await cleanup();
  });

  // eslint-disable-next-line no-control-regex
  const active = (text: string): boolean => /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\r(?!\n)/.test(text);

  it('in tool answers, resources, prompts, errors and completion, while structured output keeps the data', async () => {
    const texts: [string, string][] = [];
    for (const [name, args] of [
      ['git_status', {}],
      ['git_log', { max_count: 2 }],
      ['git_show', { revision: 'HEAD' }],
      ['git_diff_unstaged', {}],
      ['git_diff_staged', {}],
      ['git_diff', { target: 'HEAD~1' }],
      ['git_branch', {}],
      ['git_add', { files: ['.'] }],
      ['git_reset', { files: ['README.md'] }],
      ['draft_commit_message', {}],
    ] as const) {
      const out = await session.callTool(name, args);
      expect(out.isError, `${name}: ${out.text}`).toBe(false);
      texts.push([name, out.text]);
    }
    for (const uri of ['git://app/status', 'git://app/log', 'git://app/diff/unstaged', 'git://app/diff/staged', 'git://app/show/HEAD', `git://app/file/${encodeURIComponent(READABLE)}`]) {
      texts.push([uri, (await session.readResource(uri)).text]);
    }
    for (const [name, args] of [
      ['git-commit', {}],
      ['review-changes', { base: 'unstaged' }],
      ['summarize-changes', {}],
      ['changelog', {}],
      ['explain-code', { code: READABLE }],
    ] as const) {
      const prompt = await session.getPrompt(name, args as Record<string, string>);
      texts.push([name, `${prompt.description ?? ''}\n${prompt.text}`]);
    }
    for (const [where, text] of texts) expect(active(text), `${where}: ${JSON.stringify(text)}`).toBe(false);

    const all = texts.map(([, text]) => text).join('\n');
    // Visible instead: the name, the message and the content, each escape written out.
    expect(all).toContain('evil\\x1b[31m\\x1b]8;;http:x\\x07link\\x1b]8;;\\x07\\x0dname.txt');
    expect(all).toContain('Fix \\x1b[2Jthe \\x1b]8;;https://evil.example\\x07cart\\x1b]8;;\\x07\\x0dOverwritten');
    expect(all).toContain('colour \\x1b[32mgreen\\x1b[0m and \\x1b]0;title\\x07');
    expect(all).toContain('bell \\x07 and \\x1b[5mblink');
    // CR LF line ends move nothing on a terminal: a CRLF file's diff keeps them.
    expect(texts.find(([w]) => w === 'git_diff_staged')![1]).toContain('+three\r\n');

    // Structured output is data (JSON carries the characters escaped): the real message, usable as is.
    const log = await session.callTool('git_log', { max_count: 1 });
    expect((log.structured as { commits: { subject: string }[] }).commits[0]!.subject).toBe(MESSAGE.split('\n')[0]);

    // An error about such a name.
    const missing = await session.callTool('git_add', { files: ['nope\x1b[31m\x07.txt'] });
    expect(missing.isError).toBe(true);
    expect(active(missing.text)).toBe(false);

    // Completion leaves the name out: shown escaped, it would no longer name the file.
    const offered = await session.complete({ prompt: 'explain-code' }, 'code', '', { repo: 'app' });
    expect(offered.values).toEqual(['README.md', 'crlf.txt']);
  });
});
