import { execFileSync } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readFile, readdir, readlink, realpath, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

const exists = (p: string): Promise<boolean> => lstat(p).then(
  () => true,
  () => false,
);

describe('move_file', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('renames a file', async () => {
    const from = path.join(h.dir, 'm1.txt');
    const to = path.join(h.dir, 'm1-renamed.txt');
    await writeFile(from, 'content');
    const out = await h.session.callTool('move_file', { source: from, destination: to });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ source: from, destination: to, kind: 'file', crossDevice: false });
    expect(await exists(from)).toBe(false);
    expect(await readFile(to, 'utf8')).toBe('content');
  });

  it('never overwrites an existing file, directory or dangling symlink at the destination', async () => {
    const from = path.join(h.dir, 'm2.txt');
    await writeFile(from, 'source');
    const file = path.join(h.dir, 'm2-existing.txt');
    await writeFile(file, 'keep me');
    const dir = path.join(h.dir, 'm2-dir');
    await mkdir(dir);
    const dangling = path.join(h.dir, 'm2-dangling');
    await symlink('does-not-exist', dangling);
    for (const destination of [file, dir, dangling]) {
      const out = await h.session.callTool('move_file', { source: from, destination });
      expect(out.isError).toBe(true);
      expect(out.text).toContain('already exists');
    }
    expect(await readFile(from, 'utf8')).toBe('source');
    expect(await readFile(file, 'utf8')).toBe('keep me');
    expect(await readdir(dir)).toEqual([]);
    expect(await readlink(dangling)).toBe('does-not-exist');
  });

  it('moves a directory with its contents, and refuses to move one into itself', async () => {
    const from = path.join(h.dir, 'm3');
    await mkdir(path.join(from, 'sub'), { recursive: true });
    await writeFile(path.join(from, 'sub', 'f.txt'), 'deep');
    const inside = await h.session.callTool('move_file', { source: from, destination: path.join(from, 'sub', 'again') });
    expect(inside.isError).toBe(true);
    expect(inside.text).toContain('into itself');
    const to = path.join(h.dir, 'm3-moved');
    const out = await h.session.callTool('move_file', { source: from, destination: to });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ kind: 'directory' });
    expect(await readFile(path.join(to, 'sub', 'f.txt'), 'utf8')).toBe('deep');
    expect(await exists(from)).toBe(false);
  });

  it('moves a symlink as a link, leaving its target alone', async () => {
    await writeFile(path.join(h.dir, 'm4-target.txt'), 'target');
    const link = path.join(h.dir, 'm4-link');
    await symlink('m4-target.txt', link);
    const to = path.join(h.dir, 'm4-link-moved');
    const out = await h.session.callTool('move_file', { source: link, destination: to });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ kind: 'symlink' });
    expect(await readlink(to)).toBe('m4-target.txt');
    expect(await readFile(path.join(h.dir, 'm4-target.txt'), 'utf8')).toBe('target');
  });

  it('refuses to move an allowed directory itself, a missing source, or into a missing directory', async () => {
    const root = await h.session.callTool('move_file', { source: h.dir, destination: path.join(h.dir, 'elsewhere') });
    expect(root.isError).toBe(true);
    expect(root.text).toContain('allowed directory');
    expect((await stat(h.dir)).isDirectory()).toBe(true);
    const missing = await h.session.callTool('move_file', { source: path.join(h.dir, 'nope'), destination: path.join(h.dir, 'nope2') });
    expect(missing.isError).toBe(true);
    expect(missing.text).toContain('Not found');
    await writeFile(path.join(h.dir, 'm5.txt'), 'x');
    const noParent = await h.session.callTool('move_file', { source: path.join(h.dir, 'm5.txt'), destination: path.join(h.dir, 'no-dir', 'm5.txt') });
    expect(noParent.isError).toBe(true);
    expect(noParent.text).toContain('does not exist');
    expect(await readFile(path.join(h.dir, 'm5.txt'), 'utf8')).toBe('x');
  });
});

describe('move_file across filesystems', () => {
  let h: WriteSideHarness;
  let shm: string;
  beforeAll(async () => {
    // /dev/shm is a tmpfs, a different device from the temporary directory: rename() there fails with EXDEV.
    shm = await realpath(await mkdtemp('/dev/shm/fs-move-'));
    h = await startWriteSide({ extraRoots: [shm] });
  });
  afterAll(async () => {
    await h.close();
    await rm(shm, { recursive: true, force: true });
  });

  it('the two roots really are on different devices', async () => {
    expect((await stat(shm)).dev).not.toBe((await stat(h.dir)).dev);
  });

  it('refuses to move a tree holding a FIFO across devices rather than lose it', async () => {
    const from = path.join(shm, 'with-fifo');
    await mkdir(from);
    await writeFile(path.join(from, 'data.txt'), 'data');
    execFileSync('mkfifo', [path.join(from, 'pipe')]);
    const out = await h.session.callTool('move_file', { source: from, destination: path.join(h.dir, 'with-fifo') });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('cannot be copied (pipe)');
    expect(await exists(path.join(h.dir, 'with-fifo'))).toBe(false);
    expect((await readdir(from)).sort()).toEqual(['data.txt', 'pipe']);
  });

  it('copies then deletes a file, keeping its mode', async () => {
    const from = path.join(h.dir, 'cross.sh');
    await writeFile(from, 'echo hi\n');
    await chmod(from, 0o755);
    const to = path.join(shm, 'cross.sh');
    const out = await h.session.callTool('move_file', { source: from, destination: to });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ crossDevice: true, kind: 'file' });
    expect(await readFile(to, 'utf8')).toBe('echo hi\n');
    expect((await stat(to)).mode & 0o777).toBe(0o755);
    expect(await exists(from)).toBe(false);
    expect((await readdir(shm)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('moves a directory tree across devices and still refuses an existing destination', async () => {
    const from = path.join(shm, 'tree');
    await mkdir(path.join(from, 'a', 'b'), { recursive: true });
    await writeFile(path.join(from, 'a', 'b', 'leaf.txt'), 'leaf');
    await writeFile(path.join(from, 'top.txt'), 'top');
    await symlink(h.outside, path.join(from, 'a', 'link-out'));
    await symlink('top.txt', path.join(from, 'link-in'));
    await mkdir(path.join(h.dir, 'occupied'));
    const blocked = await h.session.callTool('move_file', { source: from, destination: path.join(h.dir, 'occupied') });
    expect(blocked.isError).toBe(true);
    const to = path.join(h.dir, 'tree');
    const out = await h.session.callTool('move_file', { source: from, destination: to });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ crossDevice: true, kind: 'directory' });
    expect(await readFile(path.join(to, 'a', 'b', 'leaf.txt'), 'utf8')).toBe('leaf');
    expect(await readFile(path.join(to, 'top.txt'), 'utf8')).toBe('top');
    // A move loses nothing: symlinks come along as they were, wherever they point.
    expect(await readlink(path.join(to, 'a', 'link-out'))).toBe(h.outside);
    expect(await readlink(path.join(to, 'link-in'))).toBe('top.txt');
    expect(await exists(from)).toBe(false);
  });
});

describe('copy_file', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('copies a file with its mode and leaves the source alone', async () => {
    const from = path.join(h.dir, 'c1.sh');
    await writeFile(from, 'run\n');
    await chmod(from, 0o751);
    const to = path.join(h.dir, 'c1-copy.sh');
    const out = await h.session.callTool('copy_file', { source: from, destination: to });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ source: from, destination: to, kind: 'file', files: 1, directories: 0, bytes: 4, replaced: false, skipped: [] });
    expect(await readFile(to, 'utf8')).toBe('run\n');
    expect((await stat(to)).mode & 0o777).toBe(0o751);
    expect(await readFile(from, 'utf8')).toBe('run\n');
    expect((await readdir(h.dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('does not overwrite unless overwrite: true, and never overwrites a directory', async () => {
    const from = path.join(h.dir, 'c2.txt');
    const to = path.join(h.dir, 'c2-existing.txt');
    await writeFile(from, 'new');
    await writeFile(to, 'old');
    const refused = await h.session.callTool('copy_file', { source: from, destination: to });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('overwrite: true');
    expect(await readFile(to, 'utf8')).toBe('old');
    const replaced = await h.session.callTool('copy_file', { source: from, destination: to, overwrite: true });
    expect(replaced.isError).toBe(false);
    expect(replaced.structured).toMatchObject({ replaced: true });
    expect(await readFile(to, 'utf8')).toBe('new');
    await mkdir(path.join(h.dir, 'c2-dir'));
    const onDir = await h.session.callTool('copy_file', { source: from, destination: path.join(h.dir, 'c2-dir'), overwrite: true });
    expect(onDir.isError).toBe(true);
    expect(onDir.text).toContain('is a directory');
    expect((await stat(path.join(h.dir, 'c2-dir'))).isDirectory()).toBe(true);
  });

  it('requires recursive: true for a directory, then copies the whole tree', async () => {
    const from = path.join(h.dir, 'c3');
    await mkdir(path.join(from, 'x', 'y'), { recursive: true });
    await writeFile(path.join(from, 'x', 'y', 'deep.txt'), 'deep');
    await writeFile(path.join(from, 'one.txt'), '1');
    await symlink('one.txt', path.join(from, 'link-inside'));
    await symlink(h.outside, path.join(from, 'link-outside'));
    const to = path.join(h.dir, 'c3-copy');
    const refused = await h.session.callTool('copy_file', { source: from, destination: to });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('recursive: true');
    expect(await exists(to)).toBe(false);
    const out = await h.session.callTool('copy_file', { source: from, destination: to, recursive: true });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ kind: 'directory', files: 2, directories: 3, bytes: 5, skipped: ['link-outside'] });
    expect(await readFile(path.join(to, 'x', 'y', 'deep.txt'), 'utf8')).toBe('deep');
    expect(await readlink(path.join(to, 'link-inside'))).toBe('one.txt');
    expect(await exists(path.join(to, 'link-outside'))).toBe(false);
    expect((await readdir(h.dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('a cancelled recursive copy leaves neither a partial copy nor its staging directory', async () => {
    const from = path.join(h.dir, 'c5');
    await mkdir(from);
    for (let d = 0; d < 20; d++) {
      await mkdir(path.join(from, `d${d}`));
      await Promise.all(Array.from({ length: 150 }, (_, i) => writeFile(path.join(from, `d${d}`, `f${i}.txt`), `file ${d}/${i}\n`.repeat(50))));
    }
    const to = path.join(h.dir, 'c5-copy');
    const controller = new AbortController();
    let progressed = 0;
    const call = h.session.callTool('copy_file', { source: from, destination: to, recursive: true }, {
      signal: controller.signal,
      onprogress: () => {
        progressed++;
        controller.abort();
      },
    });
    await expect(call).rejects.toThrow();
    expect(progressed).toBeGreaterThan(0);
    // The server stops at its next check and removes what it staged.
    let leftovers: string[] = [];
    for (let i = 0; i < 100; i++) {
      leftovers = (await readdir(h.dir)).filter((n) => n.startsWith('.copy-') || n === 'c5-copy');
      if (leftovers.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(leftovers).toEqual([]);
    expect(await exists(to)).toBe(false);
    // 3,000 files to create and start copying: seconds on a busy machine, hence the longer limit.
  }, 30_000);

  it('refuses to copy a directory into itself or onto an existing directory', async () => {
    const from = path.join(h.dir, 'c4');
    await mkdir(from);
    await writeFile(path.join(from, 'f'), 'f');
    const into = await h.session.callTool('copy_file', { source: from, destination: path.join(from, 'nested'), recursive: true });
    expect(into.isError).toBe(true);
    expect(into.text).toContain('into itself');
    await mkdir(path.join(h.dir, 'c4-existing'));
    const onto = await h.session.callTool('copy_file', { source: from, destination: path.join(h.dir, 'c4-existing'), recursive: true, overwrite: true });
    expect(onto.isError).toBe(true);
    expect(onto.text).toContain('never overwritten');
    expect(await readdir(from)).toEqual(['f']);
  });
});

describe('delete_file', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('deletes a file', async () => {
    const file = path.join(h.dir, 'd1.txt');
    await writeFile(file, 'bye');
    const out = await h.session.callTool('delete_file', { path: file });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ path: file, kind: 'file' });
    expect(await exists(file)).toBe(false);
    const again = await h.session.callTool('delete_file', { path: file });
    expect(again.isError).toBe(true);
    expect(again.text).toContain('Not found');
  });

  it('deletes a directory only with recursive: true', async () => {
    const dir = path.join(h.dir, 'd2');
    await mkdir(path.join(dir, 'inner'), { recursive: true });
    await writeFile(path.join(dir, 'inner', 'f.txt'), 'f');
    const refused = await h.session.callTool('delete_file', { path: dir });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain('recursive: true');
    expect(await readFile(path.join(dir, 'inner', 'f.txt'), 'utf8')).toBe('f');
    const out = await h.session.callTool('delete_file', { path: dir, recursive: true });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ path: dir, kind: 'directory' });
    expect(await exists(dir)).toBe(false);
    expect((await readdir(h.dir)).filter((n) => n.startsWith('.deleting-'))).toEqual([]);
  });

  it('never deletes an allowed directory itself', async () => {
    await writeFile(path.join(h.dir, 'survivor.txt'), 'still here');
    for (const p of [h.dir, `${h.dir}/`, `${h.dir}/.`]) {
      const out = await h.session.callTool('delete_file', { path: p, recursive: true });
      expect(out.isError).toBe(true);
      expect(out.text).toContain('never deleted');
    }
    expect(await readFile(path.join(h.dir, 'survivor.txt'), 'utf8')).toBe('still here');
  });

  it('removes a symlink that leads outside as a link, without touching its target', async () => {
    const target = path.join(h.outside, 'precious.txt');
    await writeFile(target, 'precious');
    const link = path.join(h.dir, 'd3-link');
    await symlink(target, link);
    const out = await h.session.callTool('delete_file', { path: link });
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ path: link, kind: 'symlink' });
    expect(await exists(link)).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('precious');
    const dirLink = path.join(h.dir, 'd3-dir-link');
    await symlink(h.outside, dirLink);
    const dirOut = await h.session.callTool('delete_file', { path: dirLink, recursive: true });
    expect(dirOut.isError).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('precious');
  });

  it('answers a name too long for the filesystem with an isError naming the problem, for delete, move and copy (found by the fuzzer)', async () => {
    const long = 'n'.repeat(256);
    await writeFile(path.join(h.dir, 'short.txt'), 'x');
    for (const [tool, args] of [
      ['delete_file', { path: long }],
      ['move_file', { source: long, destination: 'elsewhere.txt' }],
      ['move_file', { source: 'short.txt', destination: long }],
      ['copy_file', { source: 'short.txt', destination: long }],
    ] as const) {
      const out = await h.session.callTool(tool, args);
      expect(out.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(out.text).toMatch(/too long/);
    }
  });
});
