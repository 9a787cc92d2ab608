import { readFile } from 'node:fs/promises';
import type { RedisSessionDirectory } from '../replicas/session-directory.js';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../core/errors.js';
import { setProcessChangeRelay } from '../changes/subscriptions.js';
import { setProcessSharedLimits } from '../replicas/shared-limits.js';
import { configureRequestState } from '../server/input-requests.js';
import { configureTasks } from '../tasks/runtime.js';
import type { TaskStore } from '../tasks/store.js';
import { Logger, guardStdout, isLogLevel, LOG_LEVELS } from '../core/logging.js';
import { DEFAULT_MAX_MESSAGE_BYTES, MAX_MESSAGE_BYTES_CEILING } from '../transports/stdio.js';
import { terminateAllProcesses } from '../process/process.js';
import { tempCreatesSettled } from '../files/temp-files.js';
import type { ToolSelection, ToolsetInfo } from '../server/toolsets.js';
import { serveHttp, serveStdio, type Authenticator, type HttpRoute, type RunningTransport, type SessionFactory } from '../transports/serve.js';
import { MemorySecretStore, SecretSealer, type SecretStore } from '../auth/secret-store.js';
import { telemetryPlan, type RunningTelemetry } from '../telemetry/plan.js';
import { startTelemetry } from '../telemetry/setup.js';
import type { ProtectedResource } from '../auth/protected-resource.js';

export { UsageError };

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

/** What `prepare` hands back: how to build a session, and what to release at exit. */
export interface PreparedServer {
  createSession: SessionFactory;
  close?: () => Promise<void>;
  /**
   * Over HTTP, per-session credentials instead of the one `--auth-token` gate: each request's
   * bearer token (or its absence) becomes the session's `auth`, or null for 401.
   */
  authenticate?: Authenticator;
  /** Over HTTP, the server's own routes besides MCP's (an upstream's OAuth callback). */
  routes?: HttpRoute[];
}

/** What `prepare` learns about HTTP service (undefined over stdio). */
export interface HttpServiceInfo {
  /** OAuth mode's --public-url (MCP_PUBLIC_URL) when --auth-issuer turns the mode on; the server's routes live at its origin. */
  oauthPublicUrl: string | undefined;
  /** Whether replicas share state through Redis (--redis-url): a secret store's key must then be the same on each. */
  replicated: boolean;
  /**
   * A store for users' secrets, sealed with AES-256-GCM under `key` (32 bytes): in Redis under the
   * deployment's prefix with --redis-url (every replica must then have the same key), else in this process.
   */
  secretStore(namespace: string, key: Buffer): SecretStore;
}

/**
 * What the server's tools do to the world by default, which decides its one write flag:
 * `writes` servers (filesystem, github) take --read-only; `read-only` servers (sqlite, postgres,
 * git) take --allow-write.
 */
export type WritePosture = 'writes' | 'read-only';

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
  /** Omit for a server with no tool that writes. */
  writes?: WritePosture;
  /** Named toolsets: adds --toolsets, --tools and --dynamic-toolsets. */
  toolsets?: readonly ToolsetInfo[];
  /**
   * Over HTTP every session brings its own credentials (`prepare` returns `authenticate`):
   * --auth-token does not apply, so --help does not offer it (it is refused if given).
   */
  sessionCredentials?: boolean;
  /**
   * Environment variables that mirror the selection flags, for clients that configure servers by
   * environment: PREFIX_TOOLSETS, PREFIX_TOOLS, PREFIX_DYNAMIC_TOOLSETS, PREFIX_READ_ONLY or
   * PREFIX_ALLOW_WRITE. A flag on the command line wins over its variable.
   */
  envPrefix?: string;
  /** Environment variables the server reads, for --help. */
  environment?: { name: string; description: string }[];
  examples?: string[];
  /** `selection` is what the common flags chose; give it to every SuiteServer the factory builds. */
  prepare(cli: { flags: FlagValues<F>; positionals: string[]; selection: ToolSelection; http?: HttpServiceInfo }, log: Logger): Promise<PreparedServer>;
}

const COMMON_FLAGS = {
  help: { type: 'boolean', short: 'h', description: 'Show this help and exit.' },
  version: { type: 'boolean', short: 'V', description: 'Show the version and exit.' },
  http: { type: 'boolean', description: 'Serve Streamable HTTP (and legacy SSE) instead of stdio.' },
  port: { type: 'string', valueName: 'N', description: 'HTTP port (default 3000; 0 picks a free one).' },
  host: { type: 'string', valueName: 'ADDR', description: 'HTTP bind address (default 127.0.0.1).' },
  'auth-issuer': {
    type: 'string',
    valueName: 'URL',
    description: 'OAuth mode for --http: accept access tokens from this authorization server (its issuer URL), checked for this server (or set MCP_AUTH_ISSUER). Needs --public-url.',
  },
  'public-url': {
    type: 'string',
    valueName: 'URL',
    description: 'OAuth mode: the canonical URL of this MCP endpoint as clients reach it, e.g. https://mcp.example.com/mcp; the token audience (or set MCP_PUBLIC_URL).',
  },
  'auth-introspection-client-id': {
    type: 'string',
    valueName: 'ID',
    description: 'OAuth mode: also accept opaque tokens, checked by introspection (RFC 7662) as this client; its secret in MCP_AUTH_INTROSPECTION_CLIENT_SECRET (or set MCP_AUTH_INTROSPECTION_CLIENT_ID).',
  },
  'auth-token': { type: 'string', valueName: 'TOKEN', description: 'For trusted networks: require "Authorization: Bearer TOKEN" over HTTP, one token for everyone (or set MCP_AUTH_TOKEN). Use --auth-issuer for anything else.' },
  'allowed-host': { type: 'string', multiple: true, valueName: 'HOST', description: 'Accept this Host header too (repeatable; loopback names are always accepted).' },
  'allowed-origin': { type: 'string', multiple: true, valueName: 'ORIGIN', description: 'Accept this Origin too (repeatable; loopback origins are always accepted).' },
  'drain-seconds': {
    type: 'string',
    valueName: 'SECONDS',
    description:
      'With --http: on SIGTERM or SIGINT, answer 503 on /readyz this long while still serving, so load balancers move traffic away first; the signal again stops at once (default 5; or set MCP_DRAIN_SECONDS).',
  },
  'session-timeout': { type: 'string', valueName: 'SECONDS', description: 'Close HTTP sessions idle this long (default 1800).' },
  'max-sessions': { type: 'string', valueName: 'N', description: 'Most HTTP sessions at once; more get 503 with Retry-After (default 100).' },
  'max-listen-streams': {
    type: 'string',
    valueName: 'N',
    description: 'Most 2026-07-28 subscriptions/listen streams open at once over HTTP, whatever they follow; more get 503 (default: --max-sessions).',
  },
  'max-message-bytes': {
    type: 'string',
    valueName: 'BYTES',
    description: `Largest JSON-RPC message accepted from the client (default ${DEFAULT_MAX_MESSAGE_BYTES} on stdio, 4194304 over HTTP).`,
  },
  'redis-url': {
    type: 'string',
    valueName: 'URL',
    description: 'With --http: replicas started with the same Redis URL (and requestState key) share the changes their handlers announce (or set MCP_REDIS_URL).',
  },
  'redis-prefix': { type: 'string', valueName: 'PREFIX', description: 'Prefix of the Redis keys and channels of this deployment (default suite:<server>:; or set MCP_REDIS_PREFIX).' },
  'request-state-key-file': {
    type: 'string',
    valueName: 'PATH',
    description: 'Seal 2026-07-28 multi-round-trip state with the key in this file, at least 32 bytes (or set MCP_REQUEST_STATE_KEY; default: a random key per process).',
  },
  'task-after-ms': {
    type: 'string',
    valueName: 'MS',
    description: 'How long a long-running tool call may run before it becomes a task, for 2026-07-28 clients that declare the tasks extension (default 3000; or set MCP_TASK_AFTER_MS).',
  },
  'task-ttl': { type: 'string', valueName: 'SECONDS', description: 'How long a task and its result are kept after it last changed (default 3600; or set MCP_TASK_TTL).' },
  'log-level': { type: 'string', valueName: 'LEVEL', description: `Stderr log level: ${LOG_LEVELS.join(', ')} (default warning).` },
  'metrics-port': {
    type: 'string',
    valueName: 'N',
    description: 'Serve Prometheus metrics at http://HOST:N/metrics for this process (HOST: --host with --http, else 127.0.0.1). Traces and OTLP metrics follow the OTEL_* variables.',
  },
} as const satisfies Record<string, FlagSpec>;


/** The flags a spec's write posture and toolsets add, shown in --help after the server's own. */
function selectionFlags(spec: Pick<ServerCliSpec<Record<string, FlagSpec>>, 'writes' | 'toolsets' | 'envPrefix'>): Record<string, FlagSpec> {
  const env = (name: string): string => (spec.envPrefix ? ` (or ${spec.envPrefix}_${name})` : '');
  const flags: Record<string, FlagSpec> = {};
  if (spec.writes === 'writes') flags['read-only'] = { type: 'boolean', description: `Register no tool that writes${env('READ_ONLY=1')}.` };
  if (spec.writes === 'read-only') flags['allow-write'] = { type: 'boolean', description: `Also register the tools that write${env('ALLOW_WRITE=1')}.` };
  if (spec.toolsets?.length) {
    const names = spec.toolsets.map((t) => t.name).join(', ');
    const defaults = spec.toolsets.filter((t) => t.default).map((t) => t.name).join(', ');
    flags.toolsets = { type: 'string', valueName: 'LIST', description: `Comma-separated toolsets to enable: ${names}, all, default (without the flag: ${defaults || 'none'})${env('TOOLSETS')}.` };
    flags.tools = { type: 'string', valueName: 'LIST', description: `Comma-separated single tools to enable, on top of --toolsets${env('TOOLS')}.` };
    flags['dynamic-toolsets'] = { type: 'boolean', description: `Start with only the toolset meta-tools; the model enables toolsets as it needs them${env('DYNAMIC_TOOLSETS=1')}.` };
  }
  return flags;
}

/**
 * The variables `envPrefix` makes the parser read, for the Environment section of --help: each one a
 * line of its own unless the server's own `environment` entries already name it.
 */
export function selectionEnvironment(spec: Pick<ServerCliSpec<Record<string, FlagSpec>>, 'writes' | 'toolsets' | 'envPrefix' | 'environment'>): { name: string; description: string }[] {
  if (!spec.envPrefix) return [];
  const named = new Set((spec.environment ?? []).flatMap((e) => e.name.split(/[\s,]+/)));
  const variables: { name: string; description: string }[] = [];
  const add = (suffix: string, description: string): void => {
    const name = `${spec.envPrefix}_${suffix}`;
    if (!named.has(name)) variables.push({ name, description });
  };
  if (spec.writes === 'writes') add('READ_ONLY', 'Set to 1 for --read-only.');
  if (spec.writes === 'read-only') add('ALLOW_WRITE', 'Set to 1 for --allow-write.');
  if (spec.toolsets?.length) {
    add('TOOLSETS', 'As --toolsets.');
    add('TOOLS', 'As --tools.');
    add('DYNAMIC_TOOLSETS', 'Set to 1 for --dynamic-toolsets.');
  }
  return variables;
}

/**
 * A comma-separated list (a flag, an environment variable, a header); an empty value counts as not
 * given (an env var set to "" in a client config).
 */
export function listValue(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean);
}

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** The tool selection from the command line, falling back to the spec's environment variables. */
function parseSelection(spec: Pick<ServerCliSpec<Record<string, FlagSpec>>, 'writes' | 'toolsets' | 'envPrefix'>, values: Record<string, unknown>): ToolSelection {
  const env = (name: string): string | undefined => (spec.envPrefix ? process.env[`${spec.envPrefix}_${name}`] : undefined);
  const selection: ToolSelection = {};
  if (spec.writes === 'writes') selection.readOnly = values['read-only'] === true || truthy(env('READ_ONLY'));
  else if (spec.writes === 'read-only') selection.readOnly = !(values['allow-write'] === true || truthy(env('ALLOW_WRITE')));
  else selection.readOnly = false;
  if (spec.toolsets?.length) {
    const toolsets = listValue((values.toolsets as string | undefined) ?? env('TOOLSETS'));
    const tools = listValue((values.tools as string | undefined) ?? env('TOOLS'));
    if (toolsets !== undefined) {
      const known = new Set(['all', 'default', ...spec.toolsets.map((t) => t.name)]);
      const unknown = toolsets.filter((t) => !known.has(t));
      if (unknown.length > 0) throw new UsageError(`Unknown toolset${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. Available: ${spec.toolsets.map((t) => t.name).join(', ')}, all, default.`);
      selection.toolsets = toolsets;
    }
    if (tools !== undefined) selection.tools = tools;
    selection.dynamic = values['dynamic-toolsets'] === true || truthy(env('DYNAMIC_TOOLSETS'));
  }
  return selection;
}

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
    ...Object.entries(selectionFlags(spec)).map(([n, f]) => line(n, f)),
    ...Object.entries(spec.flags).map(([n, f]) => line(n, f)),
    ...Object.entries(COMMON_FLAGS)
      .filter(([n]) => !(spec.sessionCredentials && n === 'auth-token'))
      .map(([n, f]) => line(n, f)),
  ];
  const environment = [...(spec.environment ?? []), ...selectionEnvironment(spec)];
  if (environment.length > 0) {
    parts.push('', 'Environment:', ...environment.map((e) => `  ${e.name.padEnd(34)} ${e.description}`));
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
      options: { ...COMMON_FLAGS, ...selectionFlags(spec), ...spec.flags } as ParseArgsConfig['options'],
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    return usageExit(spec.bin, parseArgsMessage(error));
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
  let relay: { close(): Promise<void> } | undefined;
  let sessionDirectory: RedisSessionDirectory | undefined;
  /** With --redis-url: how to keep users' secrets in Redis (loaded with the other Redis modules). */
  let redisSecrets: ((namespace: string, sealer: SecretSealer) => SecretStore) | undefined;
  let prepared: PreparedServer | undefined;
  let telemetry: RunningTelemetry | undefined;
  /** How long an HTTP server drains before it closes (--drain-seconds); 0 over stdio. */
  let drainMs = 0;
  let drain: (() => void) | undefined;
  /** Ends the drain now: set while the drain runs. */
  let endDrain: (() => void) | undefined;
  let stopping = false;
  async function shutdown(reason: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    if (drainMs > 0 && drain) {
      // Load balancers see /readyz fail and stop sending work here; until they have, what they
      // still send is served as ever. Nothing can hang here: the drain is a timer.
      drain();
      process.stderr.write(`${spec.bin} draining for ${drainMs / 1000} s (/readyz answers 503, requests are still served); ${reason} again stops at once\n`);
      log.info(`draining: ${reason}`, { seconds: drainMs / 1000 });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs);
        endDrain = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      endDrain = undefined;
    }
    log.info(`shutting down: ${reason}`);
    // Whatever hangs (a stuck query, a watcher), the process is gone within a second.
    setTimeout(() => process.exit(0), 900).unref();
    await running?.close().catch(() => undefined);
    await prepared?.close?.().catch(() => undefined);
    await relay?.close().catch(() => undefined);
    // The spans of the last calls go out before the process does.
    await telemetry?.shutdown().catch(() => undefined);
    // Children the server's own close did not stop (a git call in flight) go now, and are reaped
    // before we exit rather than left to init.
    await terminateAllProcesses(300);
    // A temporary file whose create is still on the thread pool would land after the exit hook's removals.
    await tempCreatesSettled(200);
    process.exit(0);
  }
  // Installed before prepare: a signal while the domain starts (children spawned, a connection
  // opening) still shuts down cleanly instead of killing the process with its children left over.
  // A second signal while draining ends the drain; while closing it changes nothing (closing is
  // bounded by the timer above), and the process keeps its handler so the signal cannot kill it
  // with its children left over.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (!stopping) void shutdown(signal);
    else if (endDrain) {
      log.info(`${signal} while draining: stopping now`);
      endDrain();
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
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
    const drainFlag = values['drain-seconds'] as string | undefined;
    if (!http && drainFlag !== undefined) throw new UsageError('--drain-seconds only applies with --http: a stdio server has no load balancer to drain from.');
    // The variable may be set for a whole deployment: over stdio it is not an error, only unused.
    const drainSeconds = http ? integerFlag(drainFlag ?? nonEmpty(process.env.MCP_DRAIN_SECONDS), 'drain-seconds', 5, { min: 0, max: 600 }) : 0;
    const idleSeconds = integerFlag(values['session-timeout'] as string | undefined, 'session-timeout', 1800, { min: 1 });
    const maxMessageFlag = values['max-message-bytes'] as string | undefined;
    const maxMessageBytes = integerFlag(maxMessageFlag, 'max-message-bytes', DEFAULT_MAX_MESSAGE_BYTES, { min: 1024, max: MAX_MESSAGE_BYTES_CEILING });
    const maxSessions = integerFlag(values['max-sessions'] as string | undefined, 'max-sessions', 100, { min: 1, max: 100_000 });
    const maxListenStreams = integerFlag(values['max-listen-streams'] as string | undefined, 'max-listen-streams', maxSessions, { min: 1, max: 100_000 });
    const metricsPortFlag = values['metrics-port'] as string | undefined;
    const metricsPort = metricsPortFlag === undefined ? undefined : integerFlag(metricsPortFlag, 'metrics-port', 0, { min: 0, max: 65535 });
    const plan = telemetryPlan(process.env, { ...(metricsPort !== undefined ? { port: metricsPort } : {}), ...(http && values.host !== undefined ? { host: values.host as string } : {}) });
    telemetry = await startTelemetry(plan, { name: spec.bin, version: spec.version }, log);
    const selection = parseSelection(spec, values);
    const stateKey = await requestStateKey(values['request-state-key-file'] as string | undefined);
    configureRequestState(stateKey);
    const taskAfterMs = integerFlag((values['task-after-ms'] as string | undefined) ?? process.env.MCP_TASK_AFTER_MS, 'task-after-ms', 3000, { min: 0, max: 3_600_000 });
    const taskTtlMs = integerFlag((values['task-ttl'] as string | undefined) ?? process.env.MCP_TASK_TTL, 'task-ttl', 3600, { min: 1, max: 7 * 86_400 }) * 1000;
    let taskStore: TaskStore | undefined;
    const redisUrl = (values['redis-url'] as string | undefined) ?? process.env.MCP_REDIS_URL;
    if (redisUrl !== undefined && !http) throw new UsageError('--redis-url (MCP_REDIS_URL) joins HTTP replicas; it applies only with --http.');
    if (redisUrl !== undefined) {
      const [{ RedisLink }, { RedisChangeRelay }, { RedisSessionDirectory }, { RedisSharedLimits }, { RedisSecretStore }, { RedisTaskStore }] = await Promise.all([
        import('../replicas/redis-link.js'),
        import('../replicas/redis-relay.js'),
        import('../replicas/session-directory.js'),
        import('../replicas/redis-limits.js'),
        import('../auth/redis-secret-store.js'),
        import('../tasks/redis-store.js'),
      ]);
      const prefix = (values['redis-prefix'] as string | undefined) ?? process.env.MCP_REDIS_PREFIX ?? `suite:${spec.bin.replace(/^mcp-server-/, '')}:`;
      const link = new RedisLink(redisUrl, log.child('redis'), { prefix });
      redisSecrets = (namespace, sealer) => new RedisSecretStore(link, namespace, sealer);
      const changes = new RedisChangeRelay(link);
      taskStore = new RedisTaskStore(link);
      const tasks = taskStore;
      relay = {
        close: async () => {
          await tasks.close();
          await changes.close();
          await link.close();
        },
      };
      setProcessChangeRelay(changes);
      sessionDirectory = new RedisSessionDirectory(link, idleSeconds * 1000);
      // Upstream limits (github's per token) under names keyed by the requestState key, which replicas share.
      setProcessSharedLimits(new RedisSharedLimits(link, log.child('redis'), stateKey !== undefined ? { secret: stateKey } : {}));
    }
    const taskRuntime = configureTasks({ afterMs: taskAfterMs, ttlMs: taskTtlMs, log: log.child('tasks'), ...(taskStore ? { store: taskStore } : {}) });
    const closeRelay = relay;
    relay = {
      close: async () => {
        await taskRuntime.close();
        await closeRelay?.close();
      },
    };

    const oauthIssuer = nonEmpty((values['auth-issuer'] as string | undefined) ?? process.env.MCP_AUTH_ISSUER);
    const httpInfo: HttpServiceInfo | undefined = http
      ? {
          oauthPublicUrl: oauthIssuer !== undefined ? nonEmpty((values['public-url'] as string | undefined) ?? process.env.MCP_PUBLIC_URL) : undefined,
          replicated: redisSecrets !== undefined,
          secretStore: (namespace, key) => (redisSecrets ? redisSecrets(namespace, new SecretSealer(key)) : new MemorySecretStore(new SecretSealer(key))),
        }
      : undefined;
    prepared = await spec.prepare({ flags: values as FlagValues<F>, positionals, selection, ...(httpInfo ? { http: httpInfo } : {}) }, log);

    // Sessions are built on demand (at the client's first message); build one now so a bad --tools
    // stops the start, not the first client.
    const check = await prepared.createSession({ id: 'startup-check', transport: 'memory' });
    try {
      check.checkSelection();
    } finally {
      await check.close();
    }

    const oauth = await oauthMode(spec, values, http, selection.readOnly === true, log, prepared);
    if (http) {
      guardStdout();
      const authToken = (values['auth-token'] as string | undefined) ?? process.env.MCP_AUTH_TOKEN;
      if (authToken && prepared.authenticate) {
        throw new UsageError('--auth-token (MCP_AUTH_TOKEN) does not apply to this server: each HTTP session brings its own token.');
      }
      if (authToken && oauth) throw new UsageError('--auth-token (MCP_AUTH_TOKEN) and --auth-issuer (MCP_AUTH_ISSUER) exclude each other: choose one.');
      const served = await serveHttp(prepared.createSession, {
        port,
        host: (values.host as string | undefined) ?? '127.0.0.1',
        ...(authToken ? { authToken } : {}),
        ...(prepared.authenticate ? { authenticate: prepared.authenticate } : {}),
        ...(oauth ? { oauth } : {}),
        ...(prepared.routes?.length ? { routes: prepared.routes } : {}),
        maxSessions,
        maxListenStreams,
        // Clients reach an OAuth server at its public URL, through whatever proxy: that Host is ours.
        allowedHosts: [...((values['allowed-host'] as string[] | undefined) ?? []), ...(oauth ? [oauth.publicHost] : [])],
        allowedOrigins: (values['allowed-origin'] as string[] | undefined) ?? [],
        idleTimeoutMs: idleSeconds * 1000,
        ...(sessionDirectory ? { replicas: sessionDirectory } : {}),
        ...(maxMessageFlag !== undefined ? { maxBodyBytes: maxMessageBytes } : {}),
        log,
      });
      running = served;
      drainMs = drainSeconds * 1000;
      drain = () => served.drain();
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

}

/**
 * OAuth mode from --auth-issuer and --public-url (or their variables): the authorization server's
 * metadata is read and checked now, so a misconfigured server does not start. Undefined when off.
 */
async function oauthMode(
  spec: Pick<ServerCliSpec<Record<string, FlagSpec>>, 'bin' | 'writes' | 'description'>,
  values: Record<string, unknown>,
  http: boolean,
  readOnly: boolean,
  log: Logger,
  prepared: PreparedServer,
): Promise<ProtectedResource | undefined> {
  const issuer = nonEmpty((values['auth-issuer'] as string | undefined) ?? process.env.MCP_AUTH_ISSUER);
  const publicUrl = nonEmpty((values['public-url'] as string | undefined) ?? process.env.MCP_PUBLIC_URL);
  const introspectionId = nonEmpty((values['auth-introspection-client-id'] as string | undefined) ?? process.env.MCP_AUTH_INTROSPECTION_CLIENT_ID);
  if (issuer === undefined) {
    if (publicUrl !== undefined || introspectionId !== undefined) throw new UsageError('--public-url and --auth-introspection-client-id belong to OAuth mode: give --auth-issuer (MCP_AUTH_ISSUER) too.');
    return undefined;
  }
  if (!http) throw new UsageError('--auth-issuer (MCP_AUTH_ISSUER) applies only with --http; stdio needs no authorization.');
  if (publicUrl === undefined) throw new UsageError('--auth-issuer needs --public-url (MCP_PUBLIC_URL): the URL clients use for this endpoint, which tokens must be issued for.');
  if (prepared.authenticate) throw new UsageError('This server takes each user\'s own upstream token over HTTP; OAuth mode (--auth-issuer) is not available for it yet.');
  const secret = process.env.MCP_AUTH_INTROSPECTION_CLIENT_SECRET;
  if (introspectionId !== undefined && !secret) throw new UsageError('--auth-introspection-client-id needs the client secret in MCP_AUTH_INTROSPECTION_CLIENT_SECRET.');
  const [{ ProtectedResource, AuthorizationServerError }, { serverScopes }] = await Promise.all([import('../auth/protected-resource.js'), import('../auth/scopes.js')]);
  const name = spec.bin.replace(/^mcp-server-/, '');
  try {
    const resource = await ProtectedResource.start({
      issuer,
      publicUrl,
      scopes: serverScopes(name, spec.writes !== undefined && !readOnly),
      resourceName: spec.bin,
      ...(introspectionId !== undefined ? { introspection: { clientId: introspectionId, clientSecret: secret! } } : {}),
    });
    log.info(`OAuth mode: tokens from ${issuer} for ${publicUrl}`);
    return resource;
  } catch (error) {
    if (error instanceof AuthorizationServerError) throw new UsageError(error.message);
    throw error;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** The requestState key from --request-state-key-file or MCP_REQUEST_STATE_KEY; undefined for a random one. */
async function requestStateKey(file: string | undefined): Promise<string | undefined> {
  let key = process.env.MCP_REQUEST_STATE_KEY;
  if (file !== undefined) {
    try {
      key = (await readFile(file, 'utf8')).trim();
    } catch (error) {
      throw new UsageError(`--request-state-key-file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }
  if (key !== undefined && Buffer.byteLength(key, 'utf8') < 32) {
    throw new UsageError('The requestState key (--request-state-key-file or MCP_REQUEST_STATE_KEY) must be at least 32 bytes long.');
  }
  return key;
}

/** parseArgs's complaint in our words: its unknown-option hint ends on an unbalanced quote. */
function parseArgsMessage(error: unknown): string {
  const { code, message } = error as { code?: unknown; message: string };
  const option = code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? /'([^']+)'/.exec(message)?.[1] : undefined;
  return option ? `Unknown option '${option}' (a value that starts with '-' goes after '--').` : message;
}

function usageExit(bin: string, message: string): void {
  process.stderr.write(`${bin}: ${message}\nRun '${bin} --help' for usage.\n`);
  process.exit(2);
}
