/**
 * Expected failures, and what each means on the wire. This module imports nothing of the package,
 * so every other module (paths, roots, tools, the server) can depend on it without a circle.
 */

export type ToolErrorKind =
  | 'invalid_argument'
  | 'not_found'
  | 'access_denied'
  | 'conflict'
  | 'timeout'
  | 'cancelled'
  | 'unavailable'
  | 'rate_limited'
  | 'failed';

/**
 * An expected failure. Its message goes to the client as-is, so it must be actionable and must
 * not contain anything the user did not give (host paths, secrets, stack traces).
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly kind: ToolErrorKind = 'failed',
  ) {
    super(message);
    this.name = 'ToolError';
  }

  static invalidArgument(message: string): ToolError {
    return new ToolError(message, 'invalid_argument');
  }
  static notFound(message: string): ToolError {
    return new ToolError(message, 'not_found');
  }
  static accessDenied(message: string): ToolError {
    return new ToolError(message, 'access_denied');
  }
  static conflict(message: string): ToolError {
    return new ToolError(message, 'conflict');
  }
  static timeout(message: string): ToolError {
    return new ToolError(message, 'timeout');
  }
  static unavailable(message: string): ToolError {
    return new ToolError(message, 'unavailable');
  }
}

/**
 * A failure of a service the server depends on (an HTTP API, a database across the network): the
 * request may well succeed later, and the client must not be told it asked for something wrong.
 * The message says when to retry; `retryAfterSeconds` carries the same for programs.
 */
export class UpstreamError extends ToolError {
  readonly retryAfterSeconds: number | undefined;
  readonly status: number | undefined;

  constructor(
    message: string,
    kind: 'rate_limited' | 'unavailable' | 'timeout',
    details: { retryAfterSeconds?: number; status?: number } = {},
  ) {
    super(message, kind);
    this.name = 'UpstreamError';
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.status = details.status;
  }

  /** `service` names the upstream as the user knows it ("GitHub"); the retry time is rounded up. */
  static rateLimited(service: string, retryAfterSeconds: number | undefined, detail?: string): UpstreamError {
    const wait = retryAfterSeconds === undefined ? 'Wait a minute' : `Retry in ${formatWait(retryAfterSeconds)}`;
    return new UpstreamError(`${service} rate limit reached${detail ? ` (${detail})` : ''}. ${wait} and try again.`, 'rate_limited', {
      ...(retryAfterSeconds !== undefined ? { retryAfterSeconds: Math.max(0, Math.ceil(retryAfterSeconds)) } : {}),
      status: 429,
    });
  }

  static unreachable(service: string, status?: number, detail?: string): UpstreamError {
    const what = status ? `${service} answered ${status}` : `${service} could not be reached`;
    return new UpstreamError(`${what}${detail ? ` (${detail})` : ''}. This is not a problem with your request; try again in a few seconds.`, 'unavailable', {
      ...(status !== undefined ? { status } : {}),
    });
  }

  static timedOut(service: string, afterMs: number): UpstreamError {
    return new UpstreamError(`${service} did not answer within ${formatWait(afterMs / 1000)}. Try again, or narrow the request.`, 'timeout');
  }
}

function formatWait(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 120) return `${s} second${s === 1 ? '' : 's'}`;
  return `${Math.ceil(s / 60)} minutes`;
}

/**
 * JSON-RPC error codes for failures of requests that have no isError result (resources/read,
 * prompts/get, completion). -32602 is for the client's mistakes only; failures of the server or
 * of a service behind it get codes in the implementation-defined server range, so a client does
 * not blame (or retry) the wrong party. Documented in the README's error table.
 */
export const ERROR_CODES: Record<ToolErrorKind, number> = {
  invalid_argument: -32602,
  not_found: -32602,
  access_denied: -32003,
  conflict: -32004,
  rate_limited: -32029,
  unavailable: -32030,
  timeout: -32001,
  cancelled: -32800,
  failed: -32603,
};

/**
 * A mistake in how the server was started (a flag, an argument): printed with a pointer to
 * --help, exit code 2.
 */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
