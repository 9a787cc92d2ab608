import { link, mkdir, readFile, readdir, stat, symlink, writeFile, chmod } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PathGuard, isInside } from '../src/index.js';
import { connectInProcess, makeTempDir, type TestSession } from '@suite/test-kit';
import { probeServer } from './fixtures/probe-server.js';

describe('isInside', () => {
  it('is separator-aware', () => {
    expect(isInside('/a/b', '/a/b')).toBe(true);
    expect(isInside('/a/b/c', '/a/b')).toBe(true);
    expect(isInside('/a/bc', '/a/b')).toBe(false);
    expect(isInside('/a/b-evil/x', '/a/b')).toBe(false);
    expect(isInside('/anything', '/')).toBe(true);
  });
});

describe('path safety through a tool', () => {
  let base: string;
  let allowed: string;
  let cleanup: () => Promise<void>;
  let session: TestSession;

  beforeEach(async () => {
    ({ dir: base, cleanup } = await makeTempDir());
    allowed = path.join(base, 'allowed');
    await mkdir(path.join(allowed, 'sub'), { recursive: true });
    await mkdir(path.join(base, 'allowed-evil'));
    await writeFile(path.join(base, 'allowed-evil', 'secret.txt'), 'secret');
    await writeFile(path.join(base, 'outside.txt'), 'outside');
    await writeFile(path.join(allowed, 'inside.txt'), 'inside');
    session = await connectInProcess(probeServer({ directories: [allowed] }));
  });
  afterEach(async () => {
    await session.close();
    await cleanup();
  });

  async function expectDenied(userPath: string, pattern = /outside the allowed directories/): Promise<string> {
    const out = await session.callTool('resolve', { path: userPath });
    expect(out.isError, `${userPath} should be refused`).toBe(true);
    expect(out.text).toMatch(pattern);
    return out.text;
  }

  it('allows paths inside, existing or not, absolute or relative', async () => {
    expect((await session.callTool('resolve', { path: path.join(allowed, 'inside.txt') })).structured).toEqual({ real: path.join(allowed, 'inside.txt'), exists: true });
    expect((await session.callTool('resolve', { path: 'sub/new/file.txt' })).structured).toEqual({ real: path.join(allowed, 'sub', 'new', 'file.txt'), exists: false });
  });

  it('refuses .. traversal', async () => {
    await expectDenied(path.join(allowed, '..', 'outside.txt'));
    await expectDenied('../outside.txt');
    await expectDenied(`${allowed}/sub/../../outside.txt`);
  });

  it('refuses a sibling that shares the prefix', async () => {
    await expectDenied(path.join(base, 'allowed-evil', 'secret.txt'));
  });

  it('refuses absolute paths elsewhere', async () => {
    await expectDenied('/etc/passwd');
  });

  it('refuses a symlink that leads outside, and never names its target', async () => {
    await symlink(path.join(base, 'outside.txt'), path.join(allowed, 'link.txt'));
    await symlink(base, path.join(allowed, 'dirlink'));
    const text = await expectDenied(path.join(allowed, 'link.txt'));
    expect(text).not.toContain('outside.txt');
    await expectDenied(path.join(allowed, 'dirlink', 'outside.txt'));
    await expectDenied(path.join(allowed, 'dirlink', 'not-yet-there.txt'));
  });

  it('refuses a dangling symlink whose target would be created outside', async () => {
    await symlink(path.join(base, 'created-by-attack.txt'), path.join(allowed, 'dangling'));
    await expectDenied(path.join(allowed, 'dangling'));
    const write = await session.callTool('write', { path: path.join(allowed, 'dangling'), content: 'x' });
    expect(write.isError).toBe(true);
    expect(await readdir(base)).not.toContain('created-by-attack.txt');
  });

  it('allows a symlink that stays inside', async () => {
    await symlink(path.join(allowed, 'inside.txt'), path.join(allowed, 'sub', 'alias.txt'));
    const out = await session.callTool('resolve', { path: path.join(allowed, 'sub', 'alias.txt') });
    expect(out.structured).toEqual({ real: path.join(allowed, 'inside.txt'), exists: true });
  });

  it('refuses NUL bytes, Windows paths, and stray quotes or whitespace', async () => {
    await expectDenied(`${allowed}/inside.txt\0.png`, /NUL byte/);
    await expectDenied('C:\\Users\\me\\file.txt', /Windows path/);
    await expectDenied(`${allowed}/inside.txt"`, /whitespace or a quote/);
    await expectDenied(`${allowed}/inside.txt `, /whitespace or a quote/);
  });

  it('answers a name or path too long for the filesystem as invalid input, not an unexpected failure (found by the fuzzer)', async () => {
    for (const userPath of ['a'.repeat(300), `sub/${'b'.repeat(256)}/x.txt`, `${allowed}/${'c'.repeat(5000)}`]) {
      const out = await session.callTool('resolve', { path: userPath });
      expect(out.isError, userPath.slice(0, 40)).toBe(true);
      expect(out.text).toMatch(/^Invalid path: .* too long for the filesystem/);
      expect(out.text).not.toMatch(/unexpectedly/);
    }
  });

  it('writes atomically, keeps the file mode, and leaves no temporary file', async () => {
    const target = path.join(allowed, 'script.sh');
    await writeFile(target, 'old');
    await chmod(target, 0o750);
    expect((await session.callTool('write', { path: target, content: 'new' })).isError).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('new');
    expect((await stat(target)).mode & 0o777).toBe(0o750);
    expect((await readdir(allowed)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses to replace an existing file when asked for an exclusive write', async () => {
    const out = await session.callTool('write', { path: path.join(allowed, 'inside.txt'), content: 'x', exclusive: true });
    expect(out).toMatchObject({ isError: true });
    expect(out.text).toMatch(/already exists/);
    expect(await readFile(path.join(allowed, 'inside.txt'), 'utf8')).toBe('inside');
  });

  it('never modifies an outside file through a hard link: the atomic write replaces the link', async () => {
    await link(path.join(base, 'outside.txt'), path.join(allowed, 'hard.txt'));
    expect((await session.callTool('write', { path: path.join(allowed, 'hard.txt'), content: 'changed' })).isError).toBe(false);
    expect(await readFile(path.join(base, 'outside.txt'), 'utf8')).toBe('outside');
    expect(await readFile(path.join(allowed, 'hard.txt'), 'utf8')).toBe('changed');
  });
});

describe('PathGuard.open', () => {
  it('refuses a final-component symlink and verifies the opened descriptor', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      await mkdir(path.join(dir, 'root'));
      await writeFile(path.join(dir, 'outside.txt'), 'x');
      await symlink(path.join(dir, 'outside.txt'), path.join(dir, 'root', 'link'));
      const guard = new PathGuard([path.join(dir, 'root')]);
      // Simulates the race: the check happened earlier, and now the path is a symlink.
      await expect(guard.open(path.join(dir, 'root', 'link'), 0, undefined, 'link')).rejects.toThrow(/outside the allowed directories/);
      // A parent directory swapped for a symlink: O_NOFOLLOW does not cover parents, the fd check does.
      await mkdir(path.join(dir, 'elsewhere'));
      await writeFile(path.join(dir, 'elsewhere', 'f.txt'), 'y');
      await symlink(path.join(dir, 'elsewhere'), path.join(dir, 'root', 'swapped'));
      await expect(guard.open(path.join(dir, 'root', 'swapped', 'f.txt'), 0, undefined, 'swapped/f.txt')).rejects.toThrow(/outside the allowed directories/);
    } finally {
      await cleanup();
    }
  });
});

describe('PathGuard.writeFileAtomic edge cases', () => {
  it('writes a file whose name is long but legal', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      const guard = new PathGuard([dir]);
      const name = 'n'.repeat(250);
      await guard.writeFileAtomic(path.join(dir, name), 'ok');
      expect(await readFile(path.join(dir, name), 'utf8')).toBe('ok');
    } finally {
      await cleanup();
    }
  });

  it('leaves nothing outside when the directory was swapped for a symlink after the check', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      await mkdir(path.join(dir, 'root'));
      await mkdir(path.join(dir, 'outside'));
      await symlink(path.join(dir, 'outside'), path.join(dir, 'root', 'swapped'));
      const guard = new PathGuard([path.join(dir, 'root')]);
      // The caller resolved root/swapped/f.txt while swapped was a real directory; now it is a link.
      await expect(guard.writeFileAtomic(path.join(dir, 'root', 'swapped', 'f.txt'), 'x', { userPath: 'swapped/f.txt' })).rejects.toThrow(/outside the allowed directories/);
      expect(await readdir(path.join(dir, 'outside'))).toEqual([]);
    } finally {
      await cleanup();
    }
  });
});
