/**
 * A leaf module (it imports nothing of this package): the database layer and the configuration
 * both need the limits, and neither may import the other's module for them.
 */

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
