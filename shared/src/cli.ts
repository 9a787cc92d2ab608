import { parseArgs, type ParseArgsConfig } from 'node:util';
import { Logger, guardStdout, isLogLevel, LOG_LEVELS } from './logging.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_CEILING } from './stdio.js';
import { serveHttp, serveStdio, type RunningTransport, type SessionFactory } from './transport.js';

/** A command-line flag a server adds to the common ones. */
export interface FlagSpec {
  type: 'boolean' | 'string';
  multiple?: boolean;
  short?: string;
  description: string;
  /** Shown in --help as `--flag <valueName>`. */
  valueName?: string;
}

export type FlagValues<F extends Record<string, FlagSpec>> = {
  [K in keyof F]: F[K]['type'] extends 'boolean' ? boolean | undefined : F[K]['multiple'] extends true ? string[] | undefined : string | undefined;
};

/** A usage mistake: printed with a pointer to --help, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** What `prepare` hands back: how to build a session, and what to release at exit. */
export interface PreparedServer {
  createSession: SessionFactory;
  close?: () => Promise<void>;
}

export interface ServerCliSpec<F extends Record<string, FlagSpec>> {
  /** The bin name, e.g. mcp-server-filesystem. */
  bin: string;
  packageName: string;
  version: string;
  description: string;
  /** What follows the bin name in the usage line, e.g. "[--read-only] DIR...". */
  usage: string;
  flags: F;
  positionals?: { min?: number; max?: number; name: string };
  /** Environment variables the server reads, for --help. */
  environment?: { name: string; description: string }[];
  examples?: string[];
  prepare(cli: { flags: FlagValues<F>; positionals: string[] }, log: Logger): Promise<PreparedServer>;
}

const COMMON_FLAGS = {
  help: { type: 'boolean', short: 'h', description: 'Show this help and exit.' },
  version: { type: 'boolean', short: 'V', description: 'Show the version and exit.' },
  http: { type: 'boolean', description: 'Serve Streamable HTTP (and legacy SSE) instead of stdio.' },
  port: { type: 'string', valueName: 'N', description: 'HTTP port (default 3000; 0 picks a free one).' },
  host: { type: 'string', valueName: 'ADDR', description: 'HTTP bind address (default 127.0.0.1).' },
  'auth-token': { type: 'string', valueName: 'TOKEN', description: 'Require "Authorization: Bearer TOKEN" over HTTP (or set MCP_AUTH_TOKEN).' },
  'allowed-host': { type: 'string', multiple: true, valueName: 'HOST', description: 'Accept this Host header too (repeatable; loopback names are always accepted).' },
  'allowed-origin': { type: 'string', multiple: true, valueName: 'ORIGIN', description: 'Accept this Origin too (repeatable; loopback origins are always accepted).' },
  'session-timeout': { type: 'string', valueName: 'SECONDS', description: 'Close HTTP sessions idle this long (default 1800).' },
  'max-message-bytes': {
    type: 'string',
    valueName: 'BYTES',
    description: `Largest JSON-RPC message accepted from the client (default ${DEFAULT_MAX_MESSAGE_BYTES} on stdio, 4194304 over HTTP).`,
  },
  'log-level': { type: 'string', valueName: 'LEVEL', description: `Stderr log level: ${LOG_LEVELS.join(', ')} (default warning).` },
} as const satisfies Record<string, FlagSpec>;

/** Parses an integer flag or throws a UsageError naming the flag. */
export function integerFlag(value: string | undefined, name: string, fallback: number, range: { min?: number; max?: number } = {}): number {
  if (value === undefined) return fallback;
  if (!/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got ${JSON.stringify(value)}.`);
  const n = Number(value);
  if ((range.min !== undefined && n < range.min) || (range.max !== undefined && n > range.max)) {
    throw new UsageError(`--${name} must be between ${range.min ?? '-∞'} and ${range.max ?? '∞'}, got ${n}.`);
  }
  return n;
}

export function helpText<F extends Record<string, FlagSpec>>(spec: ServerCliSpec<F>): string {
  const line = (name: string, flag: FlagSpec): string => {
    const left = `${flag.short ? `-${flag.short}, ` : '    '}--${name}${flag.type === 'string' ? ` <${flag.valueName ?? 'value'}>` : ''}`;
    return `  ${left.padEnd(34)} ${flag.description}`;
  };
  const parts = [
    `${spec.bin} ${spec.version}: ${spec.description}`,
    '',
    `Usage: ${spec.bin} ${spec.usage}`,
    '',
    'Options:',
    ...Object.entries(spec.flags).map(([n, f]) => line(n, f)),
    ...Object.entries(COMMON_FLAGS).map(([n, f]) => line(n, f)),
  ];
  if (spec.environment?.length) {
    parts.push('', 'Environment:', ...spec.environment.map((e) => `  ${e.name.padEnd(34)} ${e.description}`));
  }
  if (spec.examples?.length) parts.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  return parts.join('\n') + '\n';
}

/**
 * The whole life of a server process: parse the command line, prepare the domain (open the
 * database, check the directories), serve stdio or HTTP, and shut down cleanly on SIGINT,
 * SIGTERM or, in stdio mode, when stdin closes (the client went away).
 */
export async function runServer<F extends Record<string, FlagSpec>>(spec: ServerCliSpec<F>, argv = process.argv.slice(2)): Promise<void> {
  const log = new Logger(spec.bin.replace(/^mcp-server-/, ''));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...COMMON_FLAGS, ...spec.flags } as ParseArgsConfig['options'],
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return usageExit(spec.bin, (error as Error).message);
  }
  const values = parsed.values as Record<string, string | boolean | string[] | undefined>;
  if (values.help) {
    process.stdout.write(helpText(spec));
    return;
  }
  if (values.version) {
    process.stdout.write(`${spec.version}\n`);
    return;
  }

  let running: RunningTransport | undefined;
  let prepared: PreparedServer | undefined;
  try {
    const level = values['log-level'] as string | undefined;
    if (level !== undefined) {
      if (!isLogLevel(level)) throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}.`);
      Logger.setStderrLevel(level);
    }
    const positionals = parsed.positionals;
    const { min = 0, max = Infinity, name } = spec.positionals ?? { name: '' };
    if (positionals.length < min) throw new UsageError(`Missing ${name}.`);
    if (positionals.length > max) throw new UsageError(`Too many arguments: ${positionals.slice(max).join(' ')}`);
    const http = values.http === true;
    if (!http && (values.port !== undefined || values.host !== undefined)) throw new UsageError('--port and --host only apply with --http.');
    const port = integerFlag(values.port as string | undefined, 'port', 3000, { min: 0, max: 65535 });
    const idleSeconds = integerFlag(values['session-timeout'] as string | undefined, 'session-timeout', 1800, { min: 1 });
    const maxMessageFlag = values['max-message-bytes'] as string | undefined;
    const maxMessageBytes = integerFlag(maxMessageFlag, 'max-message-bytes', DEFAULT_MAX_MESSAGE_BYTES, { min: 1024, max: MAX_MESSAGE_BYTES_CEILING });

    prepared = await spec.prepare({ flags: values as FlagValues<F>, positionals }, log);

    if (http) {
      guardStdout();
      const authToken = (values['auth-token'] as string | undefined) ?? process.env.MCP_AUTH_TOKEN;
      const served = await serveHttp(prepared.createSession, {
        port,
        host: (values.host as string | undefined) ?? '127.0.0.1',
        ...(authToken ? { authToken } : {}),
        allowedHosts: (values['allowed-host'] as string[] | undefined) ?? [],
        allowedOrigins: (values['allowed-origin'] as string[] | undefined) ?? [],
        idleTimeoutMs: idleSeconds * 1000,
        ...(maxMessageFlag !== undefined ? { maxBodyBytes: maxMessageBytes } : {}),
        log,
      });
      running = served;
      process.stderr.write(`${spec.bin} listening on ${served.url}\n`);
    } else {
      guardStdout();
      running = await serveStdio(prepared.createSession, { maxMessageBytes, log });
      // The client closing our stdin is how stdio sessions end.
      process.stdin.on('end', () => void shutdown('stdin closed'));
      process.stdin.on('close', () => void shutdown('stdin closed'));
    }
  } catch (error) {
    if (error instanceof UsageError) return usageExit(spec.bin, error.message);
    process.stderr.write(`${spec.bin}: ${error instanceof Error ? error.message : String(error)}\n`);
    if (process.env.SUITE_DEBUG && error instanceof Error) process.stderr.write(`${error.stack}\n`);
    await prepared?.close?.().catch(() => undefined);
    process.exit(1);
  }

  let stopping = false;
  async function shutdown(reason: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    log.info(`shutting down: ${reason}`);
    // Whatever hangs (a stuck query, a watcher), the process is gone within a second.
    setTimeout(() => process.exit(0), 900).unref();
    await running?.close().catch(() => undefined);
    await prepared?.close?.().catch(() => undefined);
    process.exit(0);
  }
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

function usageExit(bin: string, message: string): void {
  process.stderr.write(`${bin}: ${message}\nRun '${bin} --help' for usage.\n`);
  process.exit(2);
}
