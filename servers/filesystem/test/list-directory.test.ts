import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

describe('list_directory and list_directory_with_sizes', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide({ limits: { maxEntries: 5 } });
    await mkdir(path.join(h.dir, 'sub'));
    await writeFile(path.join(h.dir, 'b.txt'), 'x'.repeat(2048));
    await writeFile(path.join(h.dir, 'a.txt'), 'abc');
    await writeFile(path.join(h.dir, 'c.txt'), '');
    await symlink(path.join(h.dir, 'a.txt'), path.join(h.dir, 'link-in'));
    await mkdir(path.join(h.dir, 'many'));
    for (let i = 0; i < 12; i++) await writeFile(path.join(h.dir, 'many', `f${String(i).padStart(2, '0')}`), 'z'.repeat(i));
  });
  afterAll(async () => h.close());

  it('lists entries sorted by name with [FILE]/[DIR]/[LINK] prefixes', async () => {
    const out = await h.session.callTool('list_directory', { path: h.dir });
    expect(out.isError).toBe(false);
    expect(out.text).toBe('[FILE] a.txt\n[FILE] b.txt\n[FILE] c.txt\n[LINK] link-in\n[DIR] many\n[DIR] sub'.split('\n').slice(0, 5).join('\n') + '\n[truncated: 1 more entries not shown; raise maxEntries or use search_files]');
    expect(out.structured).toMatchObject({ total: 6, truncated: true });
    const all = await h.session.callTool('list_directory', { path: h.dir, maxEntries: 100 });
    expect(all.text).toBe('[FILE] a.txt\n[FILE] b.txt\n[FILE] c.txt\n[LINK] link-in\n[DIR] many\n[DIR] sub');
    expect((all.structured as { entries: unknown[] }).entries).toEqual([
      { name: 'a.txt', type: 'file' },
      { name: 'b.txt', type: 'file' },
      { name: 'c.txt', type: 'file' },
      { name: 'link-in', type: 'symlink' },
      { name: 'many', type: 'directory' },
      { name: 'sub', type: 'directory' },
    ]);
  });

  it('says when a directory is empty and refuses files', async () => {
    expect((await h.session.callTool('list_directory', { path: path.join(h.dir, 'sub') })).text).toBe('(empty directory)');
    const file = await h.session.callTool('list_directory', { path: path.join(h.dir, 'a.txt') });
    expect(file.isError).toBe(true);
    expect(file.text).toMatch(/Not a directory/);
  });

  it('lists sizes and totals, sorted by name or size', async () => {
    const byName = await h.session.callTool('list_directory_with_sizes', { path: h.dir, maxEntries: 100 });
    const lines = byName.text.split('\n');
    expect(lines[0]).toMatch(/^\[FILE\] a\.txt\s+3 B$/);
    expect(lines[1]).toMatch(/^\[FILE\] b\.txt\s+2\.00 KB$/);
    expect(lines).toContain('[LINK] link-in');
    expect(byName.text).toContain('Total: 3 files, 2 directories');
    expect(byName.text).toContain('Combined size: 2.00 KB');
    expect(byName.structured).toMatchObject({ totalFiles: 3, totalDirectories: 2, totalSize: 2051, truncated: false });
    const bySize = await h.session.callTool('list_directory_with_sizes', { path: h.dir, sortBy: 'size', maxEntries: 100 });
    const names = (bySize.structured as { entries: { name: string }[] }).entries.map((e) => e.name);
    expect(names.slice(0, 3)).toEqual(['b.txt', 'a.txt', 'c.txt']);
  });

  it('truncates long listings but totals still cover every entry', async () => {
    const out = await h.session.callTool('list_directory_with_sizes', { path: path.join(h.dir, 'many'), sortBy: 'size' });
    const structured = out.structured as { entries: { name: string; size: number }[]; totalFiles: number; totalSize: number; truncated: boolean };
    expect(structured.entries.map((e) => e.name)).toEqual(['f11', 'f10', 'f09', 'f08', 'f07']);
    expect(structured.truncated).toBe(true);
    expect(structured.totalFiles).toBe(12);
    expect(structured.totalSize).toBe(66);
    expect(out.text).toContain('[truncated: 7 more entries not shown; raise maxEntries]');
  });
});
