import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real HTTP server on 127.0.0.1 standing in for an API the machines cannot reach (GitHub): the
 * server under test talks to it over real sockets, with real headers, status codes and bodies.
 * Routes answer requests, every request is recorded, and faults can be injected for the next N
 * matching requests: any answer (an error status, a redirect, a rate limit, an HTML page, a body
 * that is not the JSON it claims), a delay, a dropped connection, or a body that starts and then
 * stops arriving or is cut off.
 */

export interface FakeRequest {
  method: string;
  /** The path without the query, percent-encoded as it arrived. */
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON when the body is JSON, the text otherwise, undefined when empty. */
  body: unknown;
  /** Named segments of the route pattern, percent-decoded (`*name` captures the rest of the path). */
  params: Record<string, string>;
  /**
   * Date.now() when the request arrived (before its body was read), so a test can tell when the
   * server under test sent it: that a retry waited until a rate limit's reset, for instance.
   */
  receivedAt: number;
}

export interface FakeResponse {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as application/json. */
  json?: unknown;
  /** Sent as is (text/plain unless a content-type header says otherwise). */
  body?: string | Buffer;
}

export type FakeRoute = (request: FakeRequest) => FakeResponse | Promise<FakeResponse>;

/** Rewrites an answer before it is sent (see FakeUpstream.transform). */
export type FakeTransform = (request: FakeRequest, response: FakeResponse) => FakeResponse;

export interface FakeFault {
  method?: string;
  /** A route-style pattern, a RegExp on the path, or omitted for any path. */
  path?: string | RegExp;
  /** How many matching requests it affects (default 1). */
  times?: number;
  /** Answer with this instead of the route... */
  response?: FakeResponse;
  /** ...or first wait this long (then answer normally, or with `response`)... */
  delayMs?: number;
  /** ...or drop the connection without an answer (after reading the request: a write may have arrived)... */
  reset?: boolean;
  /**
   * ...or send the status, the headers and the first part of the answer (`response`, else the
   * route's; its first `bytes`, half of it by default), then either hold the rest forever
   * ('stall') or close the connection ('cut').
   */
  partial?: { then: 'stall' | 'cut'; bytes?: number };
}

export interface FakeUpstream {
  /** Base URL, e.g. http://127.0.0.1:43210 (no trailing slash). */
  url: string;
  /**
   * Adds a route. Patterns are paths with `:name` segments and an optional final `*name` for the
   * rest (`/repos/:owner/:repo/contents/*path`). Later routes win over earlier ones.
   */
  route(method: string, pattern: string, handler: FakeRoute): void;
  /**
   * Answers requests for `pattern` as if they named another path (`to` gets the pattern's
   * parameters; undefined leaves the path as it is): an alias such as GitHub's
   * `/repositories/ID/...` for `/repos/OWNER/NAME/...`. Faults still see the path as sent.
   */
  rewrite(pattern: string, to: (params: Record<string, string>) => string | undefined): void;
  fault(fault: FakeFault): void;
  /**
   * Rewrites every answer before it is sent (a route's, a fault's, a 404's), for as long as it is
   * installed: how a hostile or broken upstream is played across every endpoint at once (echoing
   * request headers into bodies, poisoning every string field). Returns the function that removes it.
   */
  transform(rewrite: FakeTransform): () => void;
  /** Every request received, in order. */
  readonly requests: FakeRequest[];
  /** Requests being answered now, and the most at once since the start (or the last reset): a cap on requests in flight, seen from upstream. */
  inFlight(): { now: number; max: number };
  resetInFlight(): void;
  close(): Promise<void>;
}

/** A GraphQL request as a fake reads it: the operation's kind and name, and its variables. */
export interface GraphqlOperation {
  kind: 'query' | 'mutation';
  name: string;
  variables: Record<string, unknown>;
}

/**
 * The operation a GraphQL request body (`{query, variables}`) sends, read far enough to dispatch
 * it: its kind and name from the document's first operation, which must be named (anonymous
 * operations and bodies that are not a GraphQL request are undefined). A fake answers by name
 * with the shapes the server under test selects, and tests read what each recorded request sent.
 */
export function graphqlOperationOf(body: unknown): GraphqlOperation | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { query, variables } = body as { query?: unknown; variables?: unknown };
  if (typeof query !== 'string') return undefined;
  // Comments (# to the end of a line) may come first.
  const match = /^(?:\s|#[^\n]*\n)*(query|mutation)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(query);
  if (!match) return undefined;
  const vars = variables && typeof variables === 'object' && !Array.isArray(variables) ? (variables as Record<string, unknown>) : {};
  return { kind: match[1] as 'query' | 'mutation', name: match[2]!, variables: vars };
}

interface CompiledRoute {
  method: string;
  match: (path: string) => Record<string, string> | undefined;
  handler: FakeRoute;
}

function compile(pattern: string): (path: string) => Record<string, string> | undefined {
  const names: string[] = [];
  const source = pattern
    .split('/')
    .map((segment) => {
      if (segment.startsWith(':')) {
        names.push(segment.slice(1));
        return '([^/]+)';
      }
      if (segment.startsWith('*')) {
        names.push(segment.slice(1));
        return '(.+)';
      }
      return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  const regex = new RegExp(`^${source}/?$`);
  return (path) => {
    const m = regex.exec(path);
    if (!m) return undefined;
    const params: Record<string, string> = {};
    names.forEach((name, i) => {
      const raw = m[i + 1] ?? '';
      try {
        params[name] = decodeURIComponent(raw);
      } catch {
        params[name] = raw;
      }
    });
    return params;
  };
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  const text = Buffer.concat(chunks).toString('utf8');
  if (/json/i.test(req.headers['content-type'] ?? '') || /^\s*[[{]/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      return text;
    }
  }
  return text;
}

function payloadOf(response: FakeResponse): { headers: Record<string, string>; payload: string | Buffer } {
  const headers: Record<string, string> = { ...response.headers };
  let payload: string | Buffer = '';
  if (response.json !== undefined) {
    payload = JSON.stringify(response.json);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  } else if (response.body !== undefined) {
    payload = response.body;
    headers['content-type'] ??= 'text/plain; charset=utf-8';
  }
  return { headers, payload };
}

function sendAnswer(res: http.ServerResponse, response: FakeResponse): void {
  const { headers, payload } = payloadOf(response);
  res.writeHead(response.status ?? 200, headers);
  res.end(payload);
}

/** The head and the first `bytes` of the body (announced in full), then nothing more, or a closed connection. */
function sendPartialAnswer(res: http.ServerResponse, response: FakeResponse, partial: NonNullable<FakeFault['partial']>): void {
  const { headers, payload } = payloadOf(response);
  const bytes = Buffer.from(payload);
  const sent = Math.min(bytes.length - 1, partial.bytes ?? Math.floor(bytes.length / 2));
  res.writeHead(response.status ?? 200, { ...headers, 'content-length': String(bytes.length) });
  res.write(bytes.subarray(0, Math.max(0, sent)));
  if (partial.then === 'cut') setTimeout(() => res.socket?.destroy(), 20);
}

/** Starts a fake upstream on a free port of 127.0.0.1. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  const routes: CompiledRoute[] = [];
  const rewrites: { match: (path: string) => Record<string, string> | undefined; to: (params: Record<string, string>) => string | undefined }[] = [];
  const faults: (FakeFault & { left: number; matchPath: (path: string) => boolean })[] = [];
  const transforms: FakeTransform[] = [];
  const requests: FakeRequest[] = [];
  let inFlight = 0;
  let maxInFlight = 0;

  const server = http.createServer((req, res) => {
    const receivedAt = Date.now();
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    res.once('close', () => (inFlight -= 1));
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = await readBody(req);
      const method = (req.method ?? 'GET').toUpperCase();
      const request: FakeRequest = { method, path: url.pathname, query: url.searchParams, headers: req.headers, body, params: {}, receivedAt };
      requests.push(request);
      const send = (target: http.ServerResponse, response: FakeResponse): void => sendAnswer(target, transforms.reduce((answer, rewrite) => rewrite(request, answer), response));
      const sendPartial = (target: http.ServerResponse, response: FakeResponse, partial: NonNullable<FakeFault['partial']>): void =>
        sendPartialAnswer(target, transforms.reduce((answer, rewrite) => rewrite(request, answer), response), partial);

      const fault = faults.find((f) => f.left > 0 && (!f.method || f.method.toUpperCase() === method) && f.matchPath(url.pathname));
      if (fault) {
        fault.left -= 1;
        if (fault.delayMs) await new Promise((r) => setTimeout(r, fault.delayMs));
        if (fault.reset) {
          req.socket.destroy();
          return;
        }
        if (fault.partial && fault.response) return sendPartial(res, fault.response, fault.partial);
        if (fault.response) return send(res, fault.response);
      }
      // A partial fault without its own answer cuts the route's.
      const reply = (response: FakeResponse): void => (fault?.partial ? sendPartial(res, response, fault.partial) : send(res, response));

      let path = url.pathname;
      for (const rewrite of rewrites) {
        const params = rewrite.match(path);
        const to = params ? rewrite.to(params) : undefined;
        if (to !== undefined) {
          path = to;
          break;
        }
      }
      for (let i = routes.length - 1; i >= 0; i--) {
        const route = routes[i]!;
        if (route.method !== method && route.method !== '*') continue;
        const params = route.match(path);
        if (!params) continue;
        request.params = params;
        return reply(await route.handler(request));
      }
      reply({ status: 404, json: { message: 'Not Found' } });
    })().catch((error: unknown) => {
      if (!res.headersSent) sendAnswer(res, { status: 500, json: { message: `fake upstream failed: ${String(error)}` } });
      else res.end();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    inFlight: () => ({ now: inFlight, max: maxInFlight }),
    resetInFlight: () => (maxInFlight = inFlight),
    route(method, pattern, handler) {
      routes.push({ method: method.toUpperCase(), match: compile(pattern), handler });
    },
    rewrite(pattern, to) {
      rewrites.push({ match: compile(pattern), to });
    },
    fault(fault) {
      const matchPath =
        fault.path === undefined
          ? () => true
          : fault.path instanceof RegExp
            ? (p: string) => (fault.path as RegExp).test(p)
            : (p: string) => compile(fault.path as string)(p) !== undefined;
      faults.push({ ...fault, left: fault.times ?? 1, matchPath });
    },
    transform(rewrite) {
      transforms.push(rewrite);
      return () => {
        const at = transforms.indexOf(rewrite);
        if (at !== -1) transforms.splice(at, 1);
      };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
