import { mkdir, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, snapshotTree, waitUntil } from '../src/testing.js';

describe('test kit helpers', () => {
  it('snapshotTree sees a changed byte, a new nested file and a retargeted link', async () => {
    const { dir, cleanup } = await makeTempDir();
    try {
      await mkdir(path.join(dir, 'a', 'b'), { recursive: true });
      await writeFile(path.join(dir, 'a', 'f.txt'), 'abc');
      await symlink('a/f.txt', path.join(dir, 'link'));
      const base = await snapshotTree(dir);
      expect(Object.keys(base).sort()).toEqual(['a', 'a/b', 'a/f.txt', 'link']);
      expect(await snapshotTree(dir)).toEqual(base);

      await writeFile(path.join(dir, 'a', 'f.txt'), 'abd');
      expect(await snapshotTree(dir)).not.toEqual(base);
      await writeFile(path.join(dir, 'a', 'f.txt'), 'abc');
      expect(await snapshotTree(dir)).toEqual(base);

      await writeFile(path.join(dir, 'a', 'b', 'new.txt'), '');
      expect(await snapshotTree(dir)).toHaveProperty(['a/b/new.txt']);
      await unlink(path.join(dir, 'a', 'b', 'new.txt'));

      await unlink(path.join(dir, 'link'));
      await symlink('a/b', path.join(dir, 'link'));
      expect((await snapshotTree(dir)).link).toBe('link:a/b');
    } finally {
      await cleanup();
    }
  });

  it('waitUntil resolves when the condition holds and names what it waited for on timeout', async () => {
    let n = 0;
    await waitUntil(() => ++n >= 3, { intervalMs: 5 });
    expect(n).toBe(3);
    await expect(waitUntil(async () => false, { what: 'the moon', timeoutMs: 50, intervalMs: 5 })).rejects.toThrow('Timed out waiting for the moon');
  });
});
