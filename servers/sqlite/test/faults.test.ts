/**
 * Faults that happen to real users: another program holding the database locked, and the
 * database file deleted or replaced while the server runs. The server answers each call (a
 * clear isError, or the data at the configured path), never hangs, never crashes, and never
 * answers from a file that is no longer there without saying so.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { appendFile, mkdir, rm, statfs } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database, { chooseSqliteAddon } from '../src/sqlite-addon.js';
import { afterEach, describe, expect, it } from 'vitest';
import { descendantsOf, expectAllGone, isAlive, makeTempDir, spawnServer, waitUntil, type SpawnedSession, type TestSession } from '@suite/test-kit';
import { BIN, makeDatabaseFile, openServer, untilUpdated, type Harness } from './helpers.js';

const PACKAGE_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The better-sqlite3 line the server loads on this Node, for the other processes these tests start. */
const ADDON = JSON.stringify(chooseSqliteAddon().packageName);

/**
 * Another process (not a connection of this one: SQLite's locks are per process on POSIX) that
 * opens the file, starts a transaction that writes, and holds it until told to let go. EXCLUSIVE
 * keeps readers out too (rollback-journal mode); IMMEDIATE only other writers.
 */
async function holdLock(file: string, mode: 'EXCLUSIVE' | 'IMMEDIATE' = 'EXCLUSIVE'): Promise<{ release: () => Promise<void>; child: ChildProcess }> {
  const script = `
    const Database = require(${ADDON});
    const db = new Database(process.argv[1]);
    db.exec('BEGIN ${mode}');
    db.prepare("UPDATE teams SET name = 'held' WHERE id = 1").run();
    process.stdout.write('locked\\n');
    process.stdin.on('data', () => { db.exec('ROLLBACK'); db.close(); process.stdout.write('released\\n'); process.exit(0); });
  `;
  const child = spawn(process.execPath, ['-e', script, file], { cwd: PACKAGE_DIR, stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  const seen = (word: string): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (out.includes(word)) resolve();
      };
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        check();
      });
      child.once('exit', (code) => (out.includes(word) ? resolve() : reject(new Error(`lock holder exited (${code}) before "${word}"`))));
      check();
    });
  await seen('locked');
  return {
    child,
    release: async () => {
      const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin!.write('go\n');
      await done;
    },
  };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - started };
}

async function teamNames(session: TestSession): Promise<string[]> {
  const result = await session.callTool('read_query', { query: 'SELECT name FROM teams ORDER BY id' });
  expect(result.isError, result.text).toBe(false);
  return (result.structured!.rows as string[][]).map((row) => row[0]!);
}

/** A second database with other content, built next to `file`, to be renamed over it. */
function makeReplacement(file: string): string {
  const other = path.join(path.dirname(file), 'replacement.db');
  const db = new Database(other);
  db.exec("CREATE TABLE teams (id INTEGER PRIMARY KEY, name TEXT NOT NULL); INSERT INTO teams VALUES (1, 'new-core'); CREATE TABLE fresh (x INTEGER);");
  db.close();
  return other;
}

describe('a database locked by another process', () => {
  const open: { h: Harness; cleanup: () => Promise<void>; holder?: ChildProcess }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      o.holder?.kill('SIGKILL');
      await o.h.close();
      await o.cleanup();
    }
  });

  it('reads, catalogue tools and writes answer a clear isError after the busy timeout, then work once the lock is gone', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, allowWrite: true, workers: 1 });
    const entry: (typeof open)[number] = { h, cleanup };
    open.push(entry);
    expect(await teamNames(h.session)).toEqual(['core', 'docs']);

    const lock = await holdLock(file);
    entry.holder = lock.child;

    const read = await timed(() => h.session.callTool('read_query', { query: 'SELECT name FROM teams' }));
    expect(read.value.isError).toBe(true);
    expect(read.value.text).toMatch(/locked by another (process|connection).*try again/is);
    expect(read.ms).toBeGreaterThanOrEqual(900);
    expect(read.ms).toBeLessThan(10_000);

    const tables = await timed(() => h.session.callTool('list_tables'));
    expect(tables.value.isError).toBe(true);
    expect(tables.value.text).toMatch(/locked by another (process|connection).*try again/is);
    expect(tables.ms).toBeLessThan(10_000);

    const write = await timed(() => h.session.callTool('write_query', { query: "INSERT INTO teams (name) VALUES ('ops')" }));
    expect(write.value.isError).toBe(true);
    expect(write.value.text).toMatch(/locked by another (process|connection).*try again/is);
    expect(write.ms).toBeLessThan(15_000);

    await lock.release();
    entry.holder = undefined;
    // The holder rolled back: nothing of its change, and our refused write did not happen either.
    expect(await teamNames(h.session)).toEqual(['core', 'docs']);
    const retried = await h.session.callTool('write_query', { query: "INSERT INTO teams (name) VALUES ('ops')" });
    expect(retried.isError, retried.text).toBe(false);
    expect(await teamNames(h.session)).toEqual(['core', 'docs', 'ops']);
    expect((await h.session.callTool('list_tables')).isError).toBe(false);
  }, 60_000);

  it('another writer in a transaction: reads go on, a write waits the 5 s busy timeout and says the database is locked', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, allowWrite: true, workers: 1 });
    const entry: (typeof open)[number] = { h, cleanup };
    open.push(entry);
    const lock = await holdLock(file, 'IMMEDIATE');
    entry.holder = lock.child;
    expect(await teamNames(h.session)).toEqual(['core', 'docs']);
    const write = await timed(() => h.session.callTool('write_query', { query: "INSERT INTO teams (name) VALUES ('ops')" }));
    expect(write.value.isError).toBe(true);
    expect(write.value.text).toMatch(/locked by another connection \(waited 5 s for it\).*try again/is);
    expect(write.ms).toBeGreaterThanOrEqual(4_500);
    expect(write.ms).toBeLessThan(15_000);
    await lock.release();
    entry.holder = undefined;
    const retried = await h.session.callTool('write_query', { query: "INSERT INTO teams (name) VALUES ('ops')" });
    expect(retried.isError, retried.text).toBe(false);
  }, 60_000);

  it('over stdio of the built bin: a locked read is an isError, the server lives on and reads after the release', async () => {
    const { file, cleanup } = await makeDatabaseFile();
    const session = await spawnServer(BIN, [file]);
    try {
      expect(await teamNames(session)).toEqual(['core', 'docs']);
      const lock = await holdLock(file);
      try {
        const read = await timed(() => session.callTool('read_query', { query: 'SELECT count(*) FROM people' }));
        expect(read.value.isError).toBe(true);
        expect(read.value.text).toMatch(/locked by another/i);
        expect(read.ms).toBeLessThan(10_000);
      } finally {
        await lock.release();
      }
      expect(await teamNames(session)).toEqual(['core', 'docs']);
    } finally {
      await session.close();
      await cleanup();
    }
  }, 60_000);
});

describe('the database file deleted or replaced under the server', () => {
  const open: { close: () => Promise<void>; cleanup: () => Promise<void> }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.close();
      await o.cleanup();
    }
  });

  async function start(allowWrite: boolean): Promise<{ h: Harness; dir: string; file: string }> {
    const { dir, file, cleanup } = await makeDatabaseFile();
    const h = await openServer({ file, allowWrite, workers: 2 });
    open.push({ close: h.close, cleanup });
    return { h, dir, file };
  }

  it('deleted: every kind of call says the file is gone (never the deleted data), and a file put back is served', async () => {
    const { h, file } = await start(true);
    expect(await teamNames(h.session)).toEqual(['core', 'docs']);
    rmSync(file);

    const read = await h.session.callTool('read_query', { query: 'SELECT name FROM teams' });
    expect(read.isError).toBe(true);
    expect(read.text).toMatch(/no longer exists/i);
    expect(read.text).toContain(file);
    expect(read.text).not.toMatch(/core|docs/);
    for (const [tool, args] of [
      ['list_tables', {}],
      ['describe_table', { table_name: 'teams' }],
      ['explain_query', { query: 'SELECT * FROM teams' }],
      ['write_query', { query: "INSERT INTO teams (name) VALUES ('lost')" }],
    ] as const) {
      const result = await h.session.callTool(tool, args);
      expect(result.isError, `${tool}: ${result.text}`).toBe(true);
      expect(result.text).toMatch(/no longer exists/i);
    }
    // Nothing was created at the path by the refused write.
    expect(existsSync(file)).toBe(false);
    await expect(h.session.readResource(h.database.schemaUri)).rejects.toThrow(/no longer exists/i);

    // A database put back at the configured path is the one served from then on.
    renameSync(makeReplacement(file), file);
    expect(await teamNames(h.session)).toEqual(['new-core']);
  });

  it('replaced by another database renamed over it: reads, the catalogue and writes use the new file at once', async () => {
    const { h, file } = await start(true);
    expect(await teamNames(h.session)).toEqual(['core', 'docs']);
    const oldPids = h.database.reader.pids;
    const uri = h.database.schemaUri;
    await h.session.client.subscribeResource({ uri });

    await untilUpdated(h.session, uri, (attempt) => {
      if (attempt === 0) renameSync(makeReplacement(file), file);
    });
    expect(await teamNames(h.session)).toEqual(['new-core']);
    const tables = await h.session.callTool('list_tables');
    expect(tables.text).toContain('fresh');
    expect(tables.text).not.toContain('people');
    expect((await h.session.readResource(uri)).text).toContain('CREATE TABLE fresh');
    // The processes that had the old file open were replaced, not left reading it.
    for (const pid of oldPids) expect(h.database.reader.pids).not.toContain(pid);

    const write = await h.session.callTool('write_query', { query: "INSERT INTO fresh VALUES (42) RETURNING x" });
    expect(write.isError, write.text).toBe(false);
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT x FROM fresh').all()).toEqual([{ x: 42 }]);
    check.close();
  });

  it('replaced while a write runs: the write is reported as not done (SQLite refuses the moved file), never as done', async () => {
    const { h, file } = await start(true);
    // The writer process starts on the first write; the second one then runs at once.
    expect((await h.session.callTool('write_query', { query: "INSERT INTO teams (name) VALUES ('warm')" })).isError).toBe(false);
    const slow = h.session.callTool('write_query', {
      query: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000000) INSERT INTO teams (name) SELECT 'slow ' || max(x) FROM c",
    });
    await new Promise((r) => setTimeout(r, 500));
    renameSync(makeReplacement(file), file);
    const result = await slow;
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/deleted or replaced while write_query ran.*nothing was written/s);
    expect(result.text).not.toMatch(/readonly database/);
    expect(await teamNames(h.session)).toEqual(['new-core']);
  });

  it('replaced in a read-only server over stdio of the built bin: the new content is served and the process lives on', async () => {
    const { dir, file, cleanup } = await makeDatabaseFile();
    const session: SpawnedSession = await spawnServer(BIN, [file]);
    open.push({ close: () => session.close(), cleanup });
    expect(await teamNames(session)).toEqual(['core', 'docs']);
    rmSync(file);
    const gone = await session.callTool('read_query', { query: 'SELECT 1' });
    expect(gone.isError).toBe(true);
    expect(gone.text).toMatch(/no longer exists/i);
    renameSync(makeReplacement(file), file);
    expect(await teamNames(session)).toEqual(['new-core']);
    // No journal or stray file was left by the server in the directory.
    expect(readdirSync(dir).sort()).toEqual(['sample.db']);
  });
});

describe('the disk full during a write (a real ENOSPC from a 256 KiB tmpfs)', () => {
  it('write_query that would overflow answers "disk is full", rolls back, leaves the database intact and no journal; writes work again once there is room', async () => {
    const temp = await makeTempDir('sqlite-full-');
    const dir = path.join(temp.dir, 'mnt');
    await mkdir(dir);
    const file = path.join(dir, 'data.db');
    const quoted = `'${dir.replace(/'/g, `'\\''`)}'`;
    // The database is made inside the namespace, on the tmpfs, before the server opens it.
    const seed = `const D = require(${ADDON.replace(/"/g, "'")}); const db = new D(process.argv[1]); db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, body BLOB); INSERT INTO notes (body) VALUES ('kept')"); db.close();`;
    let session: SpawnedSession;
    try {
      session = await spawnServer(BIN, ['--allow-write', file], {
        cwd: PACKAGE_DIR,
        launcher: ['unshare', '--user', '--map-root-user', '--mount', 'sh', '-c', `mount -t tmpfs -o size=256k tmpfs ${quoted} && "$0" -e "${seed.replace(/"/g, '\\"')}" "${file}" && exec "$0" "$@"`],
      });
    } catch (error) {
      await temp.cleanup();
      throw new Error(`The disk-full test needs util-linux unshare and unprivileged user and mount namespaces: ${String(error)}`);
    }
    try {
      const view = `/proc/${session.pid}/root${dir}`;
      const { bavail, bsize } = await statfs(view);
      await appendFile(`${view}/filler.bin`, Buffer.alloc(Math.max(0, bavail * bsize - 24 * 1024), 1));

      const write = await session.callTool('write_query', { query: 'INSERT INTO notes (body) VALUES (zeroblob(200000))' });
      expect(write.isError).toBe(true);
      expect(write.text).toMatch(/disk is full|no space left/i);
      expect(write.text).toMatch(/nothing was written|rolled back/i);
      expect(write.text).not.toMatch(/failed unexpectedly|\n\s+at /);
      const check = await session.callTool('read_query', { query: 'SELECT count(*) AS n, (SELECT integrity_check FROM pragma_integrity_check) AS ok FROM notes' });
      expect(check.structured?.rows).toEqual([[1, 'ok']]);
      expect(readdirSync(view).sort()).toEqual(['data.db', 'filler.bin']);

      // Not a byte left, even for the journal of a small change.
      const rest = await statfs(view);
      await appendFile(`${view}/filler.bin`, Buffer.alloc(rest.bavail * rest.bsize, 1));
      expect((await statfs(view)).bavail).toBe(0);
      const small = await session.callTool('write_query', { query: "UPDATE notes SET body = 'changed' WHERE id = 1" });
      expect(small.isError).toBe(true);
      expect(small.text).toMatch(/disk is full/i);
      expect((await session.callTool('read_query', { query: 'SELECT body FROM notes' })).structured?.rows).toEqual([['kept']]);
      expect(readdirSync(view).sort()).toEqual(['data.db', 'filler.bin']);

      await rm(`${view}/filler.bin`);
      const again = await session.callTool('write_query', { query: 'INSERT INTO notes (body) VALUES (zeroblob(20000))' });
      expect(again.isError, again.text).toBe(false);
      expect((await session.callTool('read_query', { query: 'SELECT count(*) FROM notes' })).structured?.rows).toEqual([[2]]);
    } finally {
      await session.close();
      await temp.cleanup();
    }
  });
});

/** A statement that computes for far longer than any test (then writes one row): the work in flight. */
const ENDLESS_WRITE = 'INSERT INTO teams (name) SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 4000000000) SELECT x FROM c)';
const ENDLESS_READ = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
const QUERY_PROCESS = path.join(PACKAGE_DIR, 'src', 'worker', 'query-process.js');

/** Whether another connection holds the write lock now (BEGIN IMMEDIATE fails at once). */
function writeLockHeld(file: string): boolean {
  const db = new Database(file, { timeout: 0 });
  try {
    db.exec('BEGIN IMMEDIATE');
    db.exec('ROLLBACK');
    return false;
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY')) return true;
    throw error;
  } finally {
    db.close();
  }
}

describe('the server killed with SIGKILL mid-work', () => {
  it('its query process (and every other child) is gone within 2 s, the write in flight is never committed, and the lock is free for others', async () => {
    const db = await makeDatabaseFile();
    const session = await spawnServer(BIN, ['--allow-write', db.file], { cwd: PACKAGE_DIR });
    try {
      const before = (await teamNames(session)).length;
      const inFlight = session.callTool('write_query', { query: ENDLESS_WRITE, timeoutSeconds: 30 }).catch((error: unknown) => error);
      await waitUntil(() => writeLockHeld(db.file), { what: 'the write in flight to hold the lock' });
      const children = descendantsOf(session.pid!);
      expect(children.some((child) => child.command.includes('query-process.js')), JSON.stringify(children)).toBe(true);

      process.kill(session.pid!, 'SIGKILL');
      await expectAllGone(children, 2_000);
      expect(await inFlight).toBeInstanceOf(Error);

      // Nobody holds the database: another program writes at once, and the orphan's row never comes.
      expect(writeLockHeld(db.file)).toBe(false);
      const other = new Database(db.file, { timeout: 0 });
      other.prepare("INSERT INTO teams (name) VALUES ('after')").run();
      expect((other.prepare('SELECT count(*) AS n FROM teams').get() as { n: number }).n).toBe(before + 1);
      other.close();
    } finally {
      await session.close().catch(() => undefined);
      await db.cleanup();
    }
  });

  it('a query process whose server died without killing it (no watchdog of the server) stops itself within 2 s', async () => {
    const db = await makeDatabaseFile();
    // A stand-in server: starts the query process in a group of its own, as the server does, and
    // nothing else; once it is killed only the process's own watchdog thread can notice.
    const script = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, [process.argv[1]], { detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
      child.stdout.on('data', (chunk) => process.stdout.write(chunk));
      child.stdin.write(JSON.stringify({ type: 'init', file: process.argv[2], mode: 'read', writableServer: false, extensions: [], busyTimeoutMs: 100 }) + '\\n');
      child.stdin.write(JSON.stringify({ type: 'run', id: 1, op: 'query', sql: process.argv[3], maxRows: 10, maxBytes: 1000, maxCellChars: 100, timeoutMs: 600000 }) + '\\n');
      process.stdout.write('child ' + child.pid + '\\n');
    `;
    const stand = spawn(process.execPath, ['-e', script, QUERY_PROCESS, db.file, ENDLESS_READ], { cwd: PACKAGE_DIR, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    stand.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    try {
      await waitUntil(() => /child \d+/.test(out) && out.includes('"ready"'), { what: 'the query process to be ready' });
      const [queryProcess] = descendantsOf(stand.pid!).filter((p) => p.command.includes('query-process.js'));
      expect(queryProcess).toBeDefined();
      // It is busy inside SQLite (its parent never stops it).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(isAlive(queryProcess!)).toBe(true);
      stand.kill('SIGKILL');
      await expectAllGone([queryProcess!], 2_000);
    } finally {
      stand.kill('SIGKILL');
      await db.cleanup();
    }
  });

  it('a query process enforces the deadline of its call itself when nobody stops it', async () => {
    const db = await makeDatabaseFile();
    const child = spawn(process.execPath, [QUERY_PROCESS], { cwd: PACKAGE_DIR, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
      child.stdin.write(`${JSON.stringify({ type: 'init', file: db.file, mode: 'read', writableServer: false, extensions: [], busyTimeoutMs: 100 })}\n`);
      const started = Date.now();
      child.stdin.write(`${JSON.stringify({ type: 'run', id: 1, op: 'query', sql: ENDLESS_READ, maxRows: 10, maxBytes: 1000, maxCellChars: 100, timeoutMs: 200 })}\n`);
      // Its call's 200 ms plus the 2 s of grace, and the watchdog's tenth of a second.
      expect(await exited).toBe('SIGKILL');
      expect(Date.now() - started).toBeLessThan(4_000);
    } finally {
      child.kill('SIGKILL');
      await db.cleanup();
    }
  });
});
