/**
 * The connection pool and the transaction discipline every tool goes through:
 *   read-only: BEGIN READ ONLY (plus a snapshot, so SET TRANSACTION READ WRITE is refused) ->
 *              one statement over the extended protocol -> ROLLBACK, always;
 *   write:     BEGIN -> one statement -> COMMIT.
 * A pooled connection goes back to the pool only when it is known to be clean (idle, no
 * cancellation in flight, an ordinary command); otherwise it is destroyed.
 */
import pg from 'pg';
import { CancelledError, ToolError, redactSecrets, registerSecret } from '@suite/shared';
import { runBounded, type BoundedResult } from './bounded-query.js';
import type { PostgresLimits } from './limits.js';
import { QUERY_CANCELED, connectionLost, isConnectionLoss, isDatabaseError, noAnswer, toToolError, unreachable } from './errors.js';
import { BUILTIN_TYPE_NAMES } from './values.js';

/** Where we are connected, without credentials: for messages and resource URIs. */
export interface DatabaseTarget {
  host: string;
  port: number;
  database: string;
  user: string;
}

export interface DatabaseOptions {
  /** A postgres:// URL; when absent, pg reads the standard PG* variables. */
  connectionString?: string;
  /** Sets default_transaction_read_only on every pooled session (a further layer). */
  readOnlySessions: boolean;
  limits: PostgresLimits;
  poolSize?: number;
}

/**
 * Sent ahead of the first statement of a read-only transaction. The no-op SELECT takes the
 * transaction's first snapshot: from then on PostgreSQL refuses SET TRANSACTION READ WRITE
 * ("must be set before any query").
 */
const READ_ONLY_PREAMBLE = ['BEGIN TRANSACTION READ ONLY', 'SELECT WHERE false'] as const;
const READ_WRITE_PREAMBLE = ['BEGIN TRANSACTION READ WRITE'] as const;

/** How long a cancelled statement may take to stop before its connection is closed under it. */
const CANCEL_GRACE_MS = 3_000;

/** Beyond statement_timeout, how long we wait for a server or network that stopped answering. */
const DEADLINE_GRACE_MS = 5_000;

/** Command tags after which a connection is known to carry nothing over to the next call. */
const CLEAN_COMMANDS = new Set(['SELECT', 'SHOW', 'EXPLAIN', 'VALUES', 'TABLE', 'FETCH', 'INSERT', 'UPDATE', 'DELETE', 'MERGE', 'COPY']);

interface TransactionState {
  /** A transaction is open (or its BEGIN is queued) and no ROLLBACK/COMMIT has been queued since. */
  begun: boolean;
  /** Nothing seen so far keeps the connection from going back to the pool. */
  clean: boolean;
  stopped: 'cancelled' | 'timeout' | undefined;
  /** The last ROLLBACK queued; settles (never rejects) once PostgreSQL answered it. */
  ending: Promise<void> | undefined;
  /** The caller's first statement went out (before that, only our own BEGIN did). */
  sent: boolean;
}

/**
 * A pooled connection that died while idle (a restart, a failover, a cut) and was found dead at
 * our BEGIN, before anything of the caller's was sent: the call is repeated on another connection.
 */
class StaleConnection extends Error {
  constructor(readonly lost: unknown) {
    super('stale pooled connection');
  }
}

/**
 * Session-level advisory locks survive ROLLBACK and COMMIT, and `SELECT pg_advisory_lock(1)` looks
 * like any clean SELECT; released in the same message as the end of the transaction, so a pooled
 * connection never carries a lock into another call (and no extra round trip is paid).
 */
const END_READ_ONLY = 'ROLLBACK; SELECT pg_advisory_unlock_all()';
const END_READ_WRITE = 'COMMIT; SELECT pg_advisory_unlock_all()';

/** Queues ROLLBACK (pg sends it as soon as the connection is ready); a failure marks the connection unclean. */
function rollback(client: pg.PoolClient, state: TransactionState): void {
  state.begun = false;
  state.ending = client.query(END_READ_ONLY).then(
    () => undefined,
    () => {
      state.clean = false;
    },
  );
}

/** Statements of one transaction; the user's SQL only ever goes through `bounded`. */
export interface Transaction {
  readonly client: pg.ClientBase;
  /** Runs one statement (the user's) over the extended protocol, with the row and byte caps. */
  bounded(sql: string, params: readonly unknown[], caps?: { maxRows?: number; maxBytes?: number }): Promise<BoundedResult>;
  /** Runs our own catalog SQL (parameters bound, never formatted in). */
  rows<R extends pg.QueryResultRow>(sql: string, params?: readonly unknown[]): Promise<R[]>;
  /** Names of the given type oids. */
  typeNames(oids: readonly number[]): Promise<Map<number, string>>;
  /**
   * Marks the connection as carrying session state (hypothetical indexes, a prepared statement)
   * that a ROLLBACK does not undo: it is closed after the call instead of going back to the pool.
   */
  discardConnection(): void;
}

export class Database {
  readonly pool: pg.Pool;
  readonly target: DatabaseTarget;
  readonly limits: PostgresLimits;
  private readonly typeNameCache = new Map<number, string>(BUILTIN_TYPE_NAMES);

  constructor(private readonly options: DatabaseOptions) {
    this.limits = options.limits;
    this.target = describeTarget(options.connectionString);
    // Every message that reaches a client or a log passes the shared redactor, whatever path it takes.
    for (const secret of [passwordOf(options.connectionString), process.env.PGPASSWORD]) registerSecret(secret);
    this.pool = new pg.Pool({ ...this.clientConfig(true), max: this.poolSize, idleTimeoutMillis: 30_000 });
    // An idle pooled connection that dies (server restart) must not crash the process.
    this.pool.on('error', () => undefined);
    // Nor one that dies while a call holds it: pg reports the loss to the query in flight and also
    // emits 'error' on the client, which the pool listens to only while the client is idle.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
  }

  private get poolSize(): number {
    return this.options.poolSize ?? 4;
  }

  /** Settings for any connection we open (the pool, the cancel side-channel, the LISTEN connection). */
  clientConfig(forStatements: boolean): pg.ClientConfig {
    const settings = ['-c bytea_output=hex', '-c DateStyle=ISO'];
    if (forStatements && this.options.readOnlySessions) settings.push('-c default_transaction_read_only=on');
    return {
      ...(this.options.connectionString ? { connectionString: this.options.connectionString } : {}),
      application_name: 'mcp-server-postgres',
      connectionTimeoutMillis: 10_000,
      options: settings.join(' '),
      ...(forStatements
        ? {
            statement_timeout: this.limits.statementTimeoutMs,
            lock_timeout: this.limits.lockTimeoutMs,
            idle_in_transaction_session_timeout: this.limits.idleInTransactionTimeoutMs,
          }
        : {}),
    };
  }

  /** Removes credentials from a message. */
  redact(text: string): string {
    return redactSecrets(text);
  }

  /** Read-only transaction, always rolled back. */
  readOnly<T>(signal: AbortSignal, fn: (tx: Transaction) => Promise<T>, sqlForErrors?: string): Promise<T> {
    return this.transaction('read-only', signal, fn, sqlForErrors);
  }

  /** Read-write transaction, committed when fn succeeds. */
  readWrite<T>(signal: AbortSignal, fn: (tx: Transaction) => Promise<T>, sqlForErrors?: string): Promise<T> {
    return this.transaction('read-write', signal, fn, sqlForErrors);
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }

  /**
   * One call's transaction. A pooled connection found dead before the caller's statement went out
   * is replaced (every idle one may be dead after a cut, hence up to the pool size plus one tries);
   * a connection lost after that is reported, never retried behind the caller's back.
   */
  private async transaction<T>(mode: 'read-only' | 'read-write', signal: AbortSignal, fn: (tx: Transaction) => Promise<T>, sqlForErrors?: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(mode, signal, fn, sqlForErrors);
      } catch (error) {
        if (!(error instanceof StaleConnection)) throw error;
        if (attempt > this.poolSize) throw unreachable(error.lost);
      }
    }
  }

  private async attempt<T>(mode: 'read-only' | 'read-write', signal: AbortSignal, fn: (tx: Transaction) => Promise<T>, sqlForErrors?: string): Promise<T> {
    if (signal.aborted) throw new CancelledError();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw isConnectionLoss(error) ? unreachable(error) : toToolError(error, undefined);
    }
    const state: TransactionState = { begun: false, clean: true, stopped: undefined, ending: undefined, sent: false };
    let released = false;
    const release = (reusable: boolean): void => {
      if (released) return;
      released = true;
      client.release(reusable && client.getTransactionStatus() === 'I' ? undefined : true);
    };
    const stop = (why: 'cancelled' | 'timeout'): void => {
      if (state.stopped) return;
      state.stopped = why;
      state.clean = false;
      void this.cancelBackend(backendPid(client));
      // If the cancel cannot get through (network gone), closing the socket ends the wait.
      setTimeout(() => release(false), CANCEL_GRACE_MS).unref();
    };
    const onAbort = (): void => stop('cancelled');
    signal.addEventListener('abort', onAbort, { once: true });
    // statement_timeout does the work; this catches a server or network that stops answering.
    const deadline = setTimeout(() => stop('timeout'), this.limits.statementTimeoutMs + DEADLINE_GRACE_MS);
    /**
     * Ends the transaction with ROLLBACK (queued early by `bounded` when the user's portal is done,
     * otherwise here) and returns the connection to the pool once PostgreSQL confirmed it, and only
     * when clean. The answer does not wait for the ROLLBACK (it went out with the first read of the
     * result and completes while the answer travels); the deadline stays armed until it does, so a
     * connection that stops answering is closed rather than held.
     */
    const finish = (): void => {
      signal.removeEventListener('abort', onAbort);
      if (!state.stopped && state.clean && state.begun) rollback(client, state);
      const settle = (): void => {
        clearTimeout(deadline);
        release(state.clean && !state.stopped && !state.begun);
      };
      if (!state.stopped && state.clean && state.ending) void state.ending.then(settle);
      else settle();
    };
    const tx = this.transactionApi(client, mode, state);
    let value: T;
    try {
      value = await fn(tx);
      if (state.stopped === 'cancelled') throw new CancelledError();
      if (mode === 'read-write' && state.begun) {
        await client.query(END_READ_WRITE);
        state.begun = false;
      }
    } catch (error) {
      const outcome = this.classifyFailure(error, signal, state, mode, sqlForErrors);
      // An ordinary SQL error leaves the transaction aborted; ROLLBACK makes the connection reusable.
      if (!isDatabaseError(error) || isConnectionLoss(error) || outcome instanceof CancelledError || (outcome instanceof ToolError && outcome.kind === 'timeout')) {
        state.clean = false;
      }
      if (mode === 'read-write' && state.clean && state.begun) rollback(client, state);
      finish();
      throw outcome;
    }
    finish();
    return value;
  }

  private classifyFailure(error: unknown, signal: AbortSignal, state: TransactionState, mode: 'read-only' | 'read-write', sql: string | undefined): unknown {
    const { stopped } = state;
    const cancelledOnServer = isDatabaseError(error) && error.code === QUERY_CANCELED;
    // Our CopyFail also ends as query_canceled: it is neither a timeout nor the user's cancellation.
    if (cancelledOnServer && !stopped && error.message.startsWith('COPY from stdin failed')) {
      return ToolError.invalidArgument('COPY ... FROM STDIN is not supported: a tool call cannot stream data to the server. Use INSERT ... VALUES with params instead.');
    }
    if (stopped === 'cancelled' || (cancelledOnServer && signal.aborted) || error instanceof CancelledError) return new CancelledError();
    // Our deadline fired and the server did not cancel the statement: it never answered at all.
    if (stopped === 'timeout' && !cancelledOnServer) return noAnswer(this.limits.statementTimeoutMs + DEADLINE_GRACE_MS, mode);
    if (stopped === 'timeout' || cancelledOnServer) {
      return ToolError.timeout(
        `The statement was cancelled on the server after the statement timeout (${this.limits.statementTimeoutMs} ms). Narrow the query (WHERE, LIMIT) or raise --statement-timeout.`,
      );
    }
    if (isConnectionLoss(error)) return state.sent ? connectionLost(error, mode) : new StaleConnection(error);
    return toToolError(error, sql);
  }

  private transactionApi(client: pg.PoolClient, mode: 'read-only' | 'read-write', state: TransactionState): Transaction {
    const preamble = mode === 'read-only' ? READ_ONLY_PREAMBLE : READ_WRITE_PREAMBLE;
    // Statements after an early ROLLBACK (a type-name lookup, say) get a read-only transaction of their own.
    const ensureBegun = async (): Promise<void> => {
      if (state.begun) return;
      state.begun = true;
      // The early ROLLBACK may still be on the wire: pg would queue behind it, which pg 9 removes.
      if (state.ending) await state.ending;
      await client.query(preamble.join('; '));
    };
    // A read-only transaction has nothing to keep once the user's portal is done: queue the ROLLBACK at once.
    const endEarly = mode === 'read-only' ? (): void => {
      if (!state.stopped && state.clean) rollback(client, state);
    } : undefined;
    const rows = async <R extends pg.QueryResultRow>(sql: string, params: readonly unknown[] = []): Promise<R[]> => {
      await ensureBegun();
      state.sent = true;
      const result = await client.query<R>({ text: sql, values: [...params], queryMode: 'extended' } as pg.QueryConfig);
      return result.rows;
    };
    return {
      client,
      bounded: async (sql, params, caps = {}) => {
        const first = !state.begun;
        state.begun = true;
        const result = await runBounded(client, sql, [...params], {
          maxRows: caps.maxRows ?? this.limits.maxRows,
          maxBytes: caps.maxBytes ?? this.limits.maxBytes,
          ...(first ? { preamble } : {}),
          ...(endEarly ? { onPortalDone: endEarly } : {}),
          onSent: () => (state.sent = true),
        });
        // PREPARE, LISTEN, DECLARE ... WITH HOLD and the like outlive a ROLLBACK or are not worth the doubt.
        if (result.command !== undefined && !CLEAN_COMMANDS.has(result.command)) state.clean = false;
        return result;
      },
      rows,
      discardConnection: () => {
        state.clean = false;
      },
      typeNames: async (oids) => {
        const cache = this.typeNameCache;
        // The usual case (built-in or already seen types) allocates nothing but the answer.
        if (oids.every((oid) => cache.has(oid))) return new Map(oids.map((oid) => [oid, cache.get(oid)!]));
        const missing = [...new Set(oids)].filter((oid) => !cache.has(oid));
        if (missing.length > 0) {
          const found = await rows<{ oid: number; name: string }>('SELECT t.oid::int AS oid, format_type(t.oid, NULL) AS name FROM pg_type t WHERE t.oid = ANY($1::oid[])', [missing]);
          for (const row of found) this.typeNameCache.set(row.oid, row.name);
        }
        return new Map(oids.map((oid) => [oid, this.typeNameCache.get(oid) ?? `oid ${oid}`]));
      },
    };
  }

  /** Cancels whatever a backend runs, from a separate short-lived connection. */
  async cancelBackend(pid: number | null | undefined): Promise<void> {
    if (!pid) return;
    const side = new pg.Client(this.clientConfig(false));
    side.on('error', () => undefined);
    try {
      await side.connect();
      await side.query('SELECT pg_cancel_backend($1)', [pid]);
    } catch {
      // The backend may already be gone; the pooled connection is destroyed either way.
    } finally {
      await side.end().catch(() => undefined);
    }
  }
}

function passwordOf(connectionString: string | undefined): string | undefined {
  if (!connectionString) return undefined;
  try {
    const password = new URL(connectionString).password;
    return password ? decodeURIComponent(password) : undefined;
  } catch {
    return undefined;
  }
}

/** Host, port, database and user as pg will resolve them (URL first, then PG* variables). */
export function describeTarget(connectionString: string | undefined): DatabaseTarget {
  let url: URL | undefined;
  if (connectionString) {
    try {
      url = new URL(connectionString);
    } catch {
      url = undefined;
    }
  }
  const env = process.env;
  const user = (url?.username ? decodeURIComponent(url.username) : undefined) ?? env.PGUSER ?? env.USER ?? 'postgres';
  const host = url?.searchParams.get('host') ?? (url?.hostname ? decodeURIComponent(url.hostname) : undefined) ?? env.PGHOST ?? 'localhost';
  const port = Number(url?.port || env.PGPORT || 5432);
  const fromPath = url ? decodeURIComponent(url.pathname.replace(/^\//, '')) : '';
  const database = fromPath || env.PGDATABASE || user;
  return { host, port, database, user };
}

/** The backend pid pg learned at connect time (typed on Client, not on PoolClient). */
function backendPid(client: pg.PoolClient): number | undefined {
  const pid = (client as unknown as { processID?: unknown }).processID;
  return typeof pid === 'number' ? pid : undefined;
}
