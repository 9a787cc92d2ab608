import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, watch } from 'node:fs';
import { mkdir, readdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HOST_TAG } from '@suite/shared';
import { makeTempDir, spawnServer, waitUntil, type SpawnedSession } from '@suite/test-kit';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
/** The host tag the suite's temporary names carry (host name and boot). */
const HOST = HOST_TAG;

/** A temporary name owned by this (live) test process, as the shared layer names them. */
function liveTemp(kind: 'tmp' | 'deleting' = 'tmp'): string {
  return `.suite-${process.pid}-${HOST}-${randomBytes(4).toString('hex')}.${kind}`;
}

/** The pid of a process that has exited (so an owner that is certainly gone). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(child.stdout);
}

/**
 * Starts the built bin as a raw child (no SDK client, so it can be killed at any moment) and sends
 * it a write_file of `bytes` bytes; resolves once its temporary file has appeared in `dir`.
 */
async function killableWriter(dir: string, file: string, bytes: number): Promise<{ child: ReturnType<typeof spawn>; temp: string; exited: Promise<void> }> {
  const child = spawn(process.execPath, [bin, dir], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, SUITE_LOG_LEVEL: 'emergency' } });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const send = (m: unknown): boolean => child.stdin!.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  await waitUntil(() => out.includes('"id":0'), { what: 'initialize' });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  let temp: string | undefined;
  const watcher = watch(dir, (_event, name) => {
    if (!temp && typeof name === 'string' && /^\.suite-.*\.tmp$/.test(name)) temp = path.join(dir, name);
  });
  try {
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_file', arguments: { path: file, content: 'z'.repeat(bytes) } } });
    await waitUntil(() => temp !== undefined, { what: 'the temporary file of the write', timeoutMs: 10_000, intervalMs: 1 });
  } finally {
    watcher.close();
  }
  return { child, temp: temp!, exited };
}

describe('temporary files of writes', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  const sessions: SpawnedSession[] = [];
  beforeEach(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing.`);
    ({ dir, cleanup } = await makeTempDir('fs-temp-'));
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
    await cleanup();
  });

  it('a server killed with SIGKILL mid-write leaves its temporary file; the next start removes it and the target is untouched', async () => {
    const file = path.join(dir, 'big.bin');
    await writeFile(file, 'the old content\n');
    const { child, temp, exited } = await killableWriter(dir, file, 9 * 1024 * 1024);
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(temp)).toBe(true);
    const restarted = await spawnServer(bin, [dir], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    sessions.push(restarted);
    // The sweep removes the killed writer's temporary file and its write lock one after the other: wait for both.
    await waitUntil(() => !existsSync(temp) && readdirSync(dir).length === 1, { what: 'the start-up sweep to remove the leftovers', timeoutMs: 10_000 });
    expect(await readdir(dir)).toEqual(['big.bin']);
    expect((await restarted.callTool('read_text_file', { path: file })).text).toBe('the old content\n');
  }, 60_000);

  it('a server stopped with SIGTERM mid-write removes its temporary file before it exits', async () => {
    const file = path.join(dir, 'big.bin');
    const { child, temp, exited } = await killableWriter(dir, file, 9 * 1024 * 1024);
    child.kill('SIGTERM');
    await exited;
    expect(existsSync(temp)).toBe(false);
    expect((await readdir(dir)).filter((n) => n.startsWith('.suite-'))).toEqual([]);
  }, 60_000);

  it('sweeps only stale leftovers with our exact names, inside the roots, without following links', async () => {
    const dead = deadPid();
    const sub = path.join(dir, 'deep', 'er');
    await mkdir(sub, { recursive: true });
    const { dir: outside, cleanup: cleanOutside } = await makeTempDir('fs-temp-outside-');
    try {
      const stale = {
        deadOwner: path.join(dir, `.suite-${dead}-${HOST}-0000aaaa.tmp`),
        deadOwnerDeep: path.join(sub, `.suite-${dead}-${HOST}-0000bbbb.tmp`),
        deletingDir: path.join(dir, `.suite-${dead}-${HOST}-0000cccc.deleting`),
        oldForeign: path.join(dir, `.suite-4242-ffffffff-0000dddd.tmp`),
        deadLock: path.join(dir, '.suite-0123456789abcdef.lock'),
      };
      const kept = {
        liveOwner: path.join(dir, liveTemp()),
        youngForeign: path.join(dir, `.suite-4242-ffffffff-0000eeee.tmp`),
        notOurPattern: path.join(dir, '.suite-notours.tmp'),
        userFile: path.join(dir, 'notes.tmp'),
        outsideLeftover: path.join(outside, `.suite-${dead}-${HOST}-0000ffff.tmp`),
      };
      for (const p of [stale.deadOwner, stale.deadOwnerDeep, stale.oldForeign, kept.liveOwner, kept.youngForeign, kept.notOurPattern, kept.userFile, kept.outsideLeftover]) {
        await writeFile(p, 'partial');
      }
      await mkdir(stale.deletingDir);
      await writeFile(path.join(stale.deletingDir, 'half-deleted.txt'), 'x');
      await writeFile(stale.deadLock, `${dead} ${HOST}\n`);
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
      await utimes(stale.oldForeign, twoHoursAgo, twoHoursAgo);
      // A link to a directory outside the roots holding a leftover: the sweep must not go there.
      await symlink(outside, path.join(dir, 'link-out'));

      const session = await spawnServer(bin, [dir], { env: { SUITE_LOG_LEVEL: 'emergency' } });
      sessions.push(session);
      await waitUntil(() => Object.values(stale).every((p) => !existsSync(p)), { what: 'the sweep', timeoutMs: 10_000 });
      for (const [name, p] of Object.entries(kept)) expect(existsSync(p), name).toBe(true);
    } finally {
      await cleanOutside();
    }
  }, 60_000);

  it('never lists or searches a temporary file, a lock or a directory being deleted while they are there', async () => {
    await mkdir(path.join(dir, 'sub'));
    await writeFile(path.join(dir, 'sub', 'real.txt'), 'needle in a real file\n');
    const ours = [path.join(dir, liveTemp()), path.join(dir, 'sub', liveTemp()), path.join(dir, '.suite-fedcba9876543210.lock')];
    for (const p of ours) await writeFile(p, 'needle in a temporary file\n');
    const deleting = path.join(dir, 'sub', liveTemp('deleting'));
    await mkdir(deleting);
    await writeFile(path.join(deleting, 'inner.txt'), 'needle being deleted\n');
    // Owned by this (live) test process: the server's sweep leaves them alone, as it would a write in progress.
    const session = await spawnServer(bin, [dir], { env: { SUITE_LOG_LEVEL: 'emergency' } });
    sessions.push(session);

    const listing = await session.callTool('list_directory', { path: dir });
    expect(listing.structured?.entries).toEqual([{ name: 'sub', type: 'directory' }]);
    const sized = await session.callTool('list_directory_with_sizes', { path: path.join(dir, 'sub') });
    expect((sized.structured?.entries as { name: string }[]).map((e) => e.name)).toEqual(['real.txt']);
    const tree = await session.callTool('directory_tree', { path: dir });
    expect((tree.structured?.entries as { path: string }[]).map((e) => e.path)).toEqual(['sub', 'sub/real.txt']);
    const found = await session.callTool('search_files', { path: dir, pattern: '**/*' });
    expect((found.structured?.matches as { path: string }[]).map((m) => m.path)).toEqual([path.join(dir, 'sub'), path.join(dir, 'sub', 'real.txt')]);
    const grep = await session.callTool('search_content', { path: dir, pattern: 'needle', respectGitignore: false });
    expect((grep.structured?.matches as { path: string }[]).map((m) => m.path)).toEqual(['sub/real.txt']);
    const { resources } = await session.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([pathToFileURL(path.join(dir, 'sub', 'real.txt')).href]);
    const copy = await session.callTool('copy_file', { source: path.join(dir, 'sub'), destination: path.join(dir, 'copy'), recursive: true });
    expect(copy.isError).toBe(false);
    expect(await readdir(path.join(dir, 'copy'))).toEqual(['real.txt']);
    for (const p of ours) expect(existsSync(p)).toBe(true);
  }, 60_000);
});
