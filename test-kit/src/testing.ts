import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, realpath, rm, lstat, readlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
  type CallToolResult as SdkCallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ContentBlock, ResourceContents } from '@suite/shared';
import type { SuiteServer } from '@suite/shared';

export { Client };
export { startFakeUpstream, graphqlOperationOf, type GraphqlOperation, type FakeUpstream, type FakeRequest, type FakeResponse, type FakeRoute, type FakeFault, type FakeTransform } from './fake-upstream.js';
export { descendantsOf, isAlive, expectAllGone, type ProcessIdentity } from './processes.js';

/** A root as the test client offers it: a directory path or a full root. */
export type TestRoot = string | { uri: string; name?: string };

export interface ClientOptions {
  /** Declare the roots capability and answer roots/list with these. */
  roots?: TestRoot[];
  /** Delay (ms) before answering each roots/list, or a function of the request number. */
  rootsDelayMs?: number | ((requestIndex: number) => number);
  /** Declare sampling and answer sampling/createMessage with this (`signal` fires when the server cancels). */
  sampling?: (params: Record<string, unknown>, extra: { signal: AbortSignal }) => Promise<Record<string, unknown>>;
  /** Declare elicitation and answer elicitation/create with this. */
  elicitation?: (params: Record<string, unknown>, extra: { signal: AbortSignal }) => Promise<Record<string, unknown>>;
  clientName?: string;
}

export interface Notification {
  method: string;
  params?: Record<string, unknown>;
}

/** A tool call's outcome, unpacked for assertions. */
export interface ToolOutcome {
  isError: boolean;
  /** All text blocks joined with newlines. */
  text: string;
  structured: Record<string, unknown> | undefined;
  content: SdkCallToolResult['content'];
}

/** A resources/read, unpacked. */
export interface ResourceOutcome {
  contents: ResourceContents[];
  /** The text contents joined with newlines ('' for blobs). */
  text: string;
}

/** A prompts/get, unpacked. */
export interface PromptOutcome {
  description: string | undefined;
  messages: { role: 'user' | 'assistant'; content: ContentBlock }[];
  /** Every text block and every embedded text resource, in order, joined with newlines. */
  text: string;
  /** The embedded resources, in order. */
  resources: ResourceContents[];
}

/** A JSON-RPC error as the client received it. */
export interface ProtocolErrorOutcome {
  code: number;
  /** Without the SDK's "MCP error <code>: " prefix. */
  message: string;
  data: unknown;
}

/** A connected client plus what tests need around it. */
export class TestSession {
  readonly notifications: Notification[] = [];
  /** Notifications already handed to a waitFor; each satisfies one wait only. */
  private readonly consumed = new WeakSet<Notification>();
  private waiters: { match: (n: Notification) => boolean; resolve: (n: Notification) => void }[] = [];
  private currentRoots: TestRoot[] | undefined;
  rootsRequests = 0;

  constructor(
    readonly client: Client,
    private readonly closer: () => Promise<void>,
  ) {}

  /** Calls a tool and unpacks the result. Protocol errors still throw. */
  async callTool(name: string, args: Record<string, unknown> = {}, options: { signal?: AbortSignal; onprogress?: (p: { progress: number; total?: number; message?: string }) => void; timeout?: number } = {}): Promise<ToolOutcome> {
    const result = (await this.client.callTool({ name, arguments: args }, undefined, {
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.onprogress ? { onprogress: options.onprogress } : {}),
      ...(options.timeout ? { timeout: options.timeout } : {}),
    })) as SdkCallToolResult;
    const text = result.content
      .filter((c): c is { type: 'text'; text: string } => c.type === 'text')
      .map((c) => c.text)
      .join('\n');
    return { isError: result.isError === true, text, structured: result.structuredContent as Record<string, unknown> | undefined, content: result.content };
  }

  /** Notifications received so far with this method. */
  received(method: string): Notification[] {
    return this.notifications.filter((n) => n.method === method);
  }

  /** A position in the notification stream, for `waitFor(..., { after })`. */
  mark(): number {
    return this.notifications.length;
  }

  /**
   * Resolves with the first matching notification that no earlier waitFor took, including one
   * that arrived before this call (an action's notification can overtake the await that follows
   * it). Each notification satisfies one wait only, so two waits see two notifications. `after`
   * (from `mark()`) ignores everything received before that point.
   */
  waitFor(
    method: string,
    predicate: (n: Notification) => boolean = () => true,
    options: number | { timeoutMs?: number; after?: number } = {},
  ): Promise<Notification> {
    const { timeoutMs = 5000, after = 0 } = typeof options === 'number' ? { timeoutMs: options } : options;
    const match = (n: Notification): boolean => n.method === method && !this.consumed.has(n) && predicate(n);
    const early = this.notifications.slice(after).find(match);
    if (early) {
      this.consumed.add(early);
      return Promise.resolve(early);
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${method}`));
      }, timeoutMs);
      const done = (n: Notification): void => {
        clearTimeout(timer);
        resolve(n);
      };
      this.waiters.push({ match, resolve: done });
    });
  }

  /**
   * Runs an action and waits for the notification it causes (about `uri`, when given), ignoring any
   * received before the action; on timeout the error says which notification did not follow `what`.
   */
  async notifiedBy(
    method: string,
    action: () => Promise<unknown>,
    options: { uri?: string; what?: string; timeoutMs?: number } = {},
  ): Promise<Notification> {
    const { uri, what = 'the action', timeoutMs = 8000 } = options;
    const after = this.mark();
    await action();
    return this.waitFor(method, (n) => uri === undefined || n.params?.uri === uri, { timeoutMs, after }).catch(() => {
      throw new Error(`No ${method}${uri ? ` for ${uri}` : ''} within ${timeoutMs} ms after ${what}.`);
    });
  }

  /** Reads a resource and unpacks it. Protocol errors throw (see `protocolError`). */
  async readResource(uri: string): Promise<ResourceOutcome> {
    const { contents } = await this.client.readResource({ uri });
    const typed = contents as ResourceContents[];
    return { contents: typed, text: typed.map((c) => ('text' in c ? c.text : '')).join('\n') };
  }

  /** Gets a prompt and unpacks it. Protocol errors throw (see `protocolError`). */
  async getPrompt(name: string, args: Record<string, string> = {}): Promise<PromptOutcome> {
    const result = await this.client.getPrompt({ name, arguments: args });
    const messages = result.messages as PromptOutcome['messages'];
    const texts: string[] = [];
    const resources: ResourceContents[] = [];
    for (const { content } of messages) {
      if (content.type === 'text') texts.push(content.text);
      else if (content.type === 'resource') {
        resources.push(content.resource);
        if ('text' in content.resource) texts.push(content.resource.text);
      }
    }
    return { description: result.description, messages, text: texts.join('\n'), resources };
  }

  /** completion/complete for a prompt argument or a resource template variable; returns the values and flags. */
  async complete(
    ref: { prompt: string } | { template: string },
    argument: string,
    value: string,
    context: Record<string, string> = {},
  ): Promise<{ values: string[]; total: number | undefined; hasMore: boolean }> {
    const result = await this.client.complete({
      ref: 'prompt' in ref ? { type: 'ref/prompt', name: ref.prompt } : { type: 'ref/resource', uri: ref.template },
      argument: { name: argument, value },
      ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {}),
    });
    return { values: result.completion.values, total: result.completion.total, hasMore: result.completion.hasMore === true };
  }

  /** Names of the tools the session lists now. */
  async toolNames(): Promise<string[]> {
    return (await this.client.listTools()).tools.map((t) => t.name);
  }

  /** Replaces the roots the client offers and sends notifications/roots/list_changed. */
  async setRoots(roots: TestRoot[]): Promise<void> {
    this.currentRoots = roots;
    await this.client.sendRootsListChanged();
  }

  /** @internal */
  rootsAnswer(): { uri: string; name?: string }[] {
    return (this.currentRoots ?? []).map((r) => (typeof r === 'string' ? { uri: pathToFileURL(r).href, name: path.basename(r) } : r));
  }

  /** @internal */
  initRoots(roots: TestRoot[] | undefined): void {
    this.currentRoots = roots;
  }

  /** @internal */
  record(n: Notification): void {
    this.notifications.push(n);
    const waiter = this.waiters.find((w) => w.match(n));
    if (waiter) {
      this.consumed.add(n);
      this.waiters = this.waiters.filter((w) => w !== waiter);
      waiter.resolve(n);
    }
  }

  async close(): Promise<void> {
    await this.closer();
  }
}

function buildClient(options: ClientOptions): { client: Client; bind: (session: TestSession) => void } {
  const capabilities: Record<string, object> = {};
  if (options.roots) capabilities.roots = { listChanged: true };
  if (options.sampling) capabilities.sampling = {};
  if (options.elicitation) capabilities.elicitation = {};
  const client = new Client({ name: options.clientName ?? 'suite-test-client', version: '0.0.0' }, { capabilities });
  const bind = (session: TestSession): void => {
    session.initRoots(options.roots);
    client.fallbackNotificationHandler = async (n) => session.record(n as Notification);
    if (options.roots) {
      client.setRequestHandler(ListRootsRequestSchema, async () => {
        const index = session.rootsRequests++;
        // Snapshot the roots now: an answer reflects the state when the request arrived.
        const answer = session.rootsAnswer();
        const delay = typeof options.rootsDelayMs === 'function' ? options.rootsDelayMs(index) : (options.rootsDelayMs ?? 0);
        if (delay > 0) await new Promise((r) => setTimeout(r, delay));
        return { roots: answer };
      });
    }
    if (options.sampling) {
      const handler = options.sampling;
      client.setRequestHandler(CreateMessageRequestSchema, async (req, extra) => handler(req.params as Record<string, unknown>, { signal: extra.signal }) as never);
    }
    if (options.elicitation) {
      const handler = options.elicitation;
      client.setRequestHandler(ElicitRequestSchema, async (req, extra) => handler(req.params as Record<string, unknown>, { signal: extra.signal }) as never);
    }
  };
  return { client, bind };
}

/**
 * The JSON-RPC error a request failed with; fails the test when the request succeeded or failed
 * some other way.
 */
export async function protocolError(request: Promise<unknown>): Promise<ProtocolErrorOutcome> {
  try {
    await request;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message.replace(/^MCP error -?\d+: /, ''), data: error.data };
    throw error;
  }
  throw new Error('Expected a JSON-RPC error, but the request succeeded.');
}

/** Connects a real SDK client to a server in the same process (InMemoryTransport). */
export async function connectInProcess(server: SuiteServer, options: ClientOptions = {}): Promise<TestSession> {
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  const { client, bind } = buildClient(options);
  const session = new TestSession(client, async () => {
    await client.close();
    await server.close();
  });
  bind(session);
  await server.connect(serverTransport);
  await client.connect(clientTransport as Transport);
  return session;
}

export interface HttpClientOptions extends ClientOptions {
  /** Sent as "Authorization: Bearer <token>" with every request. */
  token?: string;
  headers?: Record<string, string>;
}

/** Connects a real SDK client over Streamable HTTP (a server started with serveHttp or --http). */
export async function connectHttp(url: string, options: HttpClientOptions = {}): Promise<TestSession & { sessionId: () => string | undefined }> {
  const headers: Record<string, string> = { ...options.headers, ...(options.token ? { Authorization: `Bearer ${options.token}` } : {}) };
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const { client, bind } = buildClient(options);
  const session = new TestSession(client, async () => {
    // Ends the session on the server too (DELETE), as a well-behaved client does.
    await transport.terminateSession().catch(() => undefined);
    await client.close();
  }) as TestSession & { sessionId: () => string | undefined };
  bind(session);
  await client.connect(transport as Transport);
  session.sessionId = () => transport.sessionId;
  return session;
}

export interface SpawnOptions extends ClientOptions {
  /** Added to the test's environment; a variable set to undefined is removed. */
  env?: Record<string, string | undefined>;
  cwd?: string;
  /**
   * A command that starts the server instead of running node directly: node, the bin and its
   * arguments are appended to it. For faults that need the server in another environment, e.g.
   * `['unshare', '--user', '--map-root-user', 'sh', '-c', 'echo 0 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"']`.
   */
  launcher?: string[];
}

export interface SpawnedSession extends TestSession {
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  pid: number | undefined;
}

/** Spawns a built server bin (`node dist/index.js ...`) and connects a client over stdio. */
export async function spawnServer(binPath: string, args: string[] = [], options: SpawnOptions = {}): Promise<SpawnedSession> {
  const [command, ...prefix] = options.launcher ?? [];
  const transport = new StdioClientTransport({
    command: command ?? process.execPath,
    args: command === undefined ? [binPath, ...args] : [...prefix, process.execPath, binPath, ...args],
    env: Object.fromEntries(Object.entries({ ...process.env, ...options.env }).filter((entry): entry is [string, string] => entry[1] !== undefined)),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const { client, bind } = buildClient(options);
  const session = new TestSession(client, async () => {
    await client.close();
  }) as SpawnedSession;
  bind(session);
  await client.connect(oneWriteAtATime(transport));
  session.stderr = () => stderr;
  Object.defineProperty(session, 'pid', { get: () => transport.pid ?? undefined });
  return session;
}

/**
 * The transport with its sends queued, one after another. The SDK's stdio client waits for `drain`
 * with a listener per write that found the pipe full, so 1,000 calls sent at once add hundreds of
 * listeners to the child's stdin and Node prints a MaxListenersExceededWarning in the test process;
 * queued, at most one waits. The order of the messages is the order of the calls either way.
 */
function oneWriteAtATime<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  let previous: Promise<unknown> = Promise.resolve();
  transport.send = (...args: Parameters<Transport['send']>) => {
    const sent = previous.then(() => send(...args));
    previous = sent.catch(() => undefined);
    return sent;
  };
  return transport;
}

/**
 * The tool catalog as a client sees it, as stable JSON text for file snapshot tests: a change to any
 * tool's name, schema or annotations then shows up in review.
 */
export async function toolCatalog(client: Client): Promise<string> {
  const { tools } = await client.listTools();
  const catalog = [...tools]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((t) => ({ name: t.name, title: t.title, annotations: t.annotations, inputSchema: t.inputSchema, outputSchema: t.outputSchema, description: t.description }));
  return `${JSON.stringify(catalog, null, 2)}\n`;
}

/** A fresh temporary directory (real path) and a disposer. */
export async function makeTempDir(prefix = 'suite-test-'): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** Polls a condition (sync or async) until it holds; throws naming `what` after the timeout. */
export async function waitUntil(condition: () => boolean | Promise<boolean>, options: { what?: string; timeoutMs?: number; intervalMs?: number } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${options.what ?? 'a condition'}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 25));
  }
}

/**
 * Every entry under a directory, recursively, with each file's size and content hash and each
 * link's target: compare two snapshots to prove an attack created, changed or removed nothing.
 */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function visit(current: string, prefix: string): Promise<void> {
    for (const name of (await readdir(current)).sort()) {
      const full = path.join(current, name);
      const key = prefix ? `${prefix}/${name}` : name;
      const stat = await lstat(full);
      if (stat.isSymbolicLink()) out[key] = `link:${await readlink(full)}`;
      else if (stat.isDirectory()) {
        out[key] = 'dir';
        await visit(full, key);
      } else out[key] = `${stat.size}:${createHash('sha256').update(await readFile(full)).digest('hex')}`;
    }
  }
  await visit(dir, '');
  return out;
}
