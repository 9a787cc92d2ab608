import type { Readable } from 'node:stream';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CancelledError, ToolError, spawnManaged, type ManagedProcess, type ToolErrorKind } from '@suite/shared';

/** One cell of a result row: integers beyond 2^53 arrive as strings, BLOBs as { $blob: base64 }. */
export type Cell = string | number | null | { $blob: string };

export interface RowsResult {
  columns: string[];
  rows: Cell[][];
  rowCount: number;
  truncated: boolean;
  /** Some text or BLOB cells were cut to the per-cell limit. */
  clippedCells: boolean;
  /** Set for INSERT/UPDATE/DELETE … RETURNING. */
  changes?: number;
}

export interface ChangeResult {
  changes: number;
  lastInsertRowid: Cell;
}

export interface PlanResult {
  plan: { id: number; parent: number; detail: string }[];
}

export type Params = unknown[] | Record<string, unknown> | undefined;

export interface QueryRequest {
  sql: string;
  params?: Params;
  maxRows: number;
  maxBytes: number;
  maxCellChars: number;
}

export interface ExecutorOptions {
  file: string;
  mode: 'read' | 'write';
  /** Whether write_query exists (for the hint in refusals). */
  writableServer: boolean;
  extensions: readonly string[];
  /** How many query processes may run at once; further calls wait for a free one. */
  size: number;
  busyTimeoutMs: number;
}

interface RunOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** Tool name for messages. */
  label: string;
}

type ChildMessage =
  | { type: 'ready' }
  | { type: 'failed'; message: string; locked?: boolean }
  | { type: 'result'; id: number; ok: true; result: unknown }
  | { type: 'result'; id: number; ok: false; kind: ToolErrorKind; message: string; locked?: boolean };

/** What a call that met another connection's lock says: how long it waited, and what to do. */
export function lockedMessage(waitedMs: number): string {
  return `The database is locked by another connection (waited ${formatSeconds(waitedMs)} for it): another program is writing or holds a transaction open. Try again in a moment.`;
}

interface QueryProcess {
  child: ManagedProcess;
  ready: Promise<void>;
  busy: boolean;
  dead: boolean;
  /**
   * The call this process is running, if any. One listener per process routes answers here,
   * rather than each call adding and removing its own listeners on the hot path.
   */
  current?: { id: number; answer: (message: ChildMessage & { type: 'result' }) => void; lost: () => void };
}

/** The query process script sits next to this module, in src under vitest and in dist when built. */
const WORKER_SCRIPT = fileURLToPath(new URL('./worker/query-process.js', import.meta.url));

/**
 * A small pool of query processes on one database file. A call that runs past its timeout, or
 * whose request is cancelled, kills its process (SIGKILL, so even a query stuck inside SQLite
 * stops at once) and the next call starts a fresh one; the event loop of the server is never
 * blocked by user SQL.
 */
export class QueryExecutor {
  private readonly idle: QueryProcess[] = [];
  private readonly all = new Set<QueryProcess>();
  private readonly waiting: { grant: (p: QueryProcess) => void; fail: (e: Error) => void }[] = [];
  private nextId = 1;
  private closed = false;
  /** Why calls that were waiting or running fail once closed. */
  private closedReason = 'The server is shutting down.';

  constructor(private readonly options: ExecutorOptions) {
    if (!existsSync(WORKER_SCRIPT)) throw new Error(`The query process script is missing: ${WORKER_SCRIPT}`);
  }

  /** Process ids of the live query processes (for tests and diagnostics). */
  get pids(): number[] {
    return [...this.all].flatMap((p) => (p.child.pid === undefined ? [] : [p.child.pid]));
  }

  /** Starts one process ahead of the first call, so that call does not pay for the start-up. */
  async warm(): Promise<void> {
    const p = await this.acquire();
    this.release(p);
  }

  query(request: QueryRequest, options: RunOptions): Promise<RowsResult> {
    return this.run('query', request, options) as Promise<RowsResult>;
  }

  write(request: QueryRequest, options: RunOptions): Promise<RowsResult | ChangeResult> {
    return this.run('write', request, options) as Promise<RowsResult | ChangeResult>;
  }

  explain(sql: string, options: RunOptions): Promise<PlanResult> {
    return this.run('explain', { sql, maxRows: 0, maxBytes: 0, maxCellChars: 0 }, options) as Promise<PlanResult>;
  }

  async close(reason?: string): Promise<void> {
    this.closed = true;
    if (reason) this.closedReason = reason;
    for (const w of this.waiting.splice(0)) w.fail(ToolError.unavailable(this.closedReason));
    const children = [...this.all].map((p) => p.child);
    for (const p of [...this.all]) this.kill(p);
    // Wait (briefly) until each killed process has exited, so this process reaps it itself and
    // leaves no zombie behind for init to collect.
    await Promise.all(children.map((child) => exitedWithin(child, 500)));
  }

  private async run(op: 'query' | 'write' | 'explain', request: QueryRequest, options: RunOptions): Promise<unknown> {
    if (options.signal.aborted) throw new CancelledError();
    const deadline = Date.now() + options.timeoutMs;
    let process: QueryProcess | undefined;
    let settled = false;
    return new Promise<unknown>((resolve, reject) => {
      /** Claims the outcome once; later answers (a result racing a timeout) are ignored. */
      const claim = (): boolean => {
        if (settled) return false;
        settled = true;
        clearTimeout(timer);
        options.signal.removeEventListener('abort', onAbort);
        return true;
      };
      const finish = (error: Error | undefined, value?: unknown): void => {
        if (!claim()) return;
        if (error) reject(error);
        else resolve(value);
      };
      // Killing is the only way to stop SQLite mid-statement; the pool replaces the process lazily.
      const stop = (error: Error): void => {
        if (!claim()) return;
        if (!process) return reject(error);
        this.kill(process);
        if (this.options.mode === 'read') return reject(error);
        // A killed writer may leave a hot journal that blocks every reader until a writable
        // connection rolls it back; a fresh writer does that on open, so answer after it has.
        this.warm().then(
          () => reject(error),
          () => reject(error),
        );
      };
      const onAbort = (): void => stop(new CancelledError());
      const timer = setTimeout(
        () =>
          stop(
            ToolError.timeout(
              `${options.label} was stopped after ${formatSeconds(options.timeoutMs)} (the time limit for one call). ` +
                'Narrow the query (WHERE, LIMIT, an index) or pass a larger timeoutSeconds if the server allows it.',
            ),
          ),
        Math.max(0, deadline - Date.now()),
      );
      options.signal.addEventListener('abort', onAbort, { once: true });

      const start = (p: QueryProcess): void => {
        if (settled) {
          this.release(p);
          return;
        }
        process = p;
        const id = this.nextId++;
        p.current = {
          id,
          answer: (message) => {
            p.current = undefined;
            if (!settled) this.release(p);
            if (message.ok) finish(undefined, message.result);
            else finish(new ToolError(message.locked ? lockedMessage(this.options.busyTimeoutMs) : message.message, message.kind));
          },
          lost: () => finish(ToolError.unavailable(this.closed ? this.closedReason : `${options.label}: the query process stopped unexpectedly; try again.`)),
        };
        sendTo(p.child, { type: 'run', id, op, sql: request.sql, params: request.params, maxRows: request.maxRows, maxBytes: request.maxBytes, maxCellChars: request.maxCellChars, timeoutMs: options.timeoutMs });
      };
      // A warm idle process (the usual case) takes the call at once, without a detour through
      // the microtask queue; otherwise wait for one to start or come free.
      const idle = this.closed ? undefined : this.idle.pop();
      if (idle) start(idle);
      else this.acquire().then(start, (error: unknown) => finish(error instanceof Error ? error : new Error(String(error))));
    });
  }

  private async acquire(): Promise<QueryProcess> {
    if (this.closed) throw ToolError.unavailable(this.closedReason);
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.all.size < this.options.size) {
      const p = this.spawn();
      p.busy = true;
      try {
        await p.ready;
      } catch (error) {
        this.kill(p);
        throw error;
      }
      return p;
    }
    return new Promise<QueryProcess>((grant, fail) => this.waiting.push({ grant, fail }));
  }

  private release(p: QueryProcess): void {
    if (p.dead) return;
    const next = this.waiting.shift();
    if (next) {
      next.grant(p);
      return;
    }
    p.busy = false;
    this.idle.push(p);
  }

  private spawn(): QueryProcess {
    // Requests go in on stdin and answers come back on stdout, one JSON line each (see the
    // query process script for why not Node's IPC channel). The child's stdout is a pipe to us,
    // never the server's own stdout, which in stdio mode carries the protocol. Node flags of the
    // server (test runners' loaders, the inspector, NODE_OPTIONS) stay out of the child, and so
    // does the rest of the server's environment: user SQL has no business near its secrets.
    // Being managed, the process is also stopped and reaped at shutdown if close() never runs.
    const child = spawnManaged(process.execPath, [WORKER_SCRIPT], { stderr: 'inherit', passEnv: ['SQLITE_TMPDIR'] });
    const p: QueryProcess = { child, busy: false, dead: false, ready: Promise.resolve() };
    let onStartup: ((message: ChildMessage) => void) | undefined;
    p.ready = new Promise<void>((resolve, reject) => {
      onStartup = (message) => {
        if (message.type === 'ready') {
          onStartup = undefined;
          resolve();
        } else if (message.type === 'failed') {
          onStartup = undefined;
          reject(ToolError.unavailable(message.locked ? lockedMessage(this.options.busyTimeoutMs) : `The database could not be opened: ${message.message}`));
        }
      };
      // Also when it could not be spawned at all; once ready, a later exit no longer matters here.
      void child.exited.then(() => reject(ToolError.unavailable('The query process could not start.')));
    });
    p.ready.catch(() => undefined);
    readLines(child.stdout, (line) => {
      const message = parseChildLine(line);
      if (!message) return;
      if (onStartup) onStartup(message);
      else if (message.type === 'result' && p.current?.id === message.id) p.current.answer(message);
    });
    void child.exited.then(() => {
      const call = p.current;
      p.current = undefined;
      this.forget(p);
      call?.lost();
    });
    sendTo(child, { type: 'init', file: this.options.file, mode: this.options.mode, writableServer: this.options.writableServer, extensions: this.options.extensions, busyTimeoutMs: this.options.busyTimeoutMs });
    this.all.add(p);
    return p;
  }

  private kill(p: QueryProcess): void {
    if (!p.dead) p.child.kill('SIGKILL');
    this.forget(p);
  }

  private forget(p: QueryProcess): void {
    if (p.dead) return;
    p.dead = true;
    this.all.delete(p);
    const at = this.idle.indexOf(p);
    if (at >= 0) this.idle.splice(at, 1);
    // A waiting call can now start a process of its own in the freed slot.
    const next = this.waiting.shift();
    if (next && !this.closed) {
      this.acquire().then(next.grant, next.fail);
    }
  }
}

/**
 * One answer line. An extension that prints to stdout without a line break would put its text in
 * front of our message; the message is then the part from its opening brace, so the call is not
 * left waiting for its time limit. Lines with nothing of ours are ignored.
 */
function parseChildLine(line: string): ChildMessage | undefined {
  const at = line.startsWith('{"type":') ? 0 : line.lastIndexOf('{"type":');
  if (at < 0) return undefined;
  try {
    return JSON.parse(at === 0 ? line : line.slice(at)) as ChildMessage;
  } catch {
    return undefined;
  }
}

function sendTo(child: ManagedProcess, message: Record<string, unknown>): void {
  // JSON.stringify escapes line breaks inside strings, so the newline ends the message.
  child.stdin.write(`${JSON.stringify(message)}\n`);
}

/** Calls onLine for every complete line of a UTF-8 stream. */
function readLines(stream: Readable, onLine: (line: string) => void): void {
  stream.setEncoding('utf8');
  let pending = '';
  stream.on('data', (chunk: string) => {
    // Only the new text can hold the next line break (answers of a megabyte arrive in many chunks).
    let searchFrom = pending.length;
    pending += chunk;
    let end: number;
    while ((end = pending.indexOf('\n', searchFrom)) >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      searchFrom = 0;
      onLine(line);
    }
  });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

/** Resolves once the child has exited, or after `limitMs`, whichever comes first. */
function exitedWithin(child: ManagedProcess, limitMs: number): Promise<void> {
  if (child.hasExited) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, limitMs);
    void child.exited.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
