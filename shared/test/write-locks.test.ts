import { spawn } from 'node:child_process';
import { lstat, open, readdir, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../src/core/progress.js';
import { FileChangedError, currentVersion } from '../src/files/file-version.js';
import { PathGuard } from '../src/files/paths.js';
import { ToolError } from '../src/core/errors.js';
import { HOST_TAG, LOCK_HEARTBEAT_MS, LOCK_STALE_MS, PROCESS_START, lockName, lockStale, sweepTempFiles } from '../src/files/temp-files.js';
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

describe('write locks left behind (replicas on one host, or on hosts that share a volume)', () => {
  const lockOf = (target: string): string => path.join(path.dirname(target), lockName(path.basename(target)));

  it('breaks at once the lock of a writer killed with SIGKILL while it held it', async () => {
    const target = path.join(dir, 'shared.txt');
    await writeFile(target, 'x');
    const holder = spawn(process.execPath, ['--input-type=module', '-e', `
      import { open } from 'node:fs/promises';
      import { withWriteLock } from ${JSON.stringify(path.join(import.meta.dirname, '..', 'dist', 'index.js'))};
      await withWriteLock(${JSON.stringify(target)}, async () => { process.stdout.write('held\\n'); await new Promise(() => setInterval(() => undefined, 1000)); }, { open: (f, fl, m) => open(f, fl, m) });
    `], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout.once('data', () => resolve()));
    expect(await readdir(dir)).toContain(path.basename(lockOf(target)));
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    // The lock is still on disk (nothing ran at its exit), whole, naming the dead writer.
    expect(await readFile(lockOf(target), 'utf8')).toMatch(new RegExp(`^${holder.pid} [0-9a-f]{8} \\d+\\n$`));
    const started = Date.now();
    await withWriteLock(target, async () => undefined, { ...opener, waitMs: 5000 });
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await readdir(dir)).filter((n) => n.startsWith('.suite-'))).toEqual([]);
  });

  it('knows a reused pid: a lock naming a running process that started at another time is stale', async () => {
    const target = path.join(dir, 'reused.txt');
    // Our own pid, and the parent's (alive), each with a start time that is not theirs.
    for (const pid of [process.pid, process.ppid]) {
      await writeFile(lockOf(target), `${pid} ${HOST_TAG} ${PROCESS_START + 12345}\n`);
      const stat = await lstat(lockOf(target));
      expect(await lockStale(lockOf(target), stat)).toBe(true);
    }
    // With its real start time, the live parent still holds it.
    const parentStart = Number((await readFile(`/proc/${process.ppid}/stat`, 'utf8')).split(') ')[1]!.split(' ')[19]);
    await writeFile(lockOf(target), `${process.ppid} ${HOST_TAG} ${parentStart}\n`);
    expect(await lockStale(lockOf(target), await lstat(lockOf(target)))).toBe(false);
  });

  it('waits for a live lock of another host, and breaks it once nobody has touched it for LOCK_STALE_MS', async () => {
    const target = path.join(dir, 'remote.txt');
    await writeFile(lockOf(target), `4242 deadbeef 777\n`);
    await expect(withWriteLock(target, async () => 'no', { ...opener, waitMs: 300 })).rejects.toThrow(/being changed by another operation/);
    const past = new Date(Date.now() - LOCK_STALE_MS - 1000);
    await utimes(lockOf(target), past, past);
    const started = Date.now();
    expect(await withWriteLock(target, async () => 'yes', { ...opener, waitMs: 5000 })).toBe('yes');
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('touches a lock while it holds it, so that other hosts see it alive', async () => {
    const target = path.join(dir, 'long.txt');
    await withWriteLock(
      target,
      async () => {
        const before = (await lstat(lockOf(target))).mtimeMs;
        await sleep(LOCK_HEARTBEAT_MS + 600);
        expect((await lstat(lockOf(target))).mtimeMs).toBeGreaterThan(before);
      },
      opener,
    );
  });

  it('sweeps a dead writer\'s lock at start-up', async () => {
    const target = path.join(dir, 'swept.txt');
    const dead = spawn(process.execPath, ['-e', '']);
    await new Promise((resolve) => dead.once('exit', resolve));
    await writeFile(lockOf(target), `${dead.pid} ${HOST_TAG} 1\n`);
    const result = await sweepTempFiles([dir]);
    expect(result.removed).toEqual([lockOf(target)]);
  });
});
