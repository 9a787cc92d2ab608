import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isInitializeRequest, type JSONRPCMessage, type McpHandlerRequestOptions, type WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/server';
import type { NodeMcpRequestHandler } from '@modelcontextprotocol/node';
import { authFrom, type AuthInfo, type SessionInfo } from '../server/context.js';
import { ListenBridge, listenFilterOf } from '../changes/listen.js';
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
  /** The exact path, e.g. /oauth/callback/github; never /mcp, /sse, /messages or /healthz. */
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
  const { serveStdio: serveSdkStdio } = await import('@modelcontextprotocol/server/stdio');
  const transport = new StdioTransport(options);
  let current: SuiteServer | undefined;
  // The instance is built when the SDK handles the connection's first message, which may be this
  // very listen request (a client that probed the era elsewhere opens with it): wait for it.
  let markPinned: (server: SuiteServer) => void = () => undefined;
  const pinned = new Promise<SuiteServer>((resolve) => (markPinned = resolve));
  // Listen streams by request id: what each follows, so that cancelling one releases it.
  const listens = new Map<string | number, Promise<string[]>>();
  transport.inspect = (message: JSONRPCMessage) => {
    if (!('method' in message)) return;
    if (message.method === 'subscriptions/listen' && 'id' in message) {
      const uris = listenFilterOf(message.params)?.resourceSubscriptions ?? [];
      if (uris.length > 0) listens.set(message.id, pinned.then((server) => server.listen(uris)));
    } else if (message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      const followed = id === undefined ? undefined : listens.get(id);
      if (followed) {
        listens.delete(id!);
        void Promise.all([followed, pinned]).then(([uris, server]) => server.unlisten(uris));
      }
    }
  };
  const handle = serveSdkStdio(
    async ({ era }) => {
      const server = await factory({ id: randomUUID(), transport: 'stdio' });
      current = server;
      const instance = server.instance(era);
      markPinned(server);
      return instance;
    },
    { transport, onerror: (error) => options.log?.private('warning', `stdio: ${error.message}`) },
  );
  return {
    current: () => current,
    close: async () => {
      await handle.close();
      await current?.close();
    },
  };
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
  /** Extra Host header values to accept (host or host:port). */
  allowedHosts?: string[];
  /** Extra Origin values to accept (scheme://host[:port]); loopback origins are always accepted. */
  allowedOrigins?: string[];
  /** A session with no request for this long is closed. */
  idleTimeoutMs?: number;
  /** Largest JSON body accepted. */
  maxBodyBytes?: number;
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
}

/** A session stays bound to the token it was opened with: its digest, or undefined without one. */
type HttpSession = { server: SuiteServer; lastSeen: number; tokenDigest: Buffer | undefined } & (
  | {
      kind: 'streamable';
      transport: WebStandardStreamableHTTPServerTransport;
      outer: SessionTransport;
      serve: NodeMcpRequestHandler;
      serveStream: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<void>;
    }
  | { kind: 'sse'; transport: SseServerTransport }
);


const RESERVED_PATHS = new Set(['/mcp', '/sse', '/messages', '/healthz']);

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
  const [{ toNodeHandler }, { createMcpHandler, isLegacyRequest, InMemoryServerEventBus, WebStandardStreamableHTTPServerTransport }] = await Promise.all([
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
  const serveModern = toNodeHandler(modern, { maxRequestBodySize: maxBody, onerror: (error) => options.log.private('error', `HTTP request failed: ${error.stack ?? error.message}`) });
  let listening = 0;
  const maxListens = maxSessions;

  /**
   * A listen stream's change sources: a session of its own in the change hub (a server built for
   * it, never connected), alive until the stream closes. The SDK answers the stream itself.
   */
  const followListen = async (req: http.IncomingMessage, res: http.ServerResponse, body: unknown, auth: AuthInfo | undefined): Promise<void> => {
    const filter = listenFilterOf((body as { params?: unknown }).params);
    if (!filter || (!filter.resourceSubscriptions?.length && !filter.resourcesListChanged)) return;
    const server = await factory({ id: `listen-${randomUUID()}`, transport: 'http', headers: sessionHeaders(req), ...(auth ? { auth } : {}) });
    listening += 1;
    res.once('close', () => {
      listening -= 1;
      void server.close();
    });
    server.followInto((event) => bridge.publish(event));
    if (filter.resourceSubscriptions?.length) await server.listen(filter.resourceSubscriptions);
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
  const startStreamable = async (id: string, auth: AuthInfo | undefined, headers: Record<string, string>): Promise<HttpSession & { kind: 'streamable' }> => {
    const server = await factory({ id, transport: 'http', headers, ...(auth ? { auth } : {}) });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => id,
      ...(replicas ? { eventStore: replicas.eventStore(id), onsessionclosed: () => replicas.close(id) } : {}),
    });
    const outer = new SessionTransport(transport, id, replicas);
    const session = {
      kind: 'streamable' as const,
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
      const session = await startStreamable(id, auth, sessionHeaders(req));
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

  const busy = (res: http.ServerResponse): void => {
    // The earliest a slot can free up without a client closing one: the idle sweep.
    res.setHeader('Retry-After', String(Math.max(1, Math.min(60, Math.ceil(idleTimeoutMs / 1000)))));
    reject(res, 503, `Server busy: all ${maxSessions} sessions are in use. Retry later, or close sessions you no longer need.`);
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    // A load balancer's health check (haproxy sends no Host header): says nothing but that this
    // replica answers, so it needs no Host, Origin or token.
    if (req.method === 'GET' && req.url === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end('{"status":"ok"}');
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
      const body = req.method === 'POST' ? await readJson(req, maxBody).catch((e: Error) => e) : undefined;
      if (body instanceof Error) {
        if (body.message === 'too large') res.setHeader('Connection', 'close');
        return reject(res, body.message === 'too large' ? 413 : 400, `Bad request: ${body.message === 'too large' ? 'body too large' : 'invalid JSON'}.`);
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
      if (req.method === 'POST' && body !== undefined && !(await isLegacyRequest(probeRequest(req), body, { maxRequestBodySize: maxBody }))) {
        const refusal = await writeRefusal(body, auth, async () => factory({ id: `scope-check-${randomUUID()}`, transport: 'memory', headers: sessionHeaders(req), ...(auth ? { auth } : {}) }));
        if (refusal) return refuse(res, refusal);
        const isListen = (body as { method?: unknown }).method === 'subscriptions/listen';
        if (isListen && listening >= maxListens) return busy(res);
        if (isListen) await followListen(req, res, body, auth);
        return serveModern(req, res, body);
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return reject(res, 400, 'Bad request: no session id; the first request must be initialize (2025-11-25 and earlier), or every request must carry its protocol version in _meta (2026-07-28).');
      }
      const id = randomUUID();
      // With replicas the cap counts every replica's sessions, in Redis; without Redis, this one's.
      const recorded = replicas ? await replicas.open(id, bindingOf(auth)?.toString('hex') ?? '', (body as { params?: unknown }).params, maxSessions) : UNAVAILABLE;
      if (recorded === false || (recorded === UNAVAILABLE && full())) return busy(res);
      opening += 1;
      try {
        const session = await startStreamable(id, auth, sessionHeaders(req));
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
      const body = await readJson(req, maxBody).catch((e: Error) => e);
      if (body instanceof Error) {
        if (body.message === 'too large') res.setHeader('Connection', 'close');
        return reject(res, 400, `Bad request: ${body.message === 'too large' ? 'body too large' : 'invalid JSON'}.`);
      }
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
      for (const [id, session] of sessions) if (now - session.lastSeen > idleTimeoutMs) void dropSession(id);
    },
    Math.max(50, Math.min(60_000, Math.floor(idleTimeoutMs / 4))),
  );
  sweeper.unref();

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
    async close() {
      clearInterval(sweeper);
      stopListening?.();
      await modern.close();
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

function reject(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * The request body as JSON. Past `limit` the rest is read and dropped rather than left unread: a
 * connection destroyed mid-upload loses the 413 (the client sees a reset, or waits forever), and one
 * left with unread bytes cannot carry the next request. The answer then closes the connection.
 */
function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      chunks.length = 0;
      req.resume();
      reject(new Error('too large'));
    };
    req.on('data', onData);
    req.on('error', reject);
    req.on('end', () => {
      if (size > limit) return;
      const text = Buffer.concat(chunks).toString('utf8');
      if (text.trim() === '') return resolve(undefined);
      try {
        resolve(JSON.parse(text));
      } catch {
        reject(new Error('invalid JSON'));
      }
    });
  });
}
