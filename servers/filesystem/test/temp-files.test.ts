import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
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
async function killableWriter(dir: string, file: string, bytes: number, env: Record<string, string>): Promise<{ child: ReturnType<typeof spawn>; temp: string; exited: Promise<void> }> {
  const child = spawn(process.execPath, [bin, dir], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  const send = (m: unknown): boolean => child.stdin!.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } } });
  await waitUntil(() => out.includes('"id":0'), { what: 'initialize' });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // The write's own temporary file, not the write lock's (its owner is staged under a temporary name too,
  // for a moment): the one that grows past what a lock's owner text could be.
  let temp: string | undefined;
  const growing = (): string | undefined => {
    for (const name of readdirSync(dir)) {
      if (!/^\.suite-.*\.tmp$/.test(name)) continue;
      const size = statSync(path.join(dir, name), { throwIfNoEntry: false })?.size ?? 0;
      if (size > 64 * 1024) return path.join(dir, name);
    }
    return undefined;
  };
  send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_file', arguments: { path: file, content: 'z'.repeat(bytes) } } });
  await waitUntil(() => (temp = growing()) !== undefined, { what: 'the temporary file of the write', timeoutMs: 10_000, intervalMs: 1 });
  return { child, temp: temp!, exited };
}

/** The journal folder a server started with `SUITE_STATE_DIR=state` keeps. */
const journalsIn = (state: string): string => path.join(state, 'temp-journal');

/** A journal as a writer (of this host) keeps it: one JSON-quoted directory per line. */
async function writeJournal(state: string, pid: number, start: number, dirs: string[]): Promise<string> {
  await mkdir(journalsIn(state), { recursive: true });
  const file = path.join(journalsIn(state), `${HOST}-${pid}-${start}.dirs`);
  await writeFile(file, dirs.map((d) => `${JSON.stringify(d)}\n`).join(''));
  return file;
}

describe('temporary files of writes', () => {
  let dir: string;
  let state: string;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;
  let cleanupState: () => Promise<void>;
  const sessions: SpawnedSession[] = [];
  beforeEach(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing.`);
    ({ dir, cleanup } = await makeTempDir('fs-temp-'));
    ({ dir: state, cleanup: cleanupState } = await makeTempDir('fs-temp-state-'));
    env = { SUITE_LOG_LEVEL: 'emergency', SUITE_STATE_DIR: state };
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close().catch(() => undefined);
    await cleanup();
    await cleanupState();
  });

  it('a server killed with SIGKILL mid-write leaves its temporary file; the next start removes it from the journal, without a tree walk, and the target is untouched', async () => {
    const deep = path.join(dir, 'a', 'b', 'c');
    await mkdir(deep, { recursive: true });
    const file = path.join(deep, 'big.bin');
    await writeFile(file, 'the old content\n');
    const { child, temp, exited } = await killableWriter(deep, file, 9 * 1024 * 1024, env);
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(temp)).toBe(true);
    // The killed writer journaled the one directory it wrote in, before it made anything there.
    const journals = await readdir(journalsIn(state));
    expect(journals).toEqual([`${HOST}-${child.pid}-${journals[0]!.split('-')[2]}`]);
    expect(await readFile(path.join(journalsIn(state), journals[0]!), 'utf8')).toBe(`${JSON.stringify(deep)}\n`);

    const restarted = await spawnServer(bin, [dir], { env });
    sessions.push(restarted);
    // The sweep removes the killed writer's temporary file and its write lock one after the other, then its journal.
    await waitUntil(() => !existsSync(temp) && readdirSync(deep).length === 1 && readdirSync(journalsIn(state)).length === 0, {
      what: 'the start-up sweep to remove the leftovers and the journal',
      timeoutMs: 10_000,
    });
    expect(await readdir(deep)).toEqual(['big.bin']);
    expect((await restarted.callTool('read_text_file', { path: file })).text).toBe('the old content\n');
  }, 60_000);

  it('a server stopped with SIGTERM mid-write removes its temporary file and its journal before it exits', async () => {
    const file = path.join(dir, 'big.bin');
    const { child, temp, exited } = await killableWriter(dir, file, 9 * 1024 * 1024, env);
    child.kill('SIGTERM');
    await exited;
    expect(existsSync(temp)).toBe(false);
    expect((await readdir(dir)).filter((n) => n.startsWith('.suite-'))).toEqual([]);
    expect(await readdir(journalsIn(state))).toEqual([]);
  }, 60_000);

  it('sweeps only the directories dead writers journaled, only stale leftovers with our exact names there, without following links', async () => {
    const dead = deadPid();
    const journaled = path.join(dir, 'journaled');
    const unjournaled = path.join(dir, 'deep', 'er');
    await mkdir(journaled);
    await mkdir(unjournaled, { recursive: true });
    const { dir: outside, cleanup: cleanOutside } = await makeTempDir('fs-temp-outside-');
    try {
      const stale = {
        deadOwner: path.join(dir, `.suite-${dead}-${HOST}-0000aaaa.tmp`),
        deadOwnerJournaled: path.join(journaled, `.suite-${dead}-${HOST}-0000bbbb.tmp`),
        deletingDir: path.join(dir, `.suite-${dead}-${HOST}-0000cccc.deleting`),
        oldForeign: path.join(dir, `.suite-4242-ffffffff-0000dddd.tmp`),
        deadLock: path.join(dir, '.suite-0123456789abcdef.lock'),
      };
      const kept = {
        liveOwner: path.join(dir, liveTemp()),
        youngForeign: path.join(dir, `.suite-4242-ffffffff-0000eeee.tmp`),
        notOurPattern: path.join(dir, '.suite-notours.tmp'),
        userFile: path.join(dir, 'notes.tmp'),
        // A dead writer's leftover in a directory no journal names: no tree walk finds it.
        unjournaledLeftover: path.join(unjournaled, `.suite-${dead}-${HOST}-0000abab.tmp`),
        // A journaled directory reached through a link now (a part of its path replaced): not read.
        outsideLeftover: path.join(outside, 'moved', `.suite-${dead}-${HOST}-0000ffff.tmp`),
        // A live writer's journal names this directory: its leftover waits for that writer's end.
        liveJournaledLeftover: path.join(unjournaled, `.suite-${dead}-${HOST}-0000cdcd.tmp`),
      };
      await mkdir(path.join(outside, 'moved'));
      for (const p of [stale.deadOwner, stale.deadOwnerJournaled, stale.oldForeign, ...Object.values(kept)]) await writeFile(p, 'partial');
      await mkdir(stale.deletingDir);
      await writeFile(path.join(stale.deletingDir, 'half-deleted.txt'), 'x');
      await writeFile(stale.deadLock, `${dead} ${HOST}\n`);
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000);
      await utimes(stale.oldForeign, twoHoursAgo, twoHoursAgo);
      await symlink(path.join(outside, 'moved'), path.join(dir, 'link-out'));
      const deadJournal = await writeJournal(state, dead, 1, [dir, journaled, path.join(dir, 'link-out')]);
      const liveJournal = await writeJournal(state, process.pid, 0, [unjournaled]);

      const session = await spawnServer(bin, [dir], { env });
      sessions.push(session);
      await waitUntil(() => Object.values(stale).every((p) => !existsSync(p)) && !existsSync(deadJournal), { what: 'the sweep', timeoutMs: 10_000 });
      for (const [name, p] of Object.entries(kept)) expect(existsSync(p), name).toBe(true);
      expect(existsSync(liveJournal)).toBe(true);
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
    const session = await spawnServer(bin, [dir], { env });
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
