import { chmod, link, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

describe('get_file_info and list_allowed_directories', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide();
    await writeFile(path.join(h.dir, 'notes.md'), 'hello');
    await chmod(path.join(h.dir, 'notes.md'), 0o640);
    await mkdir(path.join(h.dir, 'folder'));
    await symlink(path.join(h.dir, 'notes.md'), path.join(h.dir, 'alias.md'));
    await link(path.join(h.dir, 'notes.md'), path.join(h.dir, 'hard.md'));
  });
  afterAll(async () => h.close());

  it('describes a file with the official keys plus typed structured fields', async () => {
    const out = await h.session.callTool('get_file_info', { path: 'notes.md' });
    expect(out.isError).toBe(false);
    for (const key of ['size', 'created', 'modified', 'accessed', 'isDirectory', 'isFile', 'permissions']) {
      expect(out.text).toMatch(new RegExp(`^${key}: `, 'm'));
    }
    expect(out.structured).toMatchObject({
      path: 'notes.md',
      type: 'file',
      size: 5,
      isFile: true,
      isDirectory: false,
      isSymbolicLink: false,
      permissions: '640',
      hardLinks: 2,
      mimeType: 'text/markdown',
    });
    expect(Date.parse((out.structured as { modified: string }).modified)).not.toBeNaN();
  });

  it('describes directories and says when the path given is a symbolic link', async () => {
    const dir = await h.session.callTool('get_file_info', { path: 'folder' });
    expect(dir.structured).toMatchObject({ type: 'directory', isDirectory: true });
    expect((dir.structured as Record<string, unknown>).mimeType).toBeUndefined();
    const alias = await h.session.callTool('get_file_info', { path: 'alias.md' });
    expect(alias.structured).toMatchObject({ type: 'file', isSymbolicLink: true, size: 5 });
  });

  it('reports a missing path as not found', async () => {
    const out = await h.session.callTool('get_file_info', { path: 'missing' });
    expect(out.isError).toBe(true);
    expect(out.text).toBe('Not found: missing');
  });

  it('lists the allowed directories as text and structured data', async () => {
    const out = await h.session.callTool('list_allowed_directories', {});
    expect(out.text).toBe(`Allowed directories:\n${h.dir}`);
    expect(out.structured).toEqual({ directories: [h.dir], source: 'command-line' });
  });
});
