import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from './logging.js';
import type { SuiteServer } from './server.js';
import { StdioTransport, type StdioTransportOptions } from './stdio.js';

/** Builds the server for one session. */
export type SessionFactory = () => SuiteServer | Promise<SuiteServer>;

export interface RunningTransport {
  close(): Promise<void>;
}

/** Serves one session over stdin/stdout. */
export async function serveStdio(factory: SessionFactory, options: StdioTransportOptions = {}): Promise<RunningTransport & { server: SuiteServer }> {
  const server = await factory();
  await server.connect(new StdioTransport(options));
  return { server, close: () => server.close() };
}

export interface HttpOptions {
  port: number;
  host: string;
  /** Bearer token clients must present; compared in constant time. */
  authToken?: string;
  /** Extra Host header values to accept (host or host:port). */
  allowedHosts?: string[];
  /** Extra Origin values to accept (scheme://host[:port]); loopback origins are always accepted. */
  allowedOrigins?: string[];
  /** A session with no request for this long is closed. */
  idleTimeoutMs?: number;
  /** Largest JSON body accepted. */
  maxBodyBytes?: number;
  log: Logger;
}

export interface RunningHttp extends RunningTransport {
  url: string;
  port: number;
  sessionCount(): number;
}

type HttpSession = { server: SuiteServer; lastSeen: number } & (
  | { kind: 'streamable'; transport: StreamableHTTPServerTransport }
  | { kind: 'sse'; transport: SSEServerTransport }
);

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/**
 * Streamable HTTP on /mcp plus the legacy HTTP+SSE endpoints (/sse, /messages), behind the same
 * checks: Host and Origin validation against DNS rebinding, then the optional bearer token.
 * Every session gets its own SuiteServer.
 */
export async function serveHttp(factory: SessionFactory, options: HttpOptions): Promise<RunningHttp> {
  // Loaded here, not at the top: a stdio server should not pay their start-up cost.
  const [{ StreamableHTTPServerTransport }, { SSEServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/sse.js'),
  ]);
  const sessions = new Map<string, HttpSession>();
  const idleTimeoutMs = options.idleTimeoutMs ?? 30 * 60_000;
  const maxBody = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const tokenDigest = options.authToken ? sha256(options.authToken) : undefined;
  let boundPort = options.port;

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

  const authorized = (header: string | undefined): boolean => {
    if (!tokenDigest) return true;
    const match = /^Bearer\s+(.+)$/i.exec(header ?? '');
    return match !== null && timingSafeEqual(sha256(match[1]!.trim()), tokenDigest);
  };

  const openSession = (id: string, session: HttpSession): void => {
    sessions.set(id, session);
    options.log.info('session opened', { sessions: sessions.size });
  };

  const dropSession = async (id: string): Promise<void> => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.transport.close().catch(() => undefined);
    await session.server.close();
    options.log.info('session closed', { sessions: sessions.size });
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host)) return reject(res, 403, 'Forbidden: Host header not allowed.');
    if (!originAllowed(req.headers.origin)) return reject(res, 403, 'Forbidden: Origin not allowed.');
    if (!authorized(req.headers.authorization)) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return reject(res, 401, 'Unauthorized: a valid bearer token is required.');
    }
    const url = new URL(req.url ?? '/', 'http://localhost');

    if (url.pathname === '/mcp') {
      const sessionId = headerValue(req.headers['mcp-session-id']);
      const body = req.method === 'POST' ? await readJson(req, maxBody).catch((e: Error) => e) : undefined;
      if (body instanceof Error) return reject(res, body.message === 'too large' ? 413 : 400, `Bad request: ${body.message === 'too large' ? 'body too large' : 'invalid JSON'}.`);
      if (sessionId) {
        const session = sessions.get(sessionId);
        if (session?.kind !== 'streamable') return reject(res, 404, 'Session not found. Start a new session with an initialize request.');
        session.lastSeen = Date.now();
        return session.transport.handleRequest(req, res, body);
      }
      if (req.method !== 'POST' || !isInitializeRequest(body)) {
        return reject(res, 400, 'Bad request: no session id; the first request must be initialize.');
      }
      const server = await factory();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id): void => openSession(id, { kind: 'streamable', server, transport, lastSeen: Date.now() }),
      });
      transport.onclose = () => {
        if (transport.sessionId) void dropSession(transport.sessionId);
      };
      await server.connect(transport);
      return transport.handleRequest(req, res, body);
    }

    if (url.pathname === '/sse' && req.method === 'GET') {
      const transport = new SSEServerTransport('/messages', res);
      const server = await factory();
      const id = transport.sessionId;
      openSession(id, { kind: 'sse', server, transport, lastSeen: Date.now() });
      transport.onclose = () => void dropSession(id);
      await server.connect(transport);
      return;
    }

    if (url.pathname === '/messages' && req.method === 'POST') {
      const id = url.searchParams.get('sessionId') ?? '';
      const session = sessions.get(id);
      if (session?.kind !== 'sse') return reject(res, 404, 'Session not found.');
      session.lastSeen = Date.now();
      const body = await readJson(req, maxBody).catch((e: Error) => e);
      if (body instanceof Error) return reject(res, 400, 'Bad request: invalid JSON.');
      return session.transport.handlePostMessage(req, res, body);
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
      await Promise.all([...sessions.keys()].map(dropSession));
      httpServer.closeAllConnections();
      await new Promise<void>((resolve) => httpServer.close(() => resolve()));
    },
  };
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function reject(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new Error('too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('invalid JSON');
  }
}
