import { chmod, lstat, mkdir, readFile, readdir, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

describe('write_file', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('creates a new file with exactly the given content and says so in structured output', async () => {
    const file = path.join(h.dir, 'new.txt');
    const out = await h.session.callTool('write_file', { path: file, content: 'héllo\nworld\n' });
    expect(out.isError).toBe(false);
    expect(await readFile(file, 'utf8')).toBe('héllo\nworld\n');
    expect(out.structured).toEqual({ path: file, bytes: Buffer.byteLength('héllo\nworld\n'), created: true });
    expect(out.text).toContain(`Successfully wrote to ${file}`);
  });

  it('replaces an existing file, keeps its mode, and leaves no temporary file behind', async () => {
    const dir = path.join(h.dir, 'replace');
    await mkdir(dir);
    const file = path.join(dir, 'script.sh');
    await writeFile(file, '#!/bin/sh\necho old\n');
    await chmod(file, 0o750);
    const before = await stat(file);
    const out = await h.session.callTool('write_file', { path: file, content: '#!/bin/sh\necho new\n' });
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ created: false });
    expect(await readFile(file, 'utf8')).toBe('#!/bin/sh\necho new\n');
    const after = await stat(file);
    expect(after.mode & 0o7777).toBe(0o750);
    // Atomic replacement: a new inode renamed over the old one.
    expect(after.ino).not.toBe(before.ino);
    expect(await readdir(dir)).toEqual(['script.sh']);
  });

  it('accepts a path relative to the first allowed directory', async () => {
    const out = await h.session.callTool('write_file', { path: 'relative.txt', content: 'r' });
    expect(out.isError).toBe(false);
    expect(await readFile(path.join(h.dir, 'relative.txt'), 'utf8')).toBe('r');
  });

  it('writes an empty file', async () => {
    const file = path.join(h.dir, 'empty.txt');
    const out = await h.session.callTool('write_file', { path: file, content: '' });
    expect(out.isError).toBe(false);
    expect((await stat(file)).size).toBe(0);
  });

  it('answers a file name too long for the filesystem with an isError saying so, for writes and reads alike (found by the fuzzer)', async () => {
    const long = path.join(h.dir, 'n'.repeat(4097));
    for (const [tool, args] of [
      ['write_file', { path: long, content: '' }],
      ['get_file_info', { path: long }],
      ['read_text_file', { path: long }],
      ['copy_file', { source: 'a'.repeat(300), destination: h.dir }],
    ] as const) {
      const out = await h.session.callTool(tool, args);
      expect(out.isError, `${tool}: ${out.text}`).toBe(true);
      expect(out.text).toMatch(/too long/);
      expect(out.text).not.toMatch(/unexpectedly/);
    }
  });

  it('does not create missing parent directories, and says how to', async () => {
    const file = path.join(h.dir, 'no', 'such', 'dir', 'file.txt');
    const out = await h.session.callTool('write_file', { path: file, content: 'x' });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('create_directory');
    await expect(lstat(path.join(h.dir, 'no'))).rejects.toThrow();
  });

  it('refuses to write over a directory', async () => {
    await mkdir(path.join(h.dir, 'a-dir'));
    const out = await h.session.callTool('write_file', { path: path.join(h.dir, 'a-dir'), content: 'x' });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/directory/);
    expect((await stat(path.join(h.dir, 'a-dir'))).isDirectory()).toBe(true);
  });

  it('writes through a symlink that leads to a file inside the roots, keeping the link', async () => {
    const target = path.join(h.dir, 'link-target.txt');
    const link = path.join(h.dir, 'link.txt');
    await writeFile(target, 'old');
    await symlink('link-target.txt', link);
    const out = await h.session.callTool('write_file', { path: link, content: 'new' });
    expect(out.isError).toBe(false);
    expect(await readFile(target, 'utf8')).toBe('new');
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
    expect(await readlink(link)).toBe('link-target.txt');
  });

  it('fails with an input validation error when content is missing', async () => {
    const out = await h.session.callTool('write_file', { path: path.join(h.dir, 'x.txt') });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('content');
  });
});

describe('create_directory', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('creates nested directories in one call and is idempotent', async () => {
    const deep = path.join(h.dir, 'a', 'b', 'c');
    const first = await h.session.callTool('create_directory', { path: deep });
    expect(first.isError).toBe(false);
    expect(first.structured).toEqual({ path: deep, created: true, createdDirectories: 3 });
    expect((await stat(deep)).isDirectory()).toBe(true);
    const again = await h.session.callTool('create_directory', { path: deep });
    expect(again.isError).toBe(false);
    expect(again.structured).toEqual({ path: deep, created: false, createdDirectories: 0 });
    expect(again.text).toContain('already exists');
  });

  it('fails when a file is in the way', async () => {
    await writeFile(path.join(h.dir, 'plain'), 'x');
    const same = await h.session.callTool('create_directory', { path: path.join(h.dir, 'plain') });
    expect(same.isError).toBe(true);
    expect(same.text).toContain('a file with that name exists');
    const below = await h.session.callTool('create_directory', { path: path.join(h.dir, 'plain', 'sub') });
    expect(below.isError).toBe(true);
    expect(await readFile(path.join(h.dir, 'plain'), 'utf8')).toBe('x');
  });
});

describe('write tool registration', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide();
  });
  afterAll(async () => h.close());

  it('publishes truthful annotations and output schemas', async () => {
    const { tools } = await h.session.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('write_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false });
    expect(byName.get('create_directory')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(byName.get('edit_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.get('move_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.get('copy_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(byName.get('delete_file')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true });
    for (const name of ['write_file', 'create_directory', 'edit_file', 'move_file', 'copy_file', 'delete_file']) {
      expect(byName.get(name)?.outputSchema?.type).toBe('object');
    }
    expect(Object.keys(byName.get('edit_file')?.inputSchema.properties ?? {})).toEqual(['path', 'edits', 'dryRun']);
    expect(Object.keys(byName.get('move_file')?.inputSchema.properties ?? {})).toEqual(['source', 'destination']);
  });

  it('registers no write tool in read-only mode', async () => {
    const readOnly = await startWriteSide();
    try {
      readOnly.config.readOnly = true;
      const session = await readOnly.connect();
      const names = (await session.client.listTools()).tools.map((t) => t.name);
      for (const name of ['write_file', 'create_directory', 'edit_file', 'move_file', 'copy_file', 'delete_file']) expect(names).not.toContain(name);
      expect(names).toContain('read_text_file');
    } finally {
      await readOnly.close();
    }
  });
});
