import { lstat, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../src/core/progress.js';
import { FileChangedError, currentVersion } from '../src/files/file-version.js';
import { PathGuard } from '../src/files/paths.js';
import { ToolError } from '../src/core/errors.js';
import { withWriteLock } from '../src/files/write-locks.js';
import { makeTempDir } from '@suite/test-kit';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir('write-locks-')));
afterEach(async () => cleanup());

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const opener = { open: (file: string, flags: number, mode: number) => open(file, flags, mode) };

describe('withWriteLock', () => {
  it('lets one holder at a time through, in arrival order, and leaves no lock file behind', async () => {
    const file = path.join(dir, 'f.txt');
    let inside = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        withWriteLock(
          file,
          async () => {
            most = Math.max(most, ++inside);
            order.push(i);
            await sleep(1);
            inside--;
          },
          opener,
        ),
      ),
    );
    expect(most).toBe(1);
    expect(order).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(await readdir(dir)).toEqual([]);
  });

  it('takes several locks in one order, so opposite requests do not deadlock', async () => {
    const a = path.join(dir, 'a');
    const b = path.join(dir, 'b');
    const results = await Promise.all([withWriteLock([a, b], async () => 'ab', opener), withWriteLock([b, a], async () => 'ba', opener)]);
    expect(results).toEqual(['ab', 'ba']);
  });

  it('gives up waiting when cancelled or after waitMs, and the queue moves on', async () => {
    const file = path.join(dir, 'f.txt');
    let release!: () => void;
    const holder = withWriteLock(file, () => new Promise<void>((r) => (release = r)), opener);
    await sleep(10);
    const controller = new AbortController();
    const cancelled = withWriteLock(file, async () => 'never', { ...opener, signal: controller.signal });
    const timedOut = withWriteLock(file, async () => 'never', { ...opener, waitMs: 50, userPath: 'f.txt' });
    const patient = withWriteLock(file, async () => 'mine', opener);
    controller.abort();
    await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
    const error = await timedOut.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).kind).toBe('conflict');
    expect((error as ToolError).message).toContain('f.txt is being changed by another operation');
    release();
    await holder;
    expect(await patient).toBe('mine');
  });
});

describe('writeFileAtomic with an expected version', () => {
  it('writes when the file is still the version that was read', async () => {
    const file = path.join(dir, 'doc.txt');
    await writeFile(file, 'v1');
    const guard = new PathGuard([dir]);
    await guard.writeFileAtomic(file, 'v2', { expected: (await currentVersion(file))! });
    expect(await readFile(file, 'utf8')).toBe('v2');
  });

  it('refuses, writes nothing and leaves no temporary file when someone replaced or changed the file since', async () => {
    const file = path.join(dir, 'doc.txt');
    await writeFile(file, 'v1');
    const guard = new PathGuard([dir]);
    const read = (await currentVersion(file))!;
    // Replaced, as an editor saves (a new inode with the same size).
    await writeFile(path.join(dir, 'other'), 'v9');
    await rename(path.join(dir, 'other'), file);
    await expect(guard.writeFileAtomic(file, 'mine', { expected: read, userPath: 'doc.txt' })).rejects.toBeInstanceOf(FileChangedError);
    expect(await readFile(file, 'utf8')).toBe('v9');
    // Changed in place (same inode, more bytes).
    const replaced = (await currentVersion(file))!;
    const handle = await open(file, 'a');
    await handle.write('+');
    await handle.close();
    expect((await lstat(file)).ino).toBe(Number(replaced.ino));
    await expect(guard.writeFileAtomic(file, 'mine', { expected: replaced })).rejects.toThrow('was changed by another program');
    // Deleted.
    const current = (await currentVersion(file))!;
    await rm(file);
    await expect(guard.writeFileAtomic(file, 'mine', { expected: current })).rejects.toBeInstanceOf(FileChangedError);
    expect(await readdir(dir)).toEqual([]);
  });
});
