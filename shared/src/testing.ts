import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, realpath, rm, lstat, readlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CallToolResult as SdkCallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { SuiteServer } from './server.js';

export { Client };

/** A root as the test client offers it: a directory path or a full root. */
export type TestRoot = string | { uri: string; name?: string };

export interface ClientOptions {
  /** Declare the roots capability and answer roots/list with these. */
  roots?: TestRoot[];
  /** Delay (ms) before answering each roots/list, or a function of the request number. */
  rootsDelayMs?: number | ((requestIndex: number) => number);
  /** Declare sampling and answer sampling/createMessage with this. */
  sampling?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /** Declare elicitation and answer elicitation/create with this. */
  elicitation?: (params: Record<string, unknown>) => Promise<Record<string, unknown>>;
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

/** A connected client plus what tests need around it. */
export class TestSession {
  readonly notifications: Notification[] = [];
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

  /** Resolves with the next notification that matches (including ones already received since `since`). */
  waitFor(method: string, predicate: (n: Notification) => boolean = () => true, timeoutMs = 5000): Promise<Notification> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w.resolve !== done);
        reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${method}`));
      }, timeoutMs);
      const done = (n: Notification): void => {
        clearTimeout(timer);
        resolve(n);
      };
      this.waiters.push({ match: (n) => n.method === method && predicate(n), resolve: done });
    });
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
    for (const waiter of [...this.waiters]) {
      if (waiter.match(n)) {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        waiter.resolve(n);
      }
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
      client.setRequestHandler(CreateMessageRequestSchema, async (req) => handler(req.params as Record<string, unknown>) as never);
    }
    if (options.elicitation) {
      const handler = options.elicitation;
      client.setRequestHandler(ElicitRequestSchema, async (req) => handler(req.params as Record<string, unknown>) as never);
    }
  };
  return { client, bind };
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

export interface SpawnOptions extends ClientOptions {
  env?: Record<string, string>;
  cwd?: string;
}

export interface SpawnedSession extends TestSession {
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  pid: number | undefined;
}

/** Spawns a built server bin (`node dist/index.js ...`) and connects a client over stdio. */
export async function spawnServer(binPath: string, args: string[] = [], options: SpawnOptions = {}): Promise<SpawnedSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [binPath, ...args],
    env: { ...(process.env as Record<string, string>), ...options.env },
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
  await client.connect(transport);
  session.stderr = () => stderr;
  Object.defineProperty(session, 'pid', { get: () => transport.pid ?? undefined });
  return session;
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
