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
  if (isDatabaseError(error)) return new ToolError(redactSecrets(describeDatabaseError(error, sql)), 'failed');
  if (error instanceof Error && isConnectionFailure(error)) {
    return ToolError.unavailable(`The database is unreachable: ${redactSecrets(error.message)}. Check that PostgreSQL is running and the connection settings are right.`);
  }
  return error;
}

function isConnectionFailure(error: Error): boolean {
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string' && /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|ETIMEDOUT|EHOSTUNREACH|EPIPE|EAI_AGAIN)$/.test(code)) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(error.message);
}
