import { execFileSync } from 'node:child_process';
import { closeSync, readFileSync } from 'node:fs';
import { link, mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PathGuard } from '@suite/shared';
import { CheckedOpener, OutsideError, insideRoots } from '../src/open-checked.js';
import { openVerifiedSync } from '../src/verified-open.js';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

const SECRET = 'TOP-SECRET-CONTENT';

describe('read-side security regressions', () => {
  let h: ReadSideHarness;
  let evil: string;
  beforeAll(async () => {
    h = await startReadSide();
    // A sibling whose name starts with the root's name: /x/root-evil is not inside /x/root.
    evil = `${h.dir}-evil`;
    await mkdir(evil);
    await writeFile(path.join(evil, 'secret.txt'), SECRET);
    await writeFile(path.join(h.outside, 'secret.txt'), `${SECRET}\n`);
    await writeFile(path.join(h.outside, 'big.bin'), Buffer.alloc(123_457, 1));
    await writeFile(path.join(h.dir, 'notes.txt'), 'inside\n');
    await symlink(path.join(h.outside, 'secret.txt'), path.join(h.dir, 'link-out'));
    await symlink(h.outside, path.join(h.dir, 'dir-out'));
    await symlink(path.join(h.outside, 'big.bin'), path.join(h.dir, 'big-out'));
    await symlink(path.join(h.outside, 'does-not-exist'), path.join(h.dir, 'dangling-out'));
    await symlink(path.join(h.dir, 'missing-target'), path.join(h.dir, 'dangling-in'));
    await symlink(path.join(h.dir, 'notes.txt'), path.join(h.dir, 'link-in'));
  });
  afterAll(async () => h.close());

  const denied = async (tool: string, args: Record<string, unknown>): Promise<string> => {
    const out = await h.session.callTool(tool, args);
    expect(out.isError, `${tool} ${JSON.stringify(args)} should fail`).toBe(true);
    expect(out.text).not.toContain(SECRET);
    return out.text;
  };

  it('refuses a prefix sibling of the root (/root-evil) in every read tool', async () => {
    const file = path.join(evil, 'secret.txt');
    for (const [tool, args] of [
      ['read_text_file', { path: file }],
      ['read_file', { path: file }],
      ['read_media_file', { path: file }],
      ['get_file_info', { path: file }],
      ['list_directory', { path: evil }],
      ['list_directory_with_sizes', { path: evil }],
      ['directory_tree', { path: evil }],
      ['search_files', { path: evil, pattern: '**' }],
      ['search_content', { path: evil, pattern: 'SECRET' }],
    ] as const) {
      expect(await denied(tool, args)).toMatch(/Access denied/);
    }
  });

  it('refuses .. traversal, relative and absolute', async () => {
    expect(await denied('read_text_file', { path: '../outside/secret.txt' })).toMatch(/Access denied/);
    expect(await denied('read_text_file', { path: `${h.dir}/../outside/secret.txt` })).toMatch(/Access denied/);
    expect(await denied('list_directory', { path: `${h.dir}/..` })).toMatch(/Access denied/);
  });

  it('refuses absolute paths elsewhere without revealing whether they exist', async () => {
    const existing = await denied('read_text_file', { path: '/etc/passwd' });
    const missing = await denied('read_text_file', { path: '/etc/definitely-not-here-4242' });
    expect(existing).toBe('Access denied: "/etc/passwd" is outside the allowed directories.');
    expect(missing).toBe('Access denied: "/etc/definitely-not-here-4242" is outside the allowed directories.');
    await denied('get_file_info', { path: '/etc' });
  });

  it('refuses to read through a symlink that leaves the roots', async () => {
    for (const tool of ['read_text_file', 'read_media_file', 'get_file_info']) {
      expect(await denied(tool, { path: 'link-out' })).toMatch(/Access denied/);
    }
    expect(await denied('read_text_file', { path: 'dir-out/secret.txt' })).toMatch(/Access denied/);
    expect(await denied('list_directory', { path: 'dir-out' })).toMatch(/Access denied/);
    expect(await denied('directory_tree', { path: 'dir-out' })).toMatch(/Access denied/);
    const multi = await h.session.callTool('read_multiple_files', { paths: ['link-out', 'notes.txt'] });
    expect(multi.isError).toBe(false);
    expect(multi.text).not.toContain(SECRET);
    expect(multi.text).toContain('link-out: Error - Access denied');
    expect(multi.text).toContain('notes.txt:\ninside');
  });

  it('follows a symlink that stays inside the roots', async () => {
    const out = await h.session.callTool('read_text_file', { path: 'link-in' });
    expect(out.text).toBe('inside\n');
  });

  it('does not leak the size or times of a symlink target in list_directory_with_sizes', async () => {
    const out = await h.session.callTool('list_directory_with_sizes', { path: h.dir });
    expect(out.isError).toBe(false);
    expect(out.text).not.toMatch(/123457|120\.56 KB/);
    const entries = (out.structured as { entries: { name: string; type: string; size?: number; modified?: string }[]; totalSize: number }).entries;
    expect(entries.find((e) => e.name === 'big-out')).toEqual({ name: 'big-out', type: 'symlink' });
    expect(entries.find((e) => e.name === 'dir-out')).toEqual({ name: 'dir-out', type: 'symlink' });
    expect((out.structured as { totalSize: number }).totalSize).toBe(7);
    expect(out.text).toMatch(/^\[LINK\] big-out$/m);
  });

  it('does not search or list through a symlinked directory', async () => {
    const grep = await h.session.callTool('search_content', { path: h.dir, pattern: 'SECRET', respectGitignore: false });
    expect(grep.isError).toBe(false);
    expect(grep.text).not.toContain(SECRET);
    expect((grep.structured as { matches: unknown[] }).matches).toEqual([]);
    const files = await h.session.callTool('search_files', { path: h.dir, pattern: '**/secret.txt' });
    expect(files.text).toBe('No matches found');
    const tree = await h.session.callTool('directory_tree', { path: h.dir });
    expect(tree.text).not.toContain('secret.txt');
  });

  it('treats a dangling symlink out of the roots as denied, and one inside as not found', async () => {
    expect(await denied('read_text_file', { path: 'dangling-out' })).toMatch(/Access denied/);
    expect(await denied('get_file_info', { path: 'dangling-out' })).toMatch(/Access denied/);
    expect(await denied('read_text_file', { path: 'dangling-in' })).toBe('Not found: dangling-in');
    const listing = await h.session.callTool('list_directory', { path: h.dir });
    expect(listing.text).toMatch(/^\[LINK\] dangling-out$/m);
  });

  it('refuses NUL bytes, stray quotes and whitespace, and Windows paths with clear messages', async () => {
    expect(await denied('read_text_file', { path: 'notes.txt\0.png' })).toMatch(/NUL byte/);
    for (const p of ['notes.txt"', '"notes.txt"', "'notes.txt", ' notes.txt', 'notes.txt ', 'notes.txt\t']) {
      expect(await denied('read_text_file', { path: p })).toMatch(/starts or ends with whitespace or a quote/);
    }
    for (const p of ['C:\\Users\\me\\notes.txt', 'c:/notes.txt', '\\\\server\\share\\x']) {
      expect(await denied('read_text_file', { path: p })).toMatch(/Windows path/);
      expect(await denied('list_directory', { path: p })).toMatch(/Windows path/);
    }
    expect(await denied('search_files', { path: 'C:\\', pattern: '*' })).toMatch(/Windows path/);
  });

  it('never puts host paths the user did not give into errors', async () => {
    const outputs = [
      await h.session.callTool('read_text_file', { path: 'link-out' }),
      await h.session.callTool('read_text_file', { path: 'dangling-out' }),
      await h.session.callTool('read_text_file', { path: '../outside/secret.txt' }),
      await h.session.callTool('list_directory', { path: 'dir-out' }),
    ];
    for (const out of outputs) {
      expect(out.text).not.toContain(h.outside);
      expect(out.text).not.toContain(h.base);
    }
  });

  it('hard links: a hard link inside the roots is the file itself and is readable (documented policy), and is visible as hardLinks > 1', async () => {
    // A hard link is a second name for the same inode, not a pointer that can be checked: there is no
    // "target" outside the roots to compare against. Creating one needs write access to the root
    // directory (and, with fs.protected_hardlinks, ownership of the file), so the policy is to allow
    // reads and report the link count, which get_file_info exposes.
    await link(path.join(h.outside, 'secret.txt'), path.join(h.dir, 'hard-link'));
    const out = await h.session.callTool('read_text_file', { path: 'hard-link' });
    expect(out.isError).toBe(false);
    expect(out.text).toBe(`${SECRET}\n`);
    const info = await h.session.callTool('get_file_info', { path: 'hard-link' });
    expect(info.structured).toMatchObject({ hardLinks: 2, isSymbolicLink: false });
    // Reading never modifies the linked file.
    expect(await readFile(path.join(h.outside, 'secret.txt'), 'utf8')).toBe(`${SECRET}\n`);
  });

  it('does not hang on a FIFO: reads refuse it and searches skip it', async () => {
    execFileSync('mkfifo', [path.join(h.dir, 'pipe')]);
    const read = await h.session.callTool('read_text_file', { path: 'pipe' });
    expect(read.isError).toBe(true);
    expect(read.text).toBe('pipe is not a regular file.');
    const media = await h.session.callTool('read_media_file', { path: 'pipe' });
    expect(media.isError).toBe(true);
    const grep = await h.session.callTool('search_content', { path: h.dir, pattern: 'inside' });
    expect((grep.structured as { matches: { path: string }[] }).matches.map((m) => m.path)).toEqual(['notes.txt']);
  });

  it('verifies after opening: a parent swapped for a symlink between the check and the open is refused', async () => {
    // What a racing attacker would leave behind: the path was checked while "swapped" was a real
    // directory, and is opened after it became a link out of the roots. The open follows the parent
    // link (only the last component is O_NOFOLLOW), so the check after the open is what catches it.
    await symlink(h.outside, path.join(h.dir, 'swapped'));
    const guard = new PathGuard([h.dir]);
    expect(() => openVerifiedSync(guard, path.join(h.dir, 'swapped', 'secret.txt'), 'swapped/secret.txt')).toThrow(
      'Access denied: "swapped/secret.txt" is outside the allowed directories.',
    );
    // The last component itself being a link is refused by O_NOFOLLOW.
    expect(() => openVerifiedSync(guard, path.join(h.dir, 'link-out'), 'link-out')).toThrow(/Access denied/);
    const ok = openVerifiedSync(guard, path.join(h.dir, 'notes.txt'), 'notes.txt');
    expect(ok.stat.size).toBe(7);
    ok.close();
  });

  it("opens a walk's files a directory at a time, and no swap of a directory or a name for a symlink leads out", async () => {
    const opener = new CheckedOpener(insideRoots([h.dir]));
    const read = (file: string): string => {
      const fd = opener.open(file);
      try {
        return readFileSync(fd, 'utf8');
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    };
    try {
      const dir = path.join(h.dir, 'walked');
      await mkdir(dir);
      await writeFile(path.join(dir, 'a.txt'), 'inside a\n');
      await writeFile(path.join(dir, 'b.txt'), 'inside b\n');
      expect(read(path.join(dir, 'a.txt'))).toBe('inside a\n');
      // The directory is swapped for a link out of the roots while the opener is in it: the next
      // name is looked up in the directory it checked, wherever that now is, not through the link.
      await rename(dir, path.join(h.dir, 'walked-moved'));
      await symlink(h.outside, dir);
      expect(read(path.join(dir, 'b.txt'))).toBe('inside b\n');
      expect(() => read(path.join(dir, 'secret.txt'))).toThrow(/ENOENT/);
      expect(opener.stillInside()).toBe(true);
      // Moved out of the roots once its files were read: what was read through it does not count.
      await rename(path.join(h.dir, 'walked-moved'), path.join(h.outside, 'walked-out'));
      expect(opener.stillInside()).toBe(false);
      await rename(path.join(h.outside, 'walked-out'), path.join(h.dir, 'walked-moved'));
      // A name swapped for a link: refused (O_NOFOLLOW), as outside.
      await symlink(path.join(h.outside, 'secret.txt'), path.join(h.dir, 'walked-moved', 'c.txt'));
      expect(() => read(path.join(h.dir, 'walked-moved', 'c.txt'))).toThrow(OutsideError);
      // Entering a directory that is a link by the time it is opened: refused, file by file.
      expect(() => read(path.join(h.dir, 'dir-out', 'secret.txt'))).toThrow(OutsideError);
      expect(() => read(path.join(dir, 'secret.txt'))).toThrow(OutsideError);
      expect(() => read(path.join(h.dir, 'link-out'))).toThrow(OutsideError);
      expect(read(path.join(h.dir, 'notes.txt'))).toBe('inside\n');
    } finally {
      opener.close();
    }
  });

  it('opens a name given apart from its directory only as a name: one holding a separator is checked file by file', async () => {
    const opener = new CheckedOpener(insideRoots([h.dir]));
    const dir = path.join(h.dir, 'by-name');
    await mkdir(dir);
    await writeFile(path.join(dir, 'a.txt'), 'inside a\n');
    // A directory of the checked one that is a link out of the roots: through the checked
    // directory's descriptor, "out/secret.txt" would follow it; it is opened as a path and checked.
    await symlink(h.outside, path.join(dir, 'out'));
    try {
      const fd = opener.openIn(dir, 'a.txt');
      expect(readFileSync(fd, 'utf8')).toBe('inside a\n');
      closeSync(fd);
      for (const name of ['out/secret.txt', '../by-name/out/secret.txt', 'out']) {
        expect(() => opener.openIn(dir, name), name).toThrow(OutsideError);
      }
      // Names that are no file's: whatever they open is checked where it really is (here, directories inside).
      for (const name of ['..', '.', '']) {
        const opened = opener.openIn(dir, name);
        expect(() => readFileSync(opened, 'utf8'), name).toThrow(/EISDIR/);
        closeSync(opened);
      }
      expect(opener.stillInside()).toBe(true);
    } finally {
      opener.close();
    }
  });
});
