import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError, spawnServer, type TestSession } from '@suite/test-kit';
import { BIN, commit, git, makeRepo, open } from './helpers.js';

/**
 * fetch, pull and push against a bare repository on file:// (issue 29), behind --allow-remote, with
 * transports other than file, https and ssh refused, credentials never shown, and neither the
 * repository's nor the remote's programs run.
 */
describe('remote tools', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  let bare: string;
  let marker: string;
  let script: (name: string) => string;
  /** A push made by the test itself, which must not run the remote's hooks either. */
  let cliPush: (dir: string) => string;

  beforeAll(async () => {
    const made = await makeTempDir('git-prompts-remote-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
    marker = path.join(base, 'MARKER');
    mkdirSync(path.join(base, 'bin'));
    script = (name: string): string => {
      const file = path.join(base, 'bin', name);
      writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${marker}'\ncat >/dev/null\nexit 0\n`);
      chmodSync(file, 0o755);
      return file;
    };
    bare = path.join(base, 'remote.git');
    git(base, ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
    const seed = makeRepo(path.join(base, 'seed'), { 'a.txt': 'a\n' });
    git(seed, ['push', '--quiet', bare, 'main']);
    cliPush = (dir: string) => git(dir, ['push', '--quiet', '--receive-pack=git -c core.hooksPath=/dev/null receive-pack', 'origin', 'main']);
    // The remote's own hooks: a push through the server runs none of them.
    for (const hook of ['pre-receive', 'update', 'post-receive', 'post-update', 'reference-transaction', 'proc-receive']) {
      writeFileSync(path.join(bare, 'hooks', hook), `#!/bin/sh\necho "remote-hook:${hook}" >> '${marker}'\nexit 0\n`);
      chmodSync(path.join(bare, 'hooks', hook), 0o755);
    }
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  function cloneOf(name: string): string {
    const dir = path.join(base, name);
    git(base, ['clone', '--quiet', pathToFileURL(bare).href, dir]);
    return dir;
  }

  async function spawnServerAnd(root: string): Promise<{ text: string }> {
    const bin = await spawnServer(BIN, ['--allow-write', '--allow-remote', root]);
    try {
      return await bin.callTool('git_fetch');
    } finally {
      await bin.close();
    }
  }

  const ran = (): string => (existsSync(marker) ? readFileSync(marker, 'utf8') : '');

  it('exist only with --allow-remote and --allow-write', async () => {
    const work = cloneOf('flags');
    for (const options of [{ allowWrite: true }, { config: { allowRemote: true } }]) {
      session = await open([work], options);
      const names = (await session.client.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain('git_fetch');
      expect(names).not.toContain('git_push');
      expect((await protocolError(session.callTool('git_fetch', {}))).message).toMatch(/git_fetch/);
      await session.close();
    }
    session = await open([work], { allowWrite: true, config: { allowRemote: true } });
    const names = (await session.client.listTools()).tools.map((t) => t.name);
    for (const name of ['git_fetch', 'git_pull', 'git_push']) expect(names).toContain(name);
  });

  it('fetch, pull (fast-forward only by default), push, a rejected push, and force-with-lease, on file://', async () => {
    const work = cloneOf('work');
    const other = cloneOf('other');
    // The repository names programs for its remote: they never run, and fetch and push still work.
    git(work, ['config', 'remote.origin.uploadpack', script('upload-pack')]);
    git(work, ['config', 'remote.origin.receivepack', script('receive-pack')]);
    session = await open([base], { allowWrite: true, config: { allowRemote: true } });
    commit(other, { 'b.txt': 'b\n' }, 'other: add b');
    cliPush(other);
    const fetched = await session.callTool('git_fetch', { repo_path: work });
    expect(fetched.text).toMatch(/^Fetched from origin into work \(1 ref changed\):\n {2}updated {2}origin\/main [0-9a-f]{12}\.\.[0-9a-f]{12}$/);
    expect((await session.callTool('git_fetch', { repo_path: work })).text).toBe('Fetched from origin into work: already up to date.');
    expect((await session.callTool('git_pull', { repo_path: work })).text).toMatch(/^Pulled from origin: main in work moved /);
    expect(readFileSync(path.join(work, 'b.txt'), 'utf8')).toBe('b\n');

    commit(work, { 'c.txt': 'c\n' }, 'work: add c');
    expect((await session.callTool('git_push', { repo_path: work })).text).toMatch(/^Pushed main to origin from work:\n {2}\s*refs\/heads\/main:refs\/heads\/main [0-9a-f]+\.\.[0-9a-f]+/);
    expect(git(bare, ['log', '-1', '--format=%s', 'main'])).toBe('work: add c\n');

    // Diverged: the push is refused, and a fast-forward-only pull too; force_with_lease replaces it.
    commit(other, { 'd.txt': 'd\n' }, 'other: add d');
    git(other, ['pull', '--quiet', '--no-rebase', 'origin', 'main']);
    cliPush(other);
    commit(work, { 'e.txt': 'e\n' }, 'work: add e');
    expect((await session.callTool('git_push', { repo_path: work })).text).toMatch(/nothing was pushed\. Pull \(git_pull\) first, or push with force_with_lease/);
    expect((await session.callTool('git_pull', { repo_path: work })).text).toMatch(/have diverged, so it cannot fast-forward; nothing was changed/);
    await session.callTool('git_fetch', { repo_path: work });
    expect((await session.callTool('git_push', { repo_path: work, force_with_lease: true })).isError).toBe(false);
    expect(git(bare, ['log', '-1', '--format=%s', 'main'])).toBe('work: add e\n');
    expect(ran()).toBe('');
  });

  it('refuses other transports, local paths and file:// outside the roots, before git runs; never shows credentials', async () => {
    const work = cloneOf('refusals');
    const { dir: outside, cleanup: dropOutside } = await makeTempDir('git-prompts-remote-outside-');
    try {
      git(outside, ['init', '--quiet', '--bare', 'x.git']);
      git(work, ['remote', 'add', 'evil', `ext::${script('ext-transport')} %S`]);
      git(work, ['remote', 'add', 'plainhttp', 'http://127.0.0.1:9/x.git']);
      git(work, ['remote', 'add', 'secret', 'https://user:hunter2-token@127.0.0.1:9/x.git']);
      git(work, ['config', `url.ext::${script('insteadof-transport')} %S .insteadOf`, 'https://rewritten.example/']);
      session = await open([work], { allowWrite: true, config: { allowRemote: true } });
      for (const [remote, message] of [
        ['evil', /uses a transport this server does not allow/],
        ['plainhttp', /uses http:\/\/, which this server does not allow/],
        ['ext::sh -c touch% /tmp/pwned', /has no remote named/],
        ['https://rewritten.example/x.git', /uses a transport this server does not allow/],
        [pathToFileURL(path.join(outside, 'x.git')).href, /outside the allowed directories/],
        ['--upload-pack=touch /tmp/pwned', /may not start with "-"/],
        ['/etc', /has no remote named/],
      ] as const) {
        for (const tool of ['git_fetch', 'git_push', 'git_pull']) {
          const out = await session.callTool(tool, { remote });
          expect(out.isError, `${tool} ${remote}: ${out.text}`).toBe(true);
          expect(out.text, `${tool} ${remote}`).toMatch(message);
        }
      }
      const failed = await session.callTool('git_fetch', { remote: 'secret' });
      expect(failed.isError).toBe(true);
      expect(failed.text).not.toContain('hunter2');
      const listed = await session.callTool('git_remote_list');
      expect(JSON.stringify(listed)).not.toContain('hunter2');
      expect(ran()).toBe('');
    } finally {
      await dropOutside();
    }
  });

  it('over stdio of the built bin: --allow-remote with --allow-write fetches; without it the tools are unknown', async () => {
    const work = cloneOf('stdio');
    const without = await spawnServer(BIN, ['--allow-write', base]);
    try {
      expect((await without.client.listTools()).tools.map((t) => t.name)).not.toContain('git_fetch');
    } finally {
      await without.close();
    }
    const bin = await spawnServer(BIN, ['--allow-write', '--allow-remote', base]);
    try {
      expect((await bin.callTool('git_fetch', { repo_path: work })).text).toMatch(/^Fetched from origin into stdio/);
      expect((await bin.callTool('git_fetch', { repo_path: work, remote: 'ext::sh' })).isError).toBe(true);
      // Only the remote's own roots count: started on the clone alone, its file:// remote is outside.
      expect((await spawnServerAnd(work)).text).toMatch(/outside the allowed directories/);
    } finally {
      await bin.close();
    }
  });
});
