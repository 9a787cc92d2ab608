import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isInitializeRequest, type JSONRPCMessage, type McpHandlerRequestOptions, type WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { authFrom, type AuthInfo, type SessionInfo } from '../server/context.js';
import { ListenBridge, listenFilterOf } from '../changes/listen.js';
import { TASK_STATUS_NOTIFICATION, listenDeclaresTasks, listenTaskIds, type TaskFollower } from '../tasks/notifications.js';
import { MISSING_REQUIRED_CLIENT_CAPABILITY, TASKS_EXTENSION } from '../tasks/runtime.js';
import { withTaskNotifications, type TaskListen } from './task-listen.js';
import type { Logger } from '../core/logging.js';
import { MemoryReleaser } from './memory.js';
import type { SuiteServer } from '../server/server.js';
import { SseServerTransport } from './sse.js';
import { UNAVAILABLE } from '../replicas/redis-link.js';
import { SessionTransport, replicaOfAnswer } from './session-transport.js';
import { GET_STREAM, type RedisSessionDirectory, type Routed, type SessionNews, type SessionRecord } from '../replicas/session-directory.js';
import { StdioTransport, type StdioTransportOptions } from './stdio.js';
import { bindingOf, oauthGrantOf } from '../auth/principal.js';
import type { ProtectedResource, Refusal } from '../auth/protected-resource.js';
import { MAX_JSON_NESTING, nestsDeeperThan, tooDeepError } from './json-nesting.js';

/**
 * Builds the server for one session. Give `session` to the SuiteServer (its `session` option): it
 * carries the session's identity and, over HTTP, the credentials it was opened with. Building must
 * be cheap and touch nothing outside the process: the CLI builds one at start-up to check the
 * tool selection.
 */
export type SessionFactory = (session: SessionInfo) => SuiteServer | Promise<SuiteServer>;

/**
 * Decides what a bearer token (or its absence) is worth: the session's credentials, or null to
 * answer 401. Used for servers where every remote user brings their own token (a GitHub token).
 */
export type Authenticator = (bearerToken: string | undefined) => AuthInfo | null | Promise<AuthInfo | null>;

/**
 * An HTTP route a server adds beside MCP's (an upstream's OAuth callback, say): public, answered
 * after the Host check and before Origin and credentials, since a browser reaches it by redirect.
 * The handler owns the whole answer, and must not echo what it was sent.
 */
export interface HttpRoute {
  method: 'GET' | 'POST';
  /** The exact path, e.g. /oauth/callback/github; never /mcp, /sse, /messages, /healthz or /readyz. */
  path: string;
  handle(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void>;
}

export interface RunningTransport {
  close(): Promise<void>;
}

/**
 * Serves stdin/stdout in both protocol eras: the SDK reads the opening exchange (initialize, or a
 * 2026-07-28 request such as server/discover) and pins the connection to one instance from the
 * factory. Our transport keeps its bounds on message size; listen streams are followed here.
 */
export async function serveStdio(factory: SessionFactory, options: StdioTransportOptions = {}): Promise<RunningTransport & { current(): SuiteServer | undefined }> {
  const [{ serveStdio: serveSdkStdio }, { PROTOCOL_VERSION_META_KEY, SUBSCRIPTION_ID_META_KEY }] = await Promise.all([import('@modelcontextprotocol/server/stdio'), import('@modelcontextprotocol/server')]);
  const transport = new StdioTransport(options);
  let current: SuiteServer | undefined;
  let era: 'modern' | 'legacy' | undefined;
  // A listen request may open the connection (a 2026-07-28 client sends nothing before its first
  // request), before the SDK has built the instance: the server and its 2026-07-28 instance are
  // built here then (its sources follow as that era's do), and the SDK's factory takes them.
  type Built = { server: SuiteServer; instance: ReturnType<SuiteServer['instance']> };
  let early: Promise<Built> | undefined;
  const build = (): Promise<SuiteServer> => Promise.resolve(factory({ id: randomUUID(), transport: 'stdio' }));
  const serverForListen = async (): Promise<SuiteServer> => {
    if (current) return current;
    early ??= build().then((server) => ({ server, instance: server.instance('modern') }));
    return (await early).server;
  };
  // Listen streams by request id: what each follows, so that cancelling one (or the SDK refusing it) releases it.
  const listens = new Map<string | number, Promise<{ server: SuiteServer; uris: string[] }>>();
  const release = (id: string | number): void => {
    const followed = listens.get(id);
    if (!followed) return;
    listens.delete(id);
    void followed.then(({ server, uris }) => server.unlisten(uris)).catch(() => undefined);
  };
  // Listen streams following tasks (`notifications.taskIds`), by request id: the SDK's router knows
  // only its four change kinds, so their acknowledgement is completed and their notifications sent here.
  const taskListens = new Map<string | number, { follower: TaskFollower; taskIds: string[] }>();
  const releaseTasks = (id: string | number): void => {
    taskListens.get(id)?.follower.close();
    taskListens.delete(id);
  };
  const followTasks = async (id: string | number, taskIds: string[]): Promise<void> => {
    const server = await serverForListen();
    const follower = server.followTasks((params) => {
      if (!taskListens.has(id)) return;
      const note = { jsonrpc: '2.0' as const, method: TASK_STATUS_NOTIFICATION, params: { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: id } } };
      transport.send(note as JSONRPCMessage).catch(() => undefined);
    });
    taskListens.set(id, { follower, taskIds: [] });
    const kept = await follower.follow(taskIds);
    const entry = taskListens.get(id);
    if (entry) entry.taskIds = kept;
    else follower.close();
  };
  transport.intercept = (message: JSONRPCMessage): JSONRPCMessage | undefined | Promise<JSONRPCMessage | undefined> => {
    if (!('method' in message)) return message;
    if (message.method === 'subscriptions/listen' && 'id' in message) {
      const uris = listenFilterOf(message.params)?.resourceSubscriptions ?? [];
      const taskIds = listenTaskIds(message.params);
      const claim = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta?.[PROTOCOL_VERSION_META_KEY];
      // Only a 2026-07-28 connection has listen streams; a 2025 session's stray listen is the SDK's to refuse.
      if ((uris.length === 0 && !taskIds) || era === 'legacy' || claim === undefined) return message;
      if (taskIds && !listenDeclaresTasks(message.params)) {
        void transport.send(missingTasksOnListen(message.id)).catch(() => undefined);
        return undefined;
      }
      const tasksFollowed = taskIds ? followTasks(message.id, taskIds) : Promise.resolve();
      const followed = uris.length > 0 ? serverForListen().then(async (server) => ({ server, uris: await server.listen(uris) })) : undefined;
      if (followed) listens.set(message.id, followed);
      // The SDK acknowledges the stream once it has the request: only after every source is armed,
      // and naming only the resources really followed.
      return Promise.all([followed, tasksFollowed]).then(([resources]) => (resources ? narrowListen(message, resources.uris) : message));
    }
    if (message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) {
        release(id);
        releaseTasks(id);
      }
    }
    return message;
  };
  // The SDK refuses a listen it cannot serve (a bad envelope, a full router) with an error answer.
  transport.observeSent = (message: JSONRPCMessage) => {
    if ('error' in message && message.id !== undefined && message.id !== null) {
      release(message.id);
      releaseTasks(message.id);
      return;
    }
    // A graceful end of a stream (the SDK's teardown on close) ends its task notifications too.
    if ('result' in message && message.id !== undefined && message.id !== null) {
      releaseTasks(message.id);
      return;
    }
    if (!('method' in message) || message.method !== 'notifications/subscriptions/acknowledged') return;
    const params = (message.params ?? {}) as { notifications?: Record<string, unknown>; _meta?: Record<string, unknown> };
    const id = params._meta?.[SUBSCRIPTION_ID_META_KEY] as string | number | undefined;
    const entry = id === undefined ? undefined : taskListens.get(id);
    if (!entry) return;
    // Each followed task's state goes out right after the acknowledgement that names it.
    setImmediate(() => entry.follower.start());
    return { ...message, params: { ...params, notifications: { ...params.notifications, taskIds: entry.taskIds } } };
  };
  const handle = serveSdkStdio(
    async ({ era: pinned }) => {
      const taken = early;
      early = undefined;
      if (taken) {
        const built = await taken;
        if (pinned === 'modern') {
          current = built.server;
          era = pinned;
          return built.instance;
        }
        await built.server.close();
      }
      const server = await build();
      current = server;
      era = pinned;
      return server.instance(pinned);
    },
    { transport, onerror: (error) => options.log?.private('warning', `stdio: ${error.message}`) },
  );
  return {
    current: () => current,
    close: async () => {
      for (const id of [...taskListens.keys()]) releaseTasks(id);
      await handle.close();
      await current?.close();
      const orphan = early;
      early = undefined;
      if (orphan) await (await orphan).server.close();
    },
  };
}

/** The answer to a listen request that asks for task notifications without declaring the tasks extension. */
function missingTasksOnListen(id: string | number): JSONRPCMessage {
  return {
    jsonrpc: '2.0',
    id,
    error: {
      code: MISSING_REQUIRED_CLIENT_CAPABILITY,
      message: `Task status notifications (notifications.taskIds) need the ${TASKS_EXTENSION} extension: declare it in the client's capabilities.`,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    },
  };
}

/**
 * A listen request as the SDK should acknowledge it: its resource subscriptions narrowed to those
 * followed (a URI the server does not have, or refuses, is left out of the acknowledgement).
 */
function narrowListen<M extends JSONRPCMessage>(message: M, followed: readonly string[]): M {
  const params = (message as { params?: Record<string, unknown> }).params ?? {};
  const notifications = { ...(params.notifications as Record<string, unknown>) };
  if (followed.length > 0) notifications.resourceSubscriptions = [...followed];
  else delete notifications.resourceSubscriptions;
  return { ...message, params: { ...params, notifications } };
}

export interface HttpOptions {
  port: number;
  host: string;
  /** One bearer token every client must present (a gate); compared in constant time. */
  authToken?: string;
  /**
   * Per-session credentials instead of one gate: every request's bearer token goes through this,
   * and a session stays bound to the token it was opened with. Exclusive with `authToken`.
   */
  authenticate?: Authenticator;
  /** Most sessions open at once; past it, new sessions get 503 with Retry-After (default 100). */
  maxSessions?: number;
  /**
   * Most 2026-07-28 `subscriptions/listen` streams open at once on this replica, whatever they follow
   * (resources, list changes, nothing); past it a new one gets 503 with Retry-After (default: maxSessions).
   */
  maxListenStreams?: number;
  /** Extra Host header values to accept (host or host:port). */
  allowedHosts?: string[];
  /** Extra Origin values to accept (scheme://host[:port]); loopback origins are always accepted. */
  allowedOrigins?: string[];
  /** A session with no request for this long is closed. */
  idleTimeoutMs?: number;
  /** Largest JSON body accepted. */
  maxBodyBytes?: number;
  /**
   * Most request-body bytes held at once, all requests together (default 64 MiB, 16 bodies of the
   * largest size). A request whose declared length (or whose bytes so far, without one) would pass
   * it is answered 503 with Retry-After at once, before its body is read.
   */
  maxBodyBytesInFlight?: number;
  /** How long a request body may take to arrive, from its headers to its last byte (default 30 s); later: 408. */
  bodyTimeoutMs?: number;
  /**
   * After this many sessions have closed (expired or ended by their clients), run a full garbage
   * collection once they have all gone, at most every 10 s, so the memory they held goes back to
   * the system instead of waiting for allocation to trigger V8 (default 25; 0 never).
   */
  releaseMemoryAfter?: number;
  /**
   * Replicas sharing 2025-era sessions through Redis: a session opened here continues on any
   * replica, `maxSessions` counts every replica's sessions, and a GET stream resumes elsewhere.
   */
  replicas?: RedisSessionDirectory;
  /**
   * OAuth mode: every request needs an access token for this server from its authorization server
   * (checked here), and sessions are bound to the principal. Exclusive with the static modes.
   */
  oauth?: ProtectedResource;
  /** The server's own routes besides MCP's (see HttpRoute). */
  routes?: readonly HttpRoute[];
  log: Logger;
}

export interface RunningHttp extends RunningTransport {
  url: string;
  port: number;
  sessionCount(): number;
  /**
   * Starts draining ahead of `close`: /readyz answers 503 so that load balancers take this replica
   * out, while every request (new ones too) is still served. Responses then close their
   * connection, so that kept-alive clients reconnect through the balancer to another replica.
   */
  drain(): void;
}

/** A session stays bound to the token it was opened with: its digest, or undefined without one. */
type HttpSession = { server: SuiteServer; lastSeen: number; tokenDigest: Buffer | undefined } & (
  | {
      kind: 'streamable';
      /** The client's initialize parameters: with replicas, what the session's record is rebuilt from. */
      initialize: Record<string, unknown>;
      transport: WebStandardStreamableHTTPServerTransport;
      outer: SessionTransport;
      serve: NodeMcpRequestHandler;
      serveStream: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
    }
  | { kind: 'sse'; transport: SseServerTransport }
);


const RESERVED_PATHS = new Set(['/mcp', '/sse', '/messages', '/healthz', '/readyz']);

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Streamable HTTP on /mcp plus the legacy HTTP+SSE endpoints (/sse, /messages), behind the same
 * checks: Host and Origin validation against DNS rebinding, then the optional bearer token.
 * Every session gets its own SuiteServer.
 */
/** The headers a session factory may read: one value each, no credentials. */
function sessionHeaders(req: http.IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'authorization' || name === 'proxy-authorization' || name === 'cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

export async function serveHttp(factory: SessionFactory, options: HttpOptions): Promise<RunningHttp> {
  // Loaded here, not at the top: a stdio server should not pay their start-up cost.
  const [{ toNodeHandler }, { createMcpHandler, isLegacyRequest, InMemoryServerEventBus, WebStandardStreamableHTTPServerTransport, SUBSCRIPTION_ID_META_KEY }] = await Promise.all([
    import('@modelcontextprotocol/node'),
    import('@modelcontextprotocol/server'),
  ]);
  const replicas = options.replicas;
  for (const route of options.routes ?? []) {
    if (RESERVED_PATHS.has(route.path) || !route.path.startsWith('/')) throw new Error(`route ${route.path} is MCP's own or not a path`);
  }
  if ([options.authToken, options.authenticate, options.oauth].filter(Boolean).length > 1) throw new Error('authToken, authenticate and oauth exclude each other');
  const sessions = new Map<string, HttpSession>();
  /** Sessions being set up (initialize in flight): they count against the cap too. */
  let opening = 0;
  const idleTimeoutMs = options.idleTimeoutMs ?? 30 * 60_000;
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const bodies = new BodyBudget(options.maxBodyBytesInFlight ?? 64 * 1024 * 1024, options.bodyTimeoutMs ?? 30_000);
  const maxSessions = options.maxSessions ?? 100;
  const gateDigest = options.authToken ? sha256(options.authToken) : undefined;
  const releaser = new MemoryReleaser({ afterSessions: options.releaseMemoryAfter ?? 25, log: options.log });
  let boundPort = options.port;

  // 2026-07-28 requests: each one served on its own by a fresh instance, through the SDK's handler
  // (era classification, header validation, listen streams). 2025-era traffic stays sessionful below.
  const bus = new InMemoryServerEventBus((error) => options.log.private('warning', `listen bus: ${error.message}`));
  const bridge = new ListenBridge(bus);
  const modern = createMcpHandler(
    async ({ authInfo, requestInfo }) => {
      const auth = authInfo ? authFrom(authInfo) : undefined;
      const server = await factory({ id: randomUUID(), transport: 'http', headers: requestHeaders(requestInfo), ...(auth ? { auth } : {}) });
      return server.instance('modern');
    },
    { legacy: 'reject', bus, maxRequestBodySize: maxBody, onerror: (error) => options.log.private('debug', `2026-07-28 request refused or failed: ${error.message}`) },
  );
  // A request in flight when the server closes is answered by the SDK with an empty 499 (the
  // connection closed under it): the client deserves a JSON-RPC error that says why.
  const serveModern = toNodeHandler(
    {
      fetch: async (request: Request, opts?: McpHandlerRequestOptions & { parsedBody?: unknown }) => {
        const tasks = typeof opts?.parsedBody === 'object' && opts.parsedBody !== null ? taskListens.get(opts.parsedBody) : undefined;
        if (tasks) {
          const response = await modern.fetch(request, opts);
          return withTaskNotifications(response, tasks, SUBSCRIPTION_ID_META_KEY, (end) => {
            taskStreams.add(end);
            return () => taskStreams.delete(end);
          });
        }
        const response = await modern.fetch(request, opts);
        if (response.status !== 499 || !shuttingDown) return response;
        return Response.json(shutdownError(requestIdOf(opts?.parsedBody)), { status: 503, headers: { 'Retry-After': '1' } });
      },
    },
    { maxRequestBodySize: maxBody, onerror: (error) => options.log.private('error', `HTTP request failed: ${error.stack ?? error.message}`) });
  /** Listen requests that follow tasks, by the body handed to the SDK (see followListen). */
  const taskListens = new WeakMap<object, TaskListen>();
  /** Open listen streams that carry task notifications: shutdown ends each gracefully. */
  const taskStreams = new Set<() => void>();
  let listening = 0;
  const maxListens = options.maxListenStreams ?? maxSessions;
  /** 2026-07-28 requests being served, so that shutdown can answer them itself (see close). */
  const modernInFlight = new Set<http.ServerResponse>();
  let shuttingDown = false;
  let draining = false;

  /**
   * A listen stream's change sources: a session of its own in the change hub (a server built for
   * it, never connected), alive until the stream closes. The SDK answers the stream itself, from
   * the body returned: every source is armed by then, and the body names only what is followed.
   */
  const followListen = async (req: http.IncomingMessage, res: http.ServerResponse, body: JSONRPCMessage, auth: AuthInfo | undefined): Promise<JSONRPCMessage | undefined> => {
    const params = (body as { params?: unknown }).params;
    const filter = listenFilterOf(params);
    const taskIds = listenTaskIds(params);
    const id = (body as { id?: string | number }).id;
    if (taskIds && id !== undefined && !listenDeclaresTasks(params)) {
      // In-band, as the SDK answers a missing client capability: HTTP 400 with the JSON-RPC error.
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify(missingTasksOnListen(id)));
      return undefined;
    }
    const resources = filter !== undefined && (Boolean(filter.resourceSubscriptions?.length) || filter.resourcesListChanged === true);
    if (!resources && !(taskIds && id !== undefined)) return body;
    const server = await factory({ id: `listen-${randomUUID()}`, transport: 'http', headers: sessionHeaders(req), ...(auth ? { auth } : {}) });
    res.once('close', () => void server.close());
    let served = body;
    if (resources) {
      server.followInto((event) => bridge.publish(event));
      if (filter.resourceSubscriptions?.length) served = narrowListen(body, await server.listen(filter.resourceSubscriptions));
    }
    if (taskIds && id !== undefined) {
      const listen: TaskListen = { id, taskIds: [], follower: server.followTasks((p) => listen.notify?.(p)) };
      res.once('close', () => listen.follower.close());
      listen.taskIds = await listen.follower.follow(taskIds);
      // A body of its own: the SDK's handler is handed it, and the stream is found by it.
      served = { ...served };
      taskListens.set(served, listen);
    }
    return served;
  };

  const hostAllowed = (hostHeader: string | undefined): boolean => {
    if (!hostHeader) return false;
    const host = hostHeader.toLowerCase();
    const allowed = new Set<string>();
    for (const name of [...LOOPBACK_HOSTNAMES, options.host.includes(':') ? `[${options.host}]` : options.host]) {
      allowed.add(`${name}:${boundPort}`);
      if (boundPort === 80) allowed.add(name);
    }
    for (const extra of options.allowedHosts ?? []) allowed.add(extra.toLowerCase());
    return allowed.has(host);
  };

  const originAllowed = (origin: string | undefined): boolean => {
    if (origin === undefined) return true; // Not a browser: DNS rebinding needs one.
    if ((options.allowedOrigins ?? []).includes(origin)) return true;
    try {
      const url = new URL(origin);
      return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTNAMES.has(url.hostname);
    } catch {
      return false;
    }
  };

  /** The request's credentials; null means 401. With no authentication configured, undefined. */
  const authenticate = async (header: string | undefined): Promise<AuthInfo | undefined | null> => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    if (options.authenticate) return options.authenticate(bearer);
    if (!gateDigest) return undefined;
    return bearer !== undefined && timingSafeEqual(sha256(bearer), gateDigest) ? { token: bearer, clientId: 'auth-token' } : null;
  };

  const sameToken = (session: HttpSession, auth: AuthInfo | undefined): boolean => {
    if (session.tokenDigest === undefined || auth === undefined) return session.tokenDigest === undefined && auth === undefined;
    return timingSafeEqual(session.tokenDigest, bindingOf(auth)!);
  };

  /**
   * OAuth mode, a token that may only read: the 403 for a body that calls a tool writing in
   * `server` (one the server's own selection lets through), before anything runs.
   */
  const writeRefusal = async (body: unknown, auth: AuthInfo | undefined, server: SuiteServer | (() => Promise<SuiteServer>)): Promise<Refusal | undefined> => {
    if (!options.oauth || oauthGrantOf(auth)?.canWrite !== false) return undefined;
    const calls = toolCallsIn(body);
    if (calls.length === 0) return undefined;
    // A 2026-07-28 request has no session: a server built for the check (as the request's would be) answers.
    const host = typeof server === 'function' ? await server() : server;
    try {
      return calls.some((name) => host.toolWrites(name)) ? options.oauth.insufficientForWrite() : undefined;
    } finally {
      if (typeof server === 'function') await host.close();
    }
  };

  const full = (): boolean => sessions.size + opening >= maxSessions;

  const openSession = (id: string, session: HttpSession): void => {
    sessions.set(id, session);
    options.log.info('session opened', { sessions: sessions.size });
  };

  const dropSession = async (id: string): Promise<void> => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    replicas?.forget(id);
    await session.transport.close().catch(() => undefined);
    await session.server.close();
    releaser.sessionClosed();
    options.log.info('session closed', { sessions: sessions.size });
  };

  /**
   * A 2025-era session over Streamable HTTP: the SDK's transport (behind ours when replicas share
   * sessions), served to Node through the SDK's adapter. Not yet in the session map.
   */
  const startStreamable = async (id: string, auth: AuthInfo | undefined, headers: Record<string, string>, initialize: Record<string, unknown>): Promise<HttpSession & { kind: 'streamable' }> => {
    const server = await factory({ id, transport: 'http', headers, ...(auth ? { auth } : {}) });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      ...(replicas ? { eventStore: replicas.eventStore(id), onsessionclosed: () => replicas.close(id) } : {}),
    });
    const outer = new SessionTransport(transport, id, replicas);
    const session = {
      kind: 'streamable' as const,
      initialize,
      server,
      transport,
      outer,
      serve: toNodeHandler({ fetch: (request, opts) => transport.handleRequest(request, opts) }, { maxRequestBodySize: maxBody }),
      // A GET for the session's stream: once the SDK answers 200 it has registered the stream.
      serveStream: (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
        let opened = false;
        res.once('close', () => {
          if (opened && outer.streamClosed()) replicas?.release(id);
        });
        const fetch = async (request: Request, opts?: McpHandlerRequestOptions): Promise<Response> => {
          const response = await transport.handleRequest(request, opts);
          if (response.status === 200) {
            opened = true;
            outer.streamOpened();
            replicas?.hold(id);
          }
          return response;
        };
        return toNodeHandler({ fetch }, { maxRequestBodySize: maxBody })(req, res);
      },
      lastSeen: Date.now(),
      tokenDigest: bindingOf(auth),
    };
    outer.onclose = () => void dropSession(id);
    if (replicas) server.onSessionStateChange((state) => replicas.saveState(id, state));
    await server.connect(outer);
    return session;
  };

  /**
   * A session another replica opened, taken up here: its record read from Redis, the client's
   * initialize replayed to a new copy, its state (subscriptions, log level, toolsets) restored.
   * Concurrent requests for one session wait for one copy.
   */
  const adopting = new Map<string, Promise<HttpSession | undefined>>();
  const adopt = (id: string, auth: AuthInfo | undefined, req: http.IncomingMessage): Promise<HttpSession | undefined> => {
    if (!replicas) return Promise.resolve(undefined);
    let pending = adopting.get(id);
    if (pending) return pending;
    pending = (async () => {
      const record = await replicas.find(id);
      if (record === UNAVAILABLE || record === undefined || !openedWith(record, auth)) return undefined;
      const session = await startStreamable(id, auth, sessionHeaders(req), record.initialize);
      try {
        await replayInitialize(session.transport, id, record.initialize);
      } catch (error) {
        options.log.private('warning', `could not take up session ${id}: ${(error as Error).message}`);
        await session.server.close();
        return undefined;
      }
      if (record.holder) session.outer.heldBy(record.holder);
      if (record.state) await session.server.restoreSessionState(record.state);
      openSession(id, session);
      return session;
    })().finally(() => adopting.delete(id));
    adopting.set(id, pending);
    return pending;
  };

  const stopListening = replicas?.listen(
    (news: SessionNews) => {
      const session = sessions.get(news.id);
      if (session?.kind !== 'streamable') return;
      if (news.kind === 'closed') void dropSession(news.id);
      else if (news.kind === 'state') void session.server.restoreSessionState(news.state);
      else if (news.kind === 'notified') session.outer.notified(news.message);
      else if (news.kind === 'released') session.outer.released(news.from);
      else {
        // The client opened its stream elsewhere: one it left here is stale.
        if (session.outer.holdsStream) session.transport.closeStandaloneSSEStream();
        session.outer.heldBy(news.from);
      }
    },
    (routed: Routed) => {
      const session = sessions.get(routed.id);
      if (session?.kind === 'streamable') void session.outer.deliver(routed.message).catch(() => undefined);
    },
  );

  /**
   * Redis back after an outage (or restarted empty, having forgotten every session): this replica
   * records its live sessions again, so that the shared cap counts them and other replicas can take
   * them up. Without it, a Redis restarted empty let a replica accept twice the cap.
   */
  const stopReregistering = replicas?.link.onReady(() => {
    for (const [id, session] of sessions) {
      if (session.kind !== 'streamable' || session.transport.sessionId === undefined) continue;
      void replicas.reregister(id, session.tokenDigest?.toString('hex') ?? '', session.initialize, session.server.sessionState(), session.outer.holdsStream);
    }
  });

  /** The session a request names, if it exists and the request carries the token the session was opened with. */
  const sessionFor = (id: string, kind: HttpSession['kind'], auth: AuthInfo | undefined, res: http.ServerResponse): HttpSession | undefined => {
    const session = sessions.get(id);
    if (session?.kind !== kind) {
      reject(res, 404, kind === 'streamable' ? 'Session not found. Start a new session with an initialize request.' : 'Session not found.');
      return undefined;
    }
    // Another token must not ride on a session it did not open (nor learn that it exists).
    if (!sameToken(session, auth)) {
      reject(res, 404, 'Session not found. Start a new session with an initialize request.');
      return undefined;
    }
    session.lastSeen = Date.now();
    return session;
  };

  const busyListening = (res: http.ServerResponse): void => {
    res.setHeader('Retry-After', '5');
    reject(res, 503, `Server busy: all ${maxListens} listen streams (subscriptions/listen) are open. Retry later, or close streams you no longer need.`);
  };

  const busy = (res: http.ServerResponse): void => {
    // The earliest a slot can free up without a client closing one: the idle sweep.
    res.setHeader('Retry-After', String(Math.max(1, Math.min(60, Math.ceil(idleTimeoutMs / 1000)))));
    reject(res, 503, `Server busy: all ${maxSessions} sessions are in use. Retry later, or close sessions you no longer need.`);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    // A connection kept alive past a drain would stay pinned here (a Kubernetes Service sends a
    // connection's requests to the pod it first reached): each answer closes it instead.
    if (draining) res.shouldKeepAlive = false;
    // A load balancer's health check (haproxy sends no Host header): says nothing but that this
    // replica answers, so it needs no Host, Origin or token.
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end('{"status":"ok"}');
      return;
    }
    // Whether a load balancer should send this replica new work: not while it drains (shutting
    // down), nor while the Redis its sessions live in is out of reach.
    if (req.method === 'GET' && req.url === '/readyz') {
      const why = draining || shuttingDown ? 'draining' : replicas && !replicas.link.ready ? 'redis unreachable' : undefined;
      res.writeHead(why ? 503 : 200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
      res.end(JSON.stringify(why ? { status: 'unavailable', reason: why } : { status: 'ok' }));
      return;
    }
    if (!hostAllowed(req.headers.host)) return reject(res, 403, 'Forbidden: Host header not allowed.');
    const url = new URL(req.url ?? '/', 'http://localhost');
    // OAuth mode's Protected Resource Metadata: public, for any origin (browser-based clients read it).
    if (options.oauth?.metadataPaths.has(url.pathname) && (req.method === 'GET' || req.method === 'OPTIONS')) {
      res.writeHead(req.method === 'GET' ? 200 : 204, { 'Content-Type': 'application/json', 'Cache-Control': 'max-age=300', 'Access-Control-Allow-Origin': '*', 'Access-Control-Allow-Methods': 'GET, OPTIONS', 'Access-Control-Allow-Headers': 'mcp-protocol-version' });
      res.end(req.method === 'GET' ? JSON.stringify(options.oauth.metadata) : undefined);
      return;
    }
    const route = options.routes?.find((r) => r.path === url.pathname && r.method === req.method);
    if (route) return route.handle(req, res, url);
    if (!originAllowed(req.headers.origin)) return reject(res, 403, 'Forbidden: Origin not allowed.');
    let auth: AuthInfo | undefined;
    if (options.oauth) {
      const outcome = await options.oauth.authenticate(headerValue(req.headers.authorization), url);
      if ('refuse' in outcome) {
        // The reason, never the token: what an operator needs to see why a client cannot get in.
        if (headerValue(req.headers.authorization) !== undefined) options.log.private('debug', `OAuth: ${outcome.refuse.status} ${outcome.refuse.body.error}: ${outcome.refuse.body.error_description}`);
        return refuse(res, outcome.refuse);
      }
      auth = outcome.auth;
    } else {
      const found = await authenticate(req.headers.authorization);
      if (found === null) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        return reject(res, 401, 'Unauthorized: a valid bearer token is required.');
      }
      auth = found;
    }
    // The SDK hands req.auth to every handler as extra.authInfo.
    if (auth) (req as http.IncomingMessage & { auth?: AuthInfo & { clientId: string; scopes: string[] } }).auth = { clientId: '', scopes: [], ...auth };

    if (url.pathname === '/mcp') {
      const sessionId = headerValue(req.headers['mcp-session-id']);
      const body = req.method === 'POST' ? await readJson(req, maxBody, bodies).catch((e: Error) => e) : undefined;
      if (body instanceof Error) return refuseBody(req, res, body, maxBody, bodies, releaser);
      if (nestsDeeperThan(body, MAX_JSON_NESTING)) return rejectTooDeep(res, body);
      const modernRequest = req.method === 'POST' && body !== undefined && !(await isLegacyRequest(probeRequest(req), body, { maxRequestBodySize: maxBody }));
      if (sessionId && modernRequest) {
        // A session belongs to the 2025 protocol: serving this under it, or pointing at initialize, would mislead.
        return reject(
          res,
          400,
          'Bad request: this is a 2026-07-28 request (its _meta names protocol version 2026-07-28), and 2026-07-28 requests carry no session. ' +
            'Send it without the Mcp-Session-Id header; sessions belong to 2025-11-25 clients, which open them with initialize.',
          requestIdOf(body),
        );
      }
      if (sessionId) {
        if (replicas && !sessions.has(sessionId)) {
          // A client's answer to another replica's request goes there, without a copy of the session here.
          const answers = answersFor(body);
          const record = answers ? await replicas.find(sessionId) : undefined;
          if (answers && record && record !== UNAVAILABLE && openedWith(record, auth)) {
            for (const answer of answers) replicas.route(replicaOfAnswer(answer)!, { id: sessionId, message: answer });
            res.writeHead(202).end();
            return;
          }
          await adopt(sessionId, auth, req);
        }
        const session = sessionFor(sessionId, 'streamable', auth, res);
        if (session?.kind !== 'streamable') return;
        const refusal = await writeRefusal(body, auth, session.server);
        if (refusal) return refuse(res, refusal);
        replicas?.touch(sessionId);
        return req.method === 'GET' && isGetStream(req) ? session.serveStream(req, res) : session.serve(req, res, body);
      }
      if (modernRequest) {
        const refusal = await writeRefusal(body, auth, async () => factory({ id: `scope-check-${randomUUID()}`, transport: 'memory', headers: sessionHeaders(req), ...(auth ? { auth } : {}) }));
        if (refusal) return refuse(res, refusal);
        const isListen = (body as { method?: unknown }).method === 'subscriptions/listen';
        if (isListen) {
          // Every stream counts, whatever it follows: one of list changes only holds a connection too.
          if (listening >= maxListens) return busyListening(res);
          listening += 1;
          res.once('close', () => (listening -= 1));
        }
        if (shuttingDown) return reject(res, 503, 'The server is shutting down; retry in a moment (another replica may answer).', requestIdOf(body));
        const served = isListen ? await followListen(req, res, body as JSONRPCMessage, auth) : body;
        if (served === undefined) return;
        modernInFlight.add(res);
        res.once('close', () => modernInFlight.delete(res));
        return serveModern(req, res, served);
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return reject(res, 400, 'Bad request: no session id; the first request must be initialize (2025-11-25 and earlier), or every request must carry its protocol version in _meta (2026-07-28).');
      }
      const id = randomUUID();
      // With replicas the cap counts every replica's sessions, in Redis; without Redis, this one's.
      const recorded = replicas ? await replicas.open(id, bindingOf(auth)?.toString('hex') ?? '', initializeParams(body), maxSessions) : UNAVAILABLE;
      if (recorded === false || (recorded === UNAVAILABLE && full())) return busy(res);
      opening += 1;
      try {
        const session = await startStreamable(id, auth, sessionHeaders(req), initializeParams(body));
        openSession(id, session);
        await session.serve(req, res, body);
        // An initialize that failed leaves a session no client can use: release it now.
        if (session.transport.sessionId === undefined) {
          await dropSession(id);
          if (recorded === true) await replicas?.close(id);
        }
      } finally {
        opening -= 1;
      }
      return;
    }

    if (url.pathname === '/sse' && req.method === 'GET') {
      if (full()) return busy(res);
      const transport = new SseServerTransport('/messages', res);
      const id = transport.sessionId;
      const server = await factory({ id, transport: 'sse', headers: sessionHeaders(req), ...(auth ? { auth } : {}) });
      openSession(id, { kind: 'sse', server, transport, lastSeen: Date.now(), tokenDigest: bindingOf(auth) });
      transport.onclose = () => void dropSession(id);
      await server.connect(transport);
      return;
    }

    if (url.pathname === '/messages' && req.method === 'POST') {
      const id = url.searchParams.get('sessionId') ?? '';
      const session = sessionFor(id, 'sse', auth, res);
      if (session?.kind !== 'sse') return;
      const body = await readJson(req, maxBody, bodies).catch((e: Error) => e);
      if (body instanceof Error) return refuseBody(req, res, body, maxBody, bodies, releaser);
      if (nestsDeeperThan(body, MAX_JSON_NESTING)) return rejectTooDeep(res, body);
      const refusal = await writeRefusal(body, auth, session.server);
      if (refusal) return refuse(res, refusal);
      return session.transport.handlePost(body, res, auth);
    }

    return reject(res, 404, 'Not found. MCP is served at /mcp (Streamable HTTP) and /sse (legacy HTTP+SSE).');
  };

  const httpServer = http.createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.log.private('error', `HTTP request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) reject(res, 500, 'Internal server error.');
      else res.end();
    });
  });

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        // An open stream is a client listening: its session is in use although it sends nothing.
        if ((session.kind === 'streamable' && session.outer.holdsStream) || session.kind === 'sse') {
          session.lastSeen = now;
          replicas?.touch(id);
          continue;
        }
        if (now - session.lastSeen > idleTimeoutMs) void dropSession(id);
      }
    },
    Math.max(50, Math.min(60_000, Math.floor(idleTimeoutMs / 4))),
  );
  sweeper.unref();

  // Node's own limit on receiving a request (300 s by default) only backs up the body deadline.
  httpServer.requestTimeout = bodies.timeoutMs + 10_000;

  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(options.port, options.host, () => resolve());
  });
  boundPort = (httpServer.address() as AddressInfo).port;
  const hostForUrl = options.host.includes(':') ? `[${options.host}]` : options.host;
  options.log.info(`listening on http://${hostForUrl}:${boundPort}/mcp`);

  return {
    url: `http://${hostForUrl}:${boundPort}/mcp`,
    port: boundPort,
    sessionCount: () => sessions.size,
    drain() {
      if (draining) return;
      // Idle kept-alive connections are not closed here: a balancer or client may be sending on one at
      // this very moment, and would see the connection drop (a drain test saw one "fetch failed"). Each
      // answer from now on closes its connection (shouldKeepAlive above); the close ends the rest.
      draining = true;
    },
    async close() {
      clearInterval(sweeper);
      stopListening?.();
      stopReregistering?.();
      shuttingDown = true;
      for (const end of [...taskStreams]) end();
      await modern.close();
      // The calls modern.close() cut are being answered (a JSON-RPC error each): let the answers go out.
      await Promise.race([
        Promise.all([...modernInFlight].map((res) => new Promise<void>((resolve) => (res.writableFinished || res.destroyed ? resolve() : res.once('close', () => resolve()))))),
        new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
      ]);
      // 2025 sessions' calls still running get the same answer on their streams before the sessions go.
      await Promise.all(
        [...sessions.values()].map((session) => (session.kind === 'streamable' ? session.outer.answerInFlight(SHUTTING_DOWN) : undefined)),
      );
      releaser.stop();
      await Promise.all([...sessions.keys()].map(dropSession));
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

/**
 * Replays a session's initialize (and the client's initialized) to a new copy of it, through the
 * SDK's own transport: the copy then knows the client's capabilities and version as the first did.
 */
async function replayInitialize(transport: WebStandardStreamableHTTPServerTransport, id: string, params: Record<string, unknown>): Promise<void> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const post = (body: unknown, extra: Record<string, string> = {}): Promise<Response> =>
    transport.handleRequest(new Request('http://replica.invalid/mcp', { method: 'POST', headers: { ...headers, ...extra }, body: JSON.stringify(body) }));
  const answer = await (await post({ jsonrpc: '2.0', id: 'replica-initialize', method: 'initialize', params })).text();
  const version = /"protocolVersion":"([^"]+)"/.exec(answer)?.[1];
  if (!version) throw new Error('the replayed initialize was refused');
  const initialized = await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': id, 'mcp-protocol-version': version });
  if (initialized.status !== 202) throw new Error(`the replayed initialized notification was refused (${initialized.status})`);
}

/** Whether a request's credentials are those the session was opened with (on whichever replica). */
function openedWith(record: SessionRecord, auth: AuthInfo | undefined): boolean {
  const recorded = record.tokenDigest ? Buffer.from(record.tokenDigest, 'hex') : undefined;
  const digest = bindingOf(auth);
  if (!recorded || !digest) return recorded === digest;
  return recorded.length === digest.length && timingSafeEqual(recorded, digest);
}

/** The body's messages when it holds nothing but answers to other replicas' requests. */
function answersFor(body: unknown): JSONRPCMessage[] | undefined {
  const messages = (Array.isArray(body) ? body : [body]) as JSONRPCMessage[];
  return messages.length > 0 && messages.every((m) => m && typeof m === 'object' && replicaOfAnswer(m) !== undefined) ? messages : undefined;
}

/** A GET for the session's own stream, not a resumption of a POST's stream. */
function isGetStream(req: http.IncomingMessage): boolean {
  const last = headerValue(req.headers['last-event-id']);
  return last === undefined || last.startsWith(`${GET_STREAM}/`);
}

/** The headers of a 2026-07-28 request, as a session factory may read them: no credentials. */
function requestHeaders(request: Request | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  request?.headers.forEach((value, name) => {
    if (name !== 'authorization' && name !== 'proxy-authorization' && name !== 'cookie') headers[name] = value;
  });
  return headers;
}

/** A body-less Request with the real headers: what the SDK's era classification reads besides the parsed body. */
function probeRequest(req: http.IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request('http://localhost/mcp', { method: 'POST', headers });
}


function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The names of the tools a body calls (one message or a batch). */
function toolCallsIn(body: unknown): string[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.flatMap((m) => {
    const message = m as { method?: unknown; params?: { name?: unknown } } | null;
    return message && typeof message === 'object' && message.method === 'tools/call' && typeof message.params?.name === 'string' ? [message.params.name] : [];
  });
}

/** An OAuth refusal (401, 403 or 503) with its challenge; the body is RFC 6750's error object. */
function refuse(res: http.ServerResponse, refusal: Refusal): void {
  res.writeHead(refusal.status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', ...refusal.headers });
  res.end(JSON.stringify(refusal.body));
}

function reject(res: http.ServerResponse, status: number, message: string, id: string | number | null = null): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id }));
}

/** The id of a single JSON-RPC request body, or null (a batch, a notification, no readable id). */
function requestIdOf(body: unknown): string | number | null {
  const id = body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as { id?: unknown }).id : undefined;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** 400 for a body nested past the bound, before anything walks it (serialising it overflowed the stack: a 500). */
function rejectTooDeep(res: http.ServerResponse, body: unknown): void {
  res.writeHead(400, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: tooDeepError(MAX_JSON_NESTING), id: requestIdOf(body) }));
}

const SHUTTING_DOWN = 'The server is shutting down: this request was stopped before it finished. Retry it (another replica may answer).';

/** The JSON-RPC error for a request cut by the server's shutdown. */
function shutdownError(id: string | number | null): Record<string, unknown> {
  return { jsonrpc: '2.0', error: { code: -32000, message: SHUTTING_DOWN }, id };
}

/** The params of an initialize request body, as kept for the session. */
function initializeParams(body: unknown): Record<string, unknown> {
  const params = (body as { params?: unknown } | undefined)?.params;
  return params && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
}

/** Why a body was not read: each has its own status. */
class BodyRefusal extends Error {
  constructor(
    readonly status: 400 | 408 | 413 | 503,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The request-body bytes held at once by all requests together, and how long one body may take.
 * Unbounded, 250 connections each trickling a 4 MiB body a byte every few seconds took a server from
 * 79 to 1,082 MiB until Node's request timeout (328 s), and 486 MiB stayed afterwards.
 */
class BodyBudget {
  held = 0;

  constructor(
    readonly limit: number,
    readonly timeoutMs: number,
  ) {}

  reserve(bytes: number): boolean {
    if (this.held + bytes > this.limit) return false;
    this.held += bytes;
    return true;
  }

  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }
}

/** Answers a body that was not read, and makes sure its connection does not stay to trickle more. */
function refuseBody(req: http.IncomingMessage, res: http.ServerResponse, error: Error, maxBody: number, bodies: BodyBudget, releaser: MemoryReleaser): void {
  const refusal = error instanceof BodyRefusal ? error : new BodyRefusal(400, 'Bad request: invalid JSON.');
  if (refusal.status === 408) res.setHeader('Connection', 'close');
  else if (refusal.status !== 400 && !req.complete) {
    // Answered at once; whatever the client still sends is read and dropped as it comes (closing
    // now would reset a client still writing, which then never sees the answer), and the connection
    // serves its next request once the body is over. A body that does not end by the deadline
    // loses its connection.
    const cut = setTimeout(() => req.socket.destroy(), bodies.timeoutMs);
    cut.unref();
    req.once('end', () => clearTimeout(cut));
    req.once('close', () => clearTimeout(cut));
  }
  if (refusal.status === 503) res.setHeader('Retry-After', '1');
  // A large body given up frees its memory only at V8's next collection: count it like a closed session.
  if (refusal.status !== 400 && maxBody >= 1024 * 1024) releaser.sessionClosed();
  reject(res, refusal.status, refusal.message);
}

/**
 * The request body as JSON, within the budget of bytes held by all requests and the body deadline.
 * A declared length is reserved before anything is read, so a request that cannot be served is
 * refused at once (503), not after its bytes have piled up. Small chunks (a slow client's byte) are
 * copied: each is otherwise a view of the socket's 64 KiB read buffer, which it would keep alive.
 * Past `limit` the rest is read and dropped rather than left unread: a connection destroyed
 * mid-upload loses the 413 (the client sees a reset, or waits forever), and one left with unread
 * bytes cannot carry the next request. The answer then closes the connection.
 */
function readJson(req: http.IncomingMessage, limit: number, budget: BodyBudget): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let reserved = 0;
    let done = false;
    const declared = Number(req.headers['content-length']);
    const finish = (error: BodyRefusal | undefined, value?: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      budget.release(reserved);
      reserved = 0;
      chunks.length = 0;
      if (error) {
        req.off('data', onData);
        req.resume();
        reject(error);
      } else resolve(value);
    };
    const timer = setTimeout(
      () => finish(new BodyRefusal(408, `Request timeout: the request body did not arrive within ${Math.round(budget.timeoutMs / 1000)} s.`)),
      budget.timeoutMs,
    );
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) return finish(new BodyRefusal(413, `Bad request: body too large (the limit is ${limit} bytes).`));
      if (size > reserved) {
        if (!budget.reserve(size - reserved)) return finish(new BodyRefusal(503, 'Server busy: too many request bodies are arriving at once. Retry in a moment.'));
        reserved = size;
      }
      chunks.push(chunk.length < 4096 && chunk.buffer.byteLength > 4 * chunk.length ? Buffer.from(chunk) : chunk);
    };
    req.on('data', onData);
    req.on('error', () => finish(new BodyRefusal(400, 'Bad request: the request body was cut off.')));
    req.on('close', () => finish(new BodyRefusal(400, 'Bad request: the request body was cut off.')));
    req.on('end', () => {
      if (done) return;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return finish(undefined, undefined);
      try {
        finish(undefined, JSON.parse(text));
      } catch {
        finish(new BodyRefusal(400, 'Bad request: invalid JSON.'));
      }
    });
    if (Number.isFinite(declared) && declared > limit) return finish(new BodyRefusal(413, `Bad request: body too large (the limit is ${limit} bytes).`));
    if (Number.isFinite(declared) && declared > 0) {
      if (!budget.reserve(declared)) return finish(new BodyRefusal(503, 'Server busy: too many request bodies are arriving at once. Retry in a moment.'));
      reserved = declared;
    }
  });
}
