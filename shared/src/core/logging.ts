import { randomBytes } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { processSecrets, type SecretScope } from './secrets.js';

/** MCP log levels, in increasing severity (RFC 5424 names, as the spec uses them). */
export const LOG_LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value);
}

function severity(level: LogLevel): number {
  return LOG_LEVELS.indexOf(level);
}

/** Where a logger sends MCP `notifications/message`; set per session by the server. */
export type ProtocolLogSink = (level: LogLevel, logger: string, data: unknown) => void;

/**
 * Logs go to two places: stderr (for whoever runs the process; stdout belongs to the protocol)
 * and, when a session is attached, to the client as `notifications/message`, filtered by the
 * level the client chose with `logging/setLevel` (the SDK keeps that per session).
 */
export class Logger {
  private static stderrLevel: LogLevel = (() => {
    const env = process.env.SUITE_LOG_LEVEL;
    return env && isLogLevel(env) ? env : 'warning';
  })();

  static setStderrLevel(level: LogLevel): void {
    Logger.stderrLevel = level;
  }

  static getStderrLevel(): LogLevel {
    return Logger.stderrLevel;
  }

  private sink: ProtocolLogSink | undefined;

  /**
   * @param secrets what to redact from every line (a session's scope; the process scope by default)
   * @param parent a child logger sends through its parent's sink as it is at the time of each line,
   *   so children made before a session attached still reach the client
   */
  constructor(
    readonly name: string,
    private readonly secrets: SecretScope = processSecrets,
    private readonly parent?: Logger,
  ) {}

  child(name: string): Logger {
    return new Logger(`${this.name}:${name}`, this.secrets, this);
  }

  /**
   * The same logger with its own sink: one request's logger in the 2026-07-28 era, where the level
   * (and whether the client wants log messages at all) travels with each request.
   */
  withSink(sink: ProtocolLogSink): Logger {
    const logger = new Logger(this.name, this.secrets);
    logger.attach(sink);
    return logger;
  }

  /** Sets (or, with undefined, removes) where this logger and its children send protocol log messages. */
  attach(sink: ProtocolLogSink | undefined): void {
    this.sink = sink;
  }

  private currentSink(): ProtocolLogSink | undefined {
    return this.sink ?? this.parent?.currentSink();
  }

  log(level: LogLevel, message: string, data?: Record<string, unknown>): void {
    this.private(level, message, data);
    const sink = this.currentSink();
    if (!sink) return;
    try {
      const text = this.secrets.redact(message);
      sink(level, this.name, data ? JSON.parse(this.secrets.redact(safeJson({ message: text, ...data }))) : text);
    } catch {
      // A closed session must not turn a log line into a crash.
    }
  }

  debug(message: string, data?: Record<string, unknown>): void {
    this.log('debug', message, data);
  }
  info(message: string, data?: Record<string, unknown>): void {
    this.log('info', message, data);
  }
  warning(message: string, data?: Record<string, unknown>): void {
    this.log('warning', message, data);
  }
  error(message: string, data?: Record<string, unknown>): void {
    this.log('error', message, data);
  }

  /**
   * Writes to stderr only. For details that must never reach the client (stack traces of
   * unexpected errors, host paths).
   */
  private(level: LogLevel, message: string, data?: Record<string, unknown>): void {
    if (severity(level) >= severity(Logger.stderrLevel)) {
      data = withTraceIds(data);
      const suffix = data && Object.keys(data).length > 0 ? ` ${safeJson(data)}` : '';
      process.stderr.write(this.secrets.redact(`[${this.name}] ${level}: ${message}${suffix}\n`));
    }
  }
}

/**
 * A line written inside a request's span carries its ids, so that an operator goes from a trace to
 * its log lines and back. Outside a span (or with telemetry off, where no span is ever current) the
 * data is left as it is.
 */
function withTraceIds(data: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const span = trace.getActiveSpan();
  if (!span) return data;
  const { traceId, spanId, traceFlags } = span.spanContext();
  if (!span.isRecording() && traceFlags === 0) return data;
  return { ...data, trace_id: traceId, span_id: spanId };
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** A short id that ties a generic message shown to the client to the detail in the log. */
export function newErrorId(): string {
  return randomBytes(4).toString('hex');
}

/**
 * In stdio mode stdout carries JSON-RPC and nothing else. A stray console.log from a dependency
 * would corrupt the stream, so console output is redirected to stderr.
 */
export function guardStdout(): void {
  const toStderr = (...args: unknown[]): void => {
    process.stderr.write(args.map((a) => (typeof a === 'string' ? a : safeJson(a))).join(' ') + '\n');
  };
  // eslint-disable-next-line no-console -- this is the one place that rebinds console output
  console.log = toStderr;
  // eslint-disable-next-line no-console
  console.info = toStderr;
  // eslint-disable-next-line no-console
  console.debug = toStderr;
}
