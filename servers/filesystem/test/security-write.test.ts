import { spawn, type ChildProcess } from 'node:child_process';
import { link, lstat, mkdir, readFile, readdir, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Logger, PathGuard } from '@suite/shared';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeDirectories } from '../src/tools/create-directory.js';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

const exists = (p: string): Promise<boolean> => lstat(p).then(
  () => true,
  () => false,
);

/** Every file under `dir` with its size, recursively (symlinks not followed). */
async function inventory(dir: string): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    found.set(path.relative(dir, full), entry.isFile() ? (await stat(full)).size : -1);
  }
  return found;
}

describe('write-side security', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());
  afterEach(async () => {
    // Each case starts with an untouched outside directory holding one known file.
    await rm(h.outside, { recursive: true, force: true });
    await mkdir(h.outside);
    await writeFile(path.join(h.outside, 'secret.txt'), 'secret');
  });

  async function outsideUnchanged(): Promise<void> {
    expect([...(await inventory(h.outside)).keys()].filter((name) => name !== 'secret.txt')).toEqual([]);
    expect(await readFile(path.join(h.outside, 'secret.txt'), 'utf8').catch(() => 'secret')).toBe('secret');
  }

  it('refuses to write through a symlink pointing outside, and the outside file is unchanged', async () => {
    await writeFile(path.join(h.outside, 'secret.txt'), 'secret');
    const link1 = path.join(h.dir, 'to-secret');
    await symlink(path.join(h.outside, 'secret.txt'), link1);
    for (const tool of ['write_file', 'edit_file'] as const) {
      const args = tool === 'write_file' ? { path: link1, content: 'pwned' } : { path: link1, edits: [{ oldText: 'secret', newText: 'pwned' }] };
      const out = await h.session.callTool(tool, args);
      expect(out.isError, tool).toBe(true);
      expect(out.text).toContain('Access denied');
      // The error names only what the user typed, never where the link leads.
      expect(out.text).not.toContain(h.outside);
    }
    expect(await readFile(path.join(h.outside, 'secret.txt'), 'utf8')).toBe('secret');
    expect((await lstat(link1)).isSymbolicLink()).toBe(true);
    await outsideUnchanged();
  });

  it('refuses to write to a dangling symlink pointing outside, and creates nothing there', async () => {
    const dangling = path.join(h.dir, 'dangling');
    await symlink(path.join(h.outside, 'created-by-attack.txt'), dangling);
    const out = await h.session.callTool('write_file', { path: dangling, content: 'pwned' });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('Access denied');
    expect(await exists(path.join(h.outside, 'created-by-attack.txt'))).toBe(false);
    const copied = await h.session.callTool('copy_file', { source: path.join(h.dir, '..', 'root', '..', 'root'), destination: dangling, recursive: true });
    expect(copied.isError).toBe(true);
    await outsideUnchanged();
  });

  it('refuses writes into a directory that is a symlink to outside (write, edit, mkdir, copy, move, delete)', async () => {
    const portal = path.join(h.dir, 'portal');
    await symlink(h.outside, portal);
    await writeFile(path.join(h.dir, 'inside.txt'), 'inside');
    const calls: [string, Record<string, unknown>][] = [
      ['write_file', { path: path.join(portal, 'new.txt'), content: 'x' }],
      ['write_file', { path: path.join(portal, 'secret.txt'), content: 'x' }],
      ['edit_file', { path: path.join(portal, 'secret.txt'), edits: [{ oldText: 'secret', newText: 'x' }] }],
      ['create_directory', { path: path.join(portal, 'made', 'deeper') }],
      ['copy_file', { source: path.join(h.dir, 'inside.txt'), destination: path.join(portal, 'copied.txt') }],
      ['copy_file', { source: path.join(h.dir, 'inside.txt'), destination: path.join(portal, 'secret.txt'), overwrite: true }],
      ['move_file', { source: path.join(h.dir, 'inside.txt'), destination: path.join(portal, 'moved.txt') }],
      ['move_file', { source: path.join(portal, 'secret.txt'), destination: path.join(h.dir, 'stolen.txt') }],
      ['delete_file', { path: path.join(portal, 'secret.txt') }],
    ];
    for (const [tool, args] of calls) {
      const out = await h.session.callTool(tool, args);
      expect(out.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(out.text, tool).toContain('Access denied');
    }
    expect(await readFile(path.join(h.dir, 'inside.txt'), 'utf8')).toBe('inside');
    expect(await exists(path.join(h.dir, 'stolen.txt'))).toBe(false);
    await outsideUnchanged();
  });

  it('refuses a prefix sibling, .. traversal and absolute paths elsewhere', async () => {
    const attempts = [
      path.join(h.sibling, 'evil.txt'),
      `${h.dir}-evil/evil.txt`,
      path.join(h.dir, '..', 'outside', 'evil.txt'),
      `${h.dir}/../outside/evil.txt`,
      '../outside/evil.txt',
      path.join(h.outside, 'evil.txt'),
      '/etc/evil-suite-test.txt',
    ];
    for (const p of attempts) {
      const out = await h.session.callTool('write_file', { path: p, content: 'x' });
      expect(out.isError, p).toBe(true);
      expect(out.text, p).toContain('Access denied');
      const dir = await h.session.callTool('create_directory', { path: p });
      expect(dir.isError, p).toBe(true);
    }
    expect(await readdir(h.sibling)).toEqual([]);
    expect(await exists('/etc/evil-suite-test.txt')).toBe(false);
    await outsideUnchanged();
  });

  it('refuses stray quotes and whitespace, Windows paths and NUL bytes without creating odd files', async () => {
    const odd = [
      `${path.join(h.dir, 'quoted.txt')}"`,
      `"${path.join(h.dir, 'quoted.txt')}"`,
      `'${path.join(h.dir, 'quoted.txt')}'`,
      `${path.join(h.dir, 'spaced.txt')} `,
      ` ${path.join(h.dir, 'spaced.txt')}`,
      `${path.join(h.dir, 'newline.txt')}\n`,
      'C:\\x',
      'C:\\Users\\me\\x.txt',
      'C:/x',
      '\\\\server\\share\\x',
      `${path.join(h.dir, 'nul.txt')}\u0000.png`,
    ];
    const before = await readdir(h.dir);
    for (const p of odd) {
      for (const [tool, args] of [
        ['write_file', { path: p, content: 'x' }],
        ['create_directory', { path: p }],
        ['copy_file', { source: path.join(h.dir, 'whatever'), destination: p }],
      ] as const) {
        const out = await h.session.callTool(tool, args);
        expect(out.isError, `${tool} ${JSON.stringify(p)}`).toBe(true);
        expect(out.text).toMatch(/Invalid path|Not found|Access denied/);
      }
    }
    expect(await readdir(h.dir)).toEqual(before);
    // Nothing named like a Windows path appeared in the working directory either.
    expect((await readdir(process.cwd())).filter((n) => n.startsWith('C:') || n.includes('\\'))).toEqual([]);
  });

  it('hard links: an atomic write replaces the link, so an outside inode is never modified', async () => {
    // Policy: a hard link inside the roots to a file outside is a separate name for the same inode.
    // Writes never modify an existing inode in place (temporary file + rename), so writing or editing
    // the inside name gives it new content and leaves the outside file exactly as it was.
    const outsideFile = path.join(h.outside, 'secret.txt');
    await writeFile(outsideFile, 'secret');
    const inside = path.join(h.dir, 'hardlink.txt');
    await link(outsideFile, inside);
    expect((await stat(inside)).ino).toBe((await stat(outsideFile)).ino);
    const write = await h.session.callTool('write_file', { path: inside, content: 'rewritten' });
    expect(write.isError).toBe(false);
    expect(await readFile(inside, 'utf8')).toBe('rewritten');
    expect(await readFile(outsideFile, 'utf8')).toBe('secret');
    expect((await stat(inside)).ino).not.toBe((await stat(outsideFile)).ino);

    await rm(inside);
    await link(outsideFile, inside);
    const edit = await h.session.callTool('edit_file', { path: inside, edits: [{ oldText: 'secret', newText: 'edited' }] });
    expect(edit.isError).toBe(false);
    expect(await readFile(inside, 'utf8')).toBe('edited');
    expect(await readFile(outsideFile, 'utf8')).toBe('secret');

    await rm(inside);
    await link(outsideFile, inside);
    await writeFile(path.join(h.dir, 'replacement.txt'), 'copied');
    const copy = await h.session.callTool('copy_file', { source: path.join(h.dir, 'replacement.txt'), destination: inside, overwrite: true });
    expect(copy.isError).toBe(false);
    expect(await readFile(outsideFile, 'utf8')).toBe('secret');
    const del = await h.session.callTool('delete_file', { path: inside });
    expect(del.isError).toBe(false);
    expect(await readFile(outsideFile, 'utf8')).toBe('secret');
    await outsideUnchanged();
  });

  it('a parent directory swapped for a symlink after the check is caught by the verify-after-open defence', async () => {
    // Drive the shared PathGuard the way write_file does, with the swap exactly between resolve() and the write.
    const guard = new PathGuard([h.dir]);
    await mkdir(path.join(h.dir, 'swapped'));
    const resolved = await guard.resolve(path.join(h.dir, 'swapped', 'secret.txt'));
    expect(resolved.real).toBe(path.join(h.dir, 'swapped', 'secret.txt'));
    await rename(path.join(h.dir, 'swapped'), path.join(h.dir, 'swapped-away'));
    await symlink(h.outside, path.join(h.dir, 'swapped'));
    await expect(guard.writeFileAtomic(resolved.real, 'pwned', { userPath: 'swapped/secret.txt' })).rejects.toThrow(/Access denied/);
    await expect(guard.open(path.join(h.dir, 'swapped', 'secret.txt'), 0, undefined, 'swapped/secret.txt')).rejects.toThrow(/Access denied/);
    expect(await readFile(path.join(h.outside, 'secret.txt'), 'utf8')).toBe('secret');
    // Known limitation of the shared writeFileAtomic (reported): the refused open leaves its empty
    // temporary file behind. Nothing with content is ever created outside.
    for (const [name, size] of await inventory(h.outside)) if (name !== 'secret.txt') expect(size, name).toBe(0);
  });

  it('create_directory re-checks each directory it makes, and removes one that landed outside', async () => {
    // The same swap against mkdir -p, resolved while `grand` was a real directory and run after it
    // became a link to outside (where a `later` directory exists, so the walk up finds it there).
    const guard = new PathGuard([h.dir]);
    await mkdir(path.join(h.dir, 'grand', 'later'), { recursive: true });
    await mkdir(path.join(h.outside, 'later'));
    const resolved = await guard.resolve(path.join(h.dir, 'grand', 'later', 'a', 'b'));
    await rename(path.join(h.dir, 'grand'), path.join(h.dir, 'grand-away'));
    await symlink(h.outside, path.join(h.dir, 'grand'));
    await expect(makeDirectories(guard, resolved.real, 'grand/later/a/b')).rejects.toThrow(/Access denied/);
    expect(await readdir(path.join(h.outside, 'later'))).toEqual([]);
    // A symlink met on the way up is refused before anything is made.
    const direct = await guard.resolve(path.join(h.dir, 'grand-away', 'x', 'y'));
    await rename(path.join(h.dir, 'grand-away'), path.join(h.dir, 'grand-away2'));
    await symlink(h.outside, path.join(h.dir, 'grand-away'));
    await expect(makeDirectories(guard, direct.real, 'grand-away/x/y')).rejects.toThrow(/Access denied/);
    expect(await exists(path.join(h.outside, 'x'))).toBe(false);
  });

  it('under a live race that keeps swapping a directory for a symlink to outside, no write ever lands outside', async () => {
    const racing = path.join(h.dir, 'racing');
    const parked = path.join(h.dir, 'racing-parked');
    await mkdir(racing);
    // A separate process flips `racing` between a real directory and a symlink to outside as fast as it can.
    const flipper: ChildProcess = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
         const [racing, parked, outside] = process.argv.slice(1);
         let stop = false;
         process.on('message', () => { stop = true; });
         process.stdin.on('data', () => { stop = true; });
         (function loop() {
           for (let i = 0; i < 200 && !stop; i++) {
             try { fs.renameSync(racing, parked); fs.symlinkSync(outside, racing); } catch {}
             try { fs.unlinkSync(racing); fs.renameSync(parked, racing); } catch {}
           }
           if (stop) { try { fs.unlinkSync(racing); } catch {} try { fs.renameSync(parked, racing); } catch {} process.exit(0); }
           setImmediate(loop);
         })();`,
        racing,
        parked,
        h.outside,
      ],
      { stdio: ['pipe', 'ignore', 'inherit'] },
    );
    let written = 0;
    let refused = 0;
    // The shared resolver can lose the race inside its own symlink walk (an unexpected error, logged
    // with a stack): expected noise here, not the property under test.
    const level = Logger.getStderrLevel();
    Logger.setStderrLevel('emergency');
    try {
      for (let i = 0; i < 150; i++) {
        const out = await h.session.callTool('write_file', { path: path.join(racing, 'secret.txt'), content: `attack ${i}` });
        if (out.isError) refused++;
        else written++;
        const edit = await h.session.callTool('edit_file', { path: path.join(racing, 'secret.txt'), edits: [{ oldText: 'secret', newText: 'pwned' }] });
        if (edit.isError) refused++;
      }
    } finally {
      const exited = new Promise((resolve) => flipper.once('exit', resolve));
      flipper.stdin?.write('stop\n');
      await exited;
      Logger.setStderrLevel(level);
    }
    expect(written + refused).toBeGreaterThan(0);
    expect(await readFile(path.join(h.outside, 'secret.txt'), 'utf8')).toBe('secret');
    for (const [name, size] of await inventory(h.outside)) if (name !== 'secret.txt') expect(size, name).toBe(0);
  });
});
