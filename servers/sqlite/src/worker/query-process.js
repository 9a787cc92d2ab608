// @ts-check
/**
 * The query process: runs user SQL on its own better-sqlite3 connection, one request at a time.
 *
 * It is a child process rather than a worker thread on purpose: better-sqlite3 runs a statement
 * synchronously inside sqlite3_step, and this build omits the progress callback, so neither
 * Worker.terminate() nor anything else can stop a long aggregate or sort until SQLite returns.
 * SIGKILL on a process can. This file is plain JavaScript so that the same file runs from src
 * (under vitest) and from dist (tsc copies it).
 *
 * Protocol: one JSON object per line, requests on stdin, answers on stdout (JSON.stringify
 * escapes line breaks inside strings, so a newline always ends a message):
 *   parent -> child: { type: 'init', file, mode: 'read' | 'write', extensions, busyTimeoutMs }
 *   child -> parent: { type: 'ready' } | { type: 'failed', message, locked? }
 *   parent -> child: { type: 'run', id, op: 'query' | 'write' | 'explain', sql, params, maxRows, maxBytes, maxCellChars, timeoutMs }
 *   child -> parent: { type: 'result', id, ok: true, result } | { type: 'result', id, ok: false, kind, message, locked? }
 *
 * The process handles one request at a time and has nothing else to do, so it reads with
 * blocking system calls instead of Node's IPC channel and event loop: the kernel wakes it
 * straight out of read() when a request arrives, which saves a good part of every round trip
 * (see the README's benchmark). End of input means the server has gone, and the process exits.
 */
import { readSync, writeSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { Worker } from 'node:worker_threads';
import Database from '../sqlite-addon.js';

/** @typedef {string | number | null | { $blob: string }} Cell */
/** @typedef {{ type: 'init', file: string, mode: 'read' | 'write', writableServer: boolean, extensions: string[], busyTimeoutMs: number }} InitMessage */
/**
 * @typedef {{ type: 'run', id: number, op: 'query' | 'write' | 'explain', sql: string,
 *   params: unknown, maxRows: number, maxBytes: number, maxCellChars: number, timeoutMs: number }} RunMessage
 */

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** @type {import('better-sqlite3').Database | undefined} */
let db;
/** @type {'read' | 'write'} */
let mode = 'read';
let writableServer = false;

/** A one-element array to sleep on with Atomics.wait (a blocking pause, no busy loop). */
const pause = new Int32Array(new SharedArrayBuffer(4));

/** The server that started this process: once the parent is another one, the server has died. */
const SERVER_PID = process.ppid;

/** How long past the call's own time limit the process waits before it stops itself. */
const DEADLINE_GRACE_MS = 2_000;

/**
 * When the running call must be over (ms since the epoch, 0 when idle): read by the watchdog.
 * The server kills this process at the call's time limit; the watchdog is for when it cannot.
 */
const deadline = new BigInt64Array(new SharedArrayBuffer(8));

/**
 * A watchdog thread. The main thread spends a long query inside sqlite3_step, deaf to everything,
 * but a thread has an event loop of its own: it ends the process (SIGKILL: SQLite rolls back what
 * was not committed) when the server has gone (this process was re-parented) or when the running
 * call is well past its deadline. The server also has a watchdog of its own that kills this
 * process's group when it dies; this one holds even where that one is missing.
 */
function startWatchdog() {
  const source = `
    const { workerData } = require('node:worker_threads');
    const deadline = new BigInt64Array(workerData.deadline);
    setInterval(() => {
      const due = Number(Atomics.load(deadline, 0));
      if (process.ppid !== workerData.server || (due > 0 && Date.now() > due)) process.kill(process.pid, 'SIGKILL');
    }, 100);`;
  const watchdog = new Worker(source, { eval: true, workerData: { deadline: deadline.buffer, server: SERVER_PID } });
  watchdog.unref();
}

/** Whether the server that started this process is still there. */
function serverAlive() {
  return process.ppid === SERVER_PID;
}

/**
 * Writes one message as a line. The pipe is blocking in this process, so writeSync waits while
 * the parent catches up with a large answer; a partial write continues where it stopped.
 * @param {unknown} message
 */
function send(message) {
  const data = Buffer.from(`${JSON.stringify(message)}\n`, 'utf8');
  let offset = 0;
  while (offset < data.length) {
    try {
      offset += writeSync(1, data, offset);
    } catch (error) {
      if (/** @type {NodeJS.ErrnoException} */ (error).code !== 'EAGAIN') throw error;
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}

/** @param {InitMessage | RunMessage} message */
function handle(message) {
  if (message.type === 'init') {
    try {
      open(message);
      send({ type: 'ready' });
    } catch (error) {
      send({ type: 'failed', message: errorMessage(error), ...(isLocked(error) ? { locked: true } : {}) });
    }
    return;
  }
  if (message.type === 'run') {
    const timeoutMs = Number.isFinite(message.timeoutMs) && message.timeoutMs > 0 ? message.timeoutMs : 30_000;
    Atomics.store(deadline, 0, BigInt(Date.now() + timeoutMs + DEADLINE_GRACE_MS));
    try {
      const result = run(message);
      send({ type: 'result', id: message.id, ok: true, result });
    } catch (error) {
      send({ type: 'result', id: message.id, ok: false, ...describeFailure(error) });
    } finally {
      Atomics.store(deadline, 0, 0n);
    }
  }
}

/** Reads requests line by line until the server closes the pipe (or kills this process). */
function serve() {
  const chunk = Buffer.alloc(64 * 1024);
  // Decodes across chunk boundaries, so a character split between two reads stays whole.
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for (;;) {
    let n;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      const code = /** @type {NodeJS.ErrnoException} */ (error).code;
      // stdin is blocking in a spawned child; should it ever not be, wait a moment instead of spinning.
      if (code === 'EAGAIN') {
        Atomics.wait(pause, 0, 0, 1);
        continue;
      }
      if (code === 'EOF') process.exit(0);
      throw error;
    }
    if (n === 0) process.exit(0);
    // Only the new text can hold the next line break.
    let searchFrom = pending.length;
    pending += decoder.write(chunk.subarray(0, n));
    let end;
    while ((end = pending.indexOf('\n', searchFrom)) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      searchFrom = 0;
      handle(/** @type {InitMessage | RunMessage} */ (JSON.parse(line)));
    }
  }
}

/** @param {InitMessage} init */
function open(init) {
  mode = init.mode;
  writableServer = init.writableServer;
  db = new Database(init.file, { readonly: mode === 'read', fileMustExist: true, timeout: init.busyTimeoutMs });
  // Second lock on the door: even a statement that slipped past the checks cannot change the file.
  if (mode === 'read') db.pragma('query_only = ON');
  db.defaultSafeIntegers(true);
  for (const extension of init.extensions) db.loadExtension(extension);
  // A writer killed mid-transaction leaves a hot journal that read-only connections cannot roll
  // back; the first read on a writable connection does, so the next writer repairs it at once.
  db.prepare('SELECT count(*) FROM sqlite_schema').get();
}

class RefusedError extends Error {
  /** @param {string} message @param {string} kind */
  constructor(message, kind = 'access_denied') {
    super(message);
    this.kind = kind;
  }
}

/** @param {RunMessage} request */
function run(request) {
  if (!db) throw new Error('The query process is not initialised.');
  try {
    return runStatement(db, request);
  } finally {
    // The parent refuses PRAGMA assignments before they get here; should one ever slip through,
    // SQLite would have applied it while compiling, so put the lock back whatever happened.
    if (mode === 'read' && /pragma/i.test(request.sql) && db.pragma('query_only', { simple: true }) !== 1n) db.pragma('query_only = ON');
  }
}

/**
 * Prepared statements by operation and SQL text. A client repeating a query with new params
 * (the common case) skips compiling it, which is a large share of a small query's time. SQLite
 * recompiles a cached statement by itself when the schema changes, so reuse is safe; the cap
 * keeps memory bounded, and very long SQL is not kept at all.
 * @type {Map<string, import('better-sqlite3').Statement>}
 */
const statements = new Map();
const MAX_CACHED_STATEMENTS = 100;
const MAX_CACHED_SQL_CHARS = 10_000;

/**
 * @param {import('better-sqlite3').Database} connection
 * @param {string} key
 * @param {string} sql
 * @param {(stmt: import('better-sqlite3').Statement) => void} check refusals, run once per statement
 */
function prepared(connection, key, sql, check) {
  const cached = statements.get(key);
  if (cached) {
    // Least recently used goes first: move this one to the end.
    statements.delete(key);
    statements.set(key, cached);
    return cached;
  }
  // prepare() compiles exactly one statement and throws on a second one: no exec() of user text.
  const stmt = connection.prepare(sql);
  check(stmt);
  if (stmt.reader) {
    stmt.safeIntegers(true);
    stmt.raw(true);
  }
  if (sql.length <= MAX_CACHED_SQL_CHARS) {
    if (statements.size >= MAX_CACHED_STATEMENTS) statements.delete(/** @type {string} */ (statements.keys().next().value));
    statements.set(key, stmt);
  }
  return stmt;
}

/**
 * @param {import('better-sqlite3').Database} db
 * @param {RunMessage} request
 */
function runStatement(db, request) {
  if (request.op === 'explain') return explain(db, request);
  if (request.op === 'query') {
    const stmt = prepared(db, `q:${request.sql}`, request.sql, (s) => {
      if (!s.readonly || !s.reader) {
        throw new RefusedError(
          'read_query runs only a single statement that reads and returns rows (SELECT, WITH … SELECT, VALUES, read-only PRAGMA). ' +
            (writableServer ? 'Use write_query for changes.' : 'This server is read-only.'),
        );
      }
    });
    return readRows(stmt, request);
  }
  if (mode !== 'write') throw new RefusedError('This query process is read-only.');
  const stmt = prepared(db, `w:${request.sql}`, request.sql, (s) => {
    if (s.reader && s.readonly) {
      throw new RefusedError('write_query is for statements that change the database; use read_query for SELECT.', 'invalid_argument');
    }
  });
  if (db.inTransaction || !TRANSACTABLE.test(request.sql)) return runWrite(db, stmt, request);
  // In a transaction of our own, committed only while the server that asked is still there: a
  // long write whose server was killed meanwhile (its client saw the connection reset) is rolled
  // back, never committed later by an orphan.
  prepared(db, 'begin', 'BEGIN IMMEDIATE', () => undefined).run();
  try {
    const result = runWrite(db, stmt, request);
    if (!serverAlive()) {
      prepared(db, 'rollback', 'ROLLBACK', () => undefined).run();
      process.exit(1);
    }
    prepared(db, 'commit', 'COMMIT', () => undefined).run();
    return result;
  } catch (error) {
    if (db.inTransaction) prepared(db, 'rollback', 'ROLLBACK', () => undefined).run();
    throw error;
  }
}

/**
 * Statements that change rows or the schema and may run inside a transaction (not BEGIN, COMMIT,
 * VACUUM, ATTACH or a PRAGMA that refuses to), after any leading comments.
 */
const TRANSACTABLE = /^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*(?:INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|WITH)\b/i;

/**
 * @param {import('better-sqlite3').Database} db
 * @param {import('better-sqlite3').Statement} stmt
 * @param {RunMessage} request
 */
function runWrite(db, stmt, request) {
  if (stmt.reader) {
    // INSERT/UPDATE/DELETE … RETURNING: the change happens, and the returned rows are bounded like a read.
    const rows = readRows(stmt, request);
    // SQLite makes every change on the first step, so changes() counts them all even when the
    // returned rows were cut at the cap.
    const changes = prepared(db, 'changes', 'SELECT changes()', () => undefined).get();
    return { ...rows, changes: Number(/** @type {unknown[]} */ (changes)[0]) };
  }
  const info = bind(request.params, (b) => stmt.run(...b));
  return { changes: info.changes, lastInsertRowid: toCell(info.lastInsertRowid, request.maxCellChars).cell };
}

/**
 * @param {import('better-sqlite3').Statement} stmt
 * @param {RunMessage} request
 */
function readRows(stmt, request) {
  /** @type {Cell[][]} */
  const rows = [];
  let bytes = 0;
  let truncated = false;
  let clipped = false;
  stmt.raw(true);
  const iterator = bind(request.params, (b) => stmt.iterate(...b));
  try {
    for (const raw of iterator) {
      // One row past the cap tells us there is more without reading the rest.
      if (rows.length >= request.maxRows) {
        truncated = true;
        break;
      }
      const row = /** @type {unknown[]} */ (raw).map((value) => {
        const converted = toCell(value, request.maxCellChars);
        if (converted.clipped) clipped = true;
        return converted.cell;
      });
      const rowBytes = JSON.stringify(row).length + 1;
      if (bytes + rowBytes > request.maxBytes && rows.length > 0) {
        truncated = true;
        break;
      }
      bytes += rowBytes;
      rows.push(row);
    }
  } finally {
    // Finalises the cursor so the read transaction ends now, not at the next statement.
    iterator.return?.();
  }
  // Read after stepping: a cached statement that SQLite recompiled for a changed schema
  // (SELECT * after ALTER TABLE) only reports its new columns once it has run.
  const columns = stmt.columns().map((c) => c.name);
  return { columns, rows, rowCount: rows.length, truncated: truncated || clipped, clippedCells: clipped };
}

/**
 * @param {import('better-sqlite3').Database} connection
 * @param {RunMessage} request
 */
function explain(connection, request) {
  // The user text follows a fixed prefix; prepare() still refuses a second statement.
  const stmt = connection.prepare(`EXPLAIN QUERY PLAN ${request.sql}`);
  stmt.safeIntegers(false);
  const plan = /** @type {{ id: number, parent: number, detail: string }[]} */ (stmt.all());
  return { plan: plan.map((p) => ({ id: p.id, parent: p.parent, detail: p.detail })) };
}

/**
 * Binds positional (array) or named (object) parameters. Booleans become 0/1 and
 * { $blob: base64 } becomes a BLOB, mirroring how results come back.
 * @template T
 * @param {unknown} params
 * @param {(bindings: unknown[]) => T} call
 * @returns {T}
 */
function bind(params, call) {
  if (params === undefined || params === null) return call([]);
  if (Array.isArray(params)) return call(params.map(toBinding));
  /** @type {Record<string, unknown>} */
  const named = {};
  for (const [key, value] of Object.entries(/** @type {Record<string, unknown>} */ (params))) {
    named[key.replace(/^[:@$]/, '')] = toBinding(value);
  }
  return call([named]);
}

/** @param {unknown} value */
function toBinding(value) {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value && typeof value === 'object' && '$blob' in value) {
    return Buffer.from(String(/** @type {{ $blob: unknown }} */ (value).$blob), 'base64');
  }
  return value;
}

/**
 * Converts one SQLite value to JSON without losing anything: integers beyond 2^53 become
 * decimal strings, BLOBs become { $blob: base64 }, and only over-long text is clipped (flagged).
 * @param {unknown} value
 * @param {number} maxCellChars
 * @returns {{ cell: Cell, clipped: boolean }}
 */
function toCell(value, maxCellChars) {
  if (value === null || value === undefined) return { cell: null, clipped: false };
  if (typeof value === 'bigint') {
    const fits = value <= MAX_SAFE && value >= -MAX_SAFE;
    return { cell: fits ? Number(value) : value.toString(), clipped: false };
  }
  if (typeof value === 'number') return { cell: Number.isFinite(value) ? value : String(value), clipped: false };
  if (typeof value === 'string') {
    if (value.length <= maxCellChars) return { cell: value, clipped: false };
    return { cell: `${value.slice(0, maxCellChars)}… [${value.length - maxCellChars} more characters]`, clipped: true };
  }
  if (Buffer.isBuffer(value)) {
    const maxBlobBytes = Math.floor((maxCellChars * 3) / 4);
    if (value.length <= maxBlobBytes) return { cell: { $blob: value.toString('base64') }, clipped: false };
    return { cell: { $blob: value.subarray(0, maxBlobBytes).toString('base64') }, clipped: true };
  }
  return { cell: String(value), clipped: false };
}

/**
 * What the parent shows: refusals as they are, SQLite's own messages (syntax, missing table,
 * wrong parameter count) marked as such, a locked database as something to retry.
 * @param {unknown} error
 * @returns {{ kind: string, message: string, locked?: boolean }}
 */
function describeFailure(error) {
  if (error instanceof RefusedError) return { kind: error.kind, message: error.message };
  if (error instanceof Database.SqliteError) {
    // The parent words it (it knows how long the busy timeout was).
    if (isLocked(error)) return { kind: 'unavailable', message: 'The database is locked.', locked: true };
    // Not the statement's fault: the file system (or the database's max_page_count) has no room left.
    if (error.code === 'SQLITE_FULL') {
      return {
        kind: 'unavailable',
        message: 'The disk is full (no space left for the database or its journal): the statement was rolled back and nothing of it was written. Free some space and try again.',
      };
    }
    return { kind: 'invalid_argument', message: `SQLite error: ${error.message}` };
  }
  // better-sqlite3 reports misuse (two statements, wrong parameters) as RangeError/TypeError.
  if (error instanceof RangeError || error instanceof TypeError) return { kind: 'invalid_argument', message: error.message };
  return { kind: 'failed', message: errorMessage(error) };
}

/** @param {unknown} error */
function isLocked(error) {
  return error instanceof Database.SqliteError && (error.code.startsWith('SQLITE_BUSY') || error.code.startsWith('SQLITE_LOCKED'));
}

/** @param {unknown} error */
function errorMessage(error) {
  return error instanceof Error ? error.message : String(error);
}

startWatchdog();
serve();
