import type { ChangeHub } from '@suite/shared';
import type { Database } from './database.js';
import type { ChannelListener } from './listener.js';

/** Limits that bound every answer and every statement. */
export interface PostgresLimits {
  /** Rows a query returns before the answer is cut and marked truncated. */
  maxRows: number;
  /** Bytes of row data (as received) a query keeps before the answer is cut. */
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
  /** The process-wide change hub (LISTEN channel subscriptions). */
  changes: ChangeHub;
  /** The process-wide LISTEN connection. */
  listener: ChannelListener;
}
