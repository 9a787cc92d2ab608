import type { ChangeHub } from '@suite/shared';
import type { Database } from './database.js';
import type { ChannelListener } from './listener.js';

/** Limits that bound every answer and every statement. */
export interface PostgresLimits {
  /** Rows a query returns before the answer is cut and marked truncated. */
  maxRows: number;
  /**
   * Bytes of row data (as JSON) a query keeps before the answer is cut. The text table repeats at
   * most as much, so an answer stays under about twice this, far below the client's 10 MiB.
   */
  maxBytes: number;
  /** Server-side statement_timeout, in milliseconds. */
  statementTimeoutMs: number;
  /** Server-side lock_timeout, in milliseconds. */
  lockTimeoutMs: number;
  /** Server-side idle_in_transaction_session_timeout, in milliseconds. */
  idleInTransactionTimeoutMs: number;
}

export const DEFAULT_LIMITS: PostgresLimits = {
  maxRows: 1000,
  maxBytes: 1024 * 1024,
  statementTimeoutMs: 30_000,
  lockTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 60_000,
};

/** Everything the server is configured with, shared by all sessions of one process. */
export interface PostgresConfig {
  database: Database;
  /** With --allow-write, the execute tool is registered. */
  allowWrite: boolean;
  limits: PostgresLimits;
  /** The process-wide change hub, given to every session's SuiteServer so that channels can be subscribed to. */
  changes: ChangeHub;
  /** The process-wide LISTEN connection. */
  listener: ChannelListener;
}
