/**
 * Faults that happen to real users, through the real protocol: a watched directory removed and
 * created again (a build's clean step, a checkout, a restore), file watches exhausted (the
 * kernel's inotify limit), and the disk full during a write.
 */
import { appendFile, mkdir, readdir, readFile, rm, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, spawnServer, type SpawnedSession, type TestSession } from '@suite/test-kit';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../dist/index.js');
const uriOf = (p: string): string => pathToFileURL(p).href;

const updated = (session: TestSession, uri: string, what: string, action: () => Promise<unknown>): Promise<unknown> =>
  session.notifiedBy('notifications/resources/updated', action, { uri, what });
const listChanged = (session: TestSession, what: string, action: () => Promise<unknown>): Promise<unknown> =>
  session.notifiedBy('notifications/resources/list_changed', action, { what });

describe('a watched directory removed and created again', () => {
  let h: WriteSideHarness | undefined;
  let spawned: { session: SpawnedSession; cleanup: () => Promise<void> } | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await spawned?.session.close();
    await spawned?.cleanup();
    spawned = undefined;
  });

  it('a subscribed file whose directory is removed and recreated keeps being announced; the listing keeps announcing list_changed', async () => {
    h = await startWriteSide();
    const sub = path.join(h.dir, 'build');
    const file = path.join(sub, 'out.txt');
    await mkdir(sub);
    await writeFile(file, 'v1');
    const uri = uriOf(file);
    await h.session.client.subscribeResource({ uri });
    await h.session.client.listResources();

    await updated(h.session, uri, 'a write', () => writeFile(file, 'v2'));
    await updated(h.session, uri, 'its directory removed', () => rm(sub, { recursive: true }));
    await updated(h.session, uri, 'directory and file created again', async () => {
      await mkdir(sub);
      await writeFile(file, 'v3');
    });
    expect((await h.session.readResource(uri)).text).toBe('v3');
    await updated(h.session, uri, 'an append to the new file', () => appendFile(file, '+'));
    // Our own write tool on the recreated file is announced too.
    await updated(h.session, uri, 'write_file on the new file', async () => {
      const write = await h!.session.callTool('write_file', { path: file, content: 'v4' });
      expect(write.isError, write.text).toBe(false);
    });
    await listChanged(h.session, 'a file added in the recreated directory', () =>
      writeFile(path.join(sub, 'added.txt'), 'new'),
    );
  });

  it('over stdio of the built bin: the allowed directory itself removed and recreated, subscriptions and list_changed recover', async () => {
    const temp = await makeTempDir('fs-faults-');
    const root = path.join(temp.dir, 'root');
    await mkdir(root);
    const file = path.join(root, 'notes.txt');
    await writeFile(file, 'first');
    const session = await spawnServer(BIN, [root]);
    spawned = { session, cleanup: temp.cleanup };
    const uri = uriOf(file);
    await session.client.subscribeResource({ uri });
    await session.client.listResources();

    await updated(session, uri, 'a write', () => writeFile(file, 'second'));
    await updated(session, uri, 'the allowed directory removed', () => rm(root, { recursive: true }));
    const gone = await session.callTool('read_text_file', { path: file });
    expect(gone.isError).toBe(true);
    await updated(session, uri, 'the allowed directory and the file created again', async () => {
      await mkdir(root);
      await writeFile(file, 'third');
    });
    expect((await session.readResource(uri)).text).toBe('third');
    await updated(session, uri, 'an append', () => appendFile(file, ' and more'));
    await listChanged(session, 'a file added to the recreated directory', () =>
      writeFile(path.join(root, 'added.txt'), 'new'),
    );
    const read = await session.callTool('read_text_file', { path: path.join(root, 'added.txt') });
    expect(read.text).toBe('new');
  }, 60_000);
});

/**
 * The server's view of a directory mounted only in its own mount namespace: /proc/<pid>/root
 * resolves paths as that process sees them (the test owns the user namespace, so it may look).
 */
function viewOf(session: SpawnedSession, dir: string): string {
  if (session.pid === undefined) throw new Error('the server has no pid');
  return `/proc/${session.pid}/root${dir}`;
}

/** Starts the built bin on a 256 KiB tmpfs mounted over `dir` in a user and mount namespace of its own. */
async function serveOnTinyDisk(dir: string): Promise<SpawnedSession> {
  const quoted = `'${dir.replace(/'/g, `'\\''`)}'`;
  try {
    return await spawnServer(BIN, [dir], {
      launcher: ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', `mount -t tmpfs -o size=256k tmpfs ${quoted} && exec "$0" "$@"`],
    });
  } catch (error) {
    // No skip: CI runs on machines like this one, where unprivileged user namespaces work.
    throw new Error(`The disk-full tests need util-linux unshare and unprivileged user and mount namespaces: ${String(error)}`);
  }
}

/** Fills the file system until `leave` bytes are free (a page or so either way). */
async function fillUntil(view: string, leave: number): Promise<void> {
  const { bavail, bsize } = await statfs(view);
  const free = bavail * bsize;
  if (free > leave) await appendFile(`${view}/filler.bin`, Buffer.alloc(free - leave, 1));
}

const suiteEntries = async (view: string): Promise<string[]> => (await readdir(view)).filter((name) => name.startsWith('.suite-'));

describe('the disk full during a write (a real ENOSPC from a 256 KiB tmpfs)', () => {
  let temp: { dir: string; cleanup: () => Promise<void> } | undefined;
  let session: SpawnedSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await temp?.cleanup();
    temp = undefined;
  });

  it('write_file and edit_file that would overflow answer "no space left", leave the old content intact and no temporary file; the server writes again once there is room', async () => {
    temp = await makeTempDir('fs-full-');
    const dir = path.join(temp.dir, 'mnt');
    await mkdir(dir);
    session = await serveOnTinyDisk(dir);
    const view = viewOf(session, dir);
    // The file system really is the tiny one the server sees.
    expect((await statfs(view)).blocks * (await statfs(view)).bsize).toBeLessThanOrEqual(256 * 1024);
    const original = `HEADER\n${'the original content, line by line\n'.repeat(400)}`;
    const notes = path.join(dir, 'notes.txt');
    await writeFile(`${view}/notes.txt`, original);
    await fillUntil(view, 32 * 1024);

    const big = 'x'.repeat(96 * 1024);
    const write = await session.callTool('write_file', { path: notes, content: big });
    expect(write.isError).toBe(true);
    expect(write.text).toMatch(/no space left on the device/i);
    expect(write.text).toContain(notes);
    expect(write.text).not.toMatch(/failed unexpectedly|\n\s+at /);
    expect(await readFile(`${view}/notes.txt`, 'utf8')).toBe(original);
    expect(await suiteEntries(view)).toEqual([]);

    const edit = await session.callTool('edit_file', { path: notes, edits: [{ oldText: 'HEADER', newText: big }] });
    expect(edit.isError).toBe(true);
    expect(edit.text).toMatch(/no space left on the device/i);
    expect(await readFile(`${view}/notes.txt`, 'utf8')).toBe(original);
    expect(await suiteEntries(view)).toEqual([]);

    const created = await session.callTool('write_file', { path: path.join(dir, 'new.txt'), content: big });
    expect(created.isError).toBe(true);
    expect(created.text).toMatch(/no space left on the device/i);
    expect((await readdir(view)).sort()).toEqual(['filler.bin', 'notes.txt']);

    // Not a byte left: even the write lock (a small file beside the target) cannot be written.
    await fillUntil(view, 0);
    expect((await statfs(view)).bavail).toBe(0);
    const full = await session.callTool('edit_file', { path: notes, edits: [{ oldText: 'HEADER', newText: 'EDITED' }] });
    expect(full.isError).toBe(true);
    expect(full.text).toMatch(/no space left on the device/i);
    expect(await readFile(`${view}/notes.txt`, 'utf8')).toBe(original);
    expect(await suiteEntries(view)).toEqual([]);

    // Room again: the same server writes.
    await rm(`${view}/filler.bin`);
    const again = await session.callTool('write_file', { path: notes, content: big });
    expect(again.isError, again.text).toBe(false);
    expect(await readFile(`${view}/notes.txt`, 'utf8')).toBe(big);
    expect(await suiteEntries(view)).toEqual([]);
  }, 60_000);
});
