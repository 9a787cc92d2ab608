/**
 * Turning failures into messages a client may see: PostgreSQL's own message, position and hint,
 * and never a password.
 */
import pg from 'pg';
import { ToolError, redactSecrets } from '@suite/shared';

export function isDatabaseError(error: unknown): error is pg.DatabaseError {
  return error instanceof pg.DatabaseError;
}

/** SQLSTATE 57014: the statement was cancelled (by us, or by statement_timeout). */
export const QUERY_CANCELED = '57014';

/** A readable report of a PostgreSQL error, with a caret under the position when we have the SQL. */
export function describeDatabaseError(error: pg.DatabaseError, sql?: string): string {
  const lines = [`${error.severity ?? 'ERROR'}: ${error.message}${error.code ? ` (SQLSTATE ${error.code})` : ''}`];
  const position = error.position ? Number(error.position) : undefined;
  if (position !== undefined && sql !== undefined && Number.isInteger(position) && position > 0) {
    const before = sql.slice(0, position - 1);
    const lineNumber = before.split('\n').length;
    const lineStart = before.lastIndexOf('\n') + 1;
    const lineEnd = sql.indexOf('\n', lineStart);
    const line = sql.slice(lineStart, lineEnd === -1 ? undefined : lineEnd);
    const column = position - lineStart;
    if (line.length <= 300) {
      lines.push(`LINE ${lineNumber}: ${line}`, `${' '.repeat(`LINE ${lineNumber}: `.length + column - 1)}^`);
    }
    lines.push(`POSITION: ${position}`);
  } else if (position !== undefined) {
    lines.push(`POSITION: ${position}`);
  }
  if (error.detail) lines.push(`DETAIL: ${error.detail}`);
  if (error.hint) lines.push(`HINT: ${error.hint}`);
  if (error.where) lines.push(`CONTEXT: ${error.where}`);
  return lines.join('\n');
}

/**
 * Maps a failure of a database call to a ToolError (or rethrows what is not ours to explain).
 * Messages pass through the shared redactor, which knows the connection's password (registered
 * by Database) and every credential shape (URL passwords, password=...).
 */
export function toToolError(error: unknown, sql: string | undefined): unknown {
  if (error instanceof ToolError) return error;
  if (isConnectionLoss(error)) return unreachable(error);
  if (isDatabaseError(error)) return new ToolError(redactSecrets(describeDatabaseError(error, sql)), 'failed');
  return error;
}

/** The database could not be reached at all: nothing of the call ran. */
export function unreachable(error: unknown): ToolError {
  return ToolError.unavailable(
    `The database is unreachable (${reason(error)}). Nothing ran. Retry in a few seconds; if it persists, check that PostgreSQL is running and the connection settings are right.`,
  );
}

/**
 * The connection went away while the call was on it. A read-only transaction changed nothing, so
 * the call can simply be repeated; a write may or may not have been committed (the COMMIT can have
 * reached the server just before the connection did not), and only a look at the data can tell.
 */
export function connectionLost(error: unknown, mode: 'read-only' | 'read-write'): ToolError {
  return ToolError.unavailable(`The connection to the database was lost during the call (${reason(error)}). ${whatNow(mode)}`);
}

/** Our own deadline ended a call the database never answered (the network or the server stopped responding). */
export function noAnswer(afterMs: number, mode: 'read-only' | 'read-write'): ToolError {
  return ToolError.timeout(
    `The database did not answer within ${Math.ceil(afterMs / 1000)} s (the statement timeout plus a grace period), so the connection was closed; the network or the server may be down. ${whatNow(mode)}`,
  );
}

function whatNow(mode: 'read-only' | 'read-write'): string {
  if (mode === 'read-only') return 'The call ran read-only: nothing was changed. Retry it; the next call opens a new connection.';
  return 'Whether the statement was committed is unknown: PostgreSQL rolls back a transaction whose connection ends before COMMIT, but a COMMIT already sent may have been applied. Check the data (with a query) before running it again.';
}

function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return redactSecrets(message.replace(/[.\s]+$/, ''));
}

/**
 * SQLSTATEs that mean the session is gone, not that the statement was wrong: class 08 (connection
 * exception) and the shutdown family of class 57 (a restart, pg_terminate_backend, a crash).
 */
const SESSION_GONE = /^(08...|57P0[1-4])$/;

/** The connection failed or ended under the call (not a statement the server refused). */
export function isConnectionLoss(error: unknown): boolean {
  if (isDatabaseError(error)) return typeof error.code === 'string' && SESSION_GONE.test(error.code);
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|EAI_AGAIN)$/.test(code)) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|Client was closed and is not queryable|not queryable/i.test(error.message);
}
