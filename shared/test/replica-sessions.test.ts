import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { pathToFileURL } from 'node:url';
import { Logger, serveHttp, type RunningHttp, type SuiteServer } from '../src/index.js';
import { RedisLink } from '../src/replicas/redis-link.js';
import { RedisSessionDirectory } from '../src/replicas/session-directory.js';
import { makeTempDir } from '@suite/test-kit';
import { probeServer } from './fixtures/probe-server.js';

const REDIS = 'redis://127.0.0.1:6379';

/** One replica: its HTTP server, its own link to Redis, and every session copy it built. */
interface Replica {
  name: string;
  running: RunningHttp;
  built: SuiteServer[];
  link: RedisLink;
}

describe('2025-era sessions shared by replicas through Redis (in-process replicas, real Redis)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function replicas(count: number, options: { maxSessions?: number; redisUrl?: string; directories?: string[] } = {}): Promise<Replica[]> {
    const prefix = `suite-test-sessions-${randomUUID()}:`;
    closers.push(async () => {
      const redis = new Redis(REDIS);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    });
    const made: Replica[] = [];
    for (let i = 0; i < count; i++) {
      const log = new Logger(`replica-${i}`);
      const link = new RedisLink(options.redisUrl ?? REDIS, log, { prefix });
      const built: SuiteServer[] = [];
      const running = await serveHttp(
        (session) => {
          const server = probeServer({ directories: options.directories ?? [] });
          Object.assign(server.session, session);
          built.push(server);
          return server;
        },
        { port: 0, host: '127.0.0.1', log, maxSessions: options.maxSessions ?? 100, replicas: new RedisSessionDirectory(link, 60_000) },
      );
      closers.push(() => running.close(), () => link.close());
      made.push({ name: String.fromCharCode(65 + i), running, built, link });
    }
    // Both links subscribed before the first message travels.
    await new Promise((r) => setTimeout(r, 200));
    return made;
  }

  /**
   * A 2025 client (the v1 SDK) whose requests a "load balancer" spreads: POSTs alternate between
   * the replicas, and the GET stream goes where `streamTo` says.
   */
  async function spreadClient(
    set: Replica[],
    options: { roots?: string[]; streamTo?: () => Replica; answers?: boolean } = {},
  ): Promise<{ client: Client; posted: string[]; transport: StreamableHTTPClientTransport; notifications: string[] }> {
    let turn = 0;
    const posted: string[] = [];
    const fetchSpread = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const method = (init?.method ?? 'GET').toUpperCase();
      const target = method === 'GET' ? (options.streamTo?.() ?? set[0]!) : set[turn++ % set.length]!;
      if (method === 'POST') posted.push(target.name);
      return fetch(target.running.url, init);
    };
    const capabilities = { ...(options.roots ? { roots: { listChanged: true } } : {}), ...(options.answers ? { sampling: {}, elicitation: {} } : {}) };
    const client = new Client({ name: 'spread', version: '0' }, { capabilities });
    const notifications: string[] = [];
    client.fallbackNotificationHandler = async (n) => void notifications.push(n.method === 'notifications/message' ? `message: ${String(n.params?.data)}` : n.method);
    if (options.roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: options.roots!.map((dir) => ({ uri: pathToFileURL(dir).href })) }));
    if (options.answers) {
      client.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
        role: 'assistant',
        model: 'm',
        content: { type: 'text', text: `answer to ${(request.params.messages[0]!.content as { text: string }).text}` },
      }));
      client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { ok: true } }));
    }
    const transport = new StreamableHTTPClientTransport(new URL(set[0]!.running.url), { fetch: fetchSpread, reconnectionOptions: { initialReconnectionDelay: 100, maxReconnectionDelay: 500, reconnectionDelayGrowFactor: 1.5, maxRetries: 10 } });
    await client.connect(transport);
    closers.push(() => client.close());
    return { client, posted, transport, notifications };
  }

  const text = (result: unknown): string => ((result as { content: { text: string }[] }).content[0]?.text ?? '');

  it('a session opened on A continues on B: every call answers, roots and sampling requests reach the client and their answers the replica that asked', async () => {
    const { dir, cleanup } = await makeTempDir('replica-roots-');
    closers.push(cleanup);
    const set = await replicas(2);
    const { client, posted } = await spreadClient(set, { roots: [dir], answers: true });
    for (let i = 0; i < 6; i++) {
      const roots = await client.callTool({ name: 'allowed_directories', arguments: {} });
      expect((roots.structuredContent as { directories: string[] }).directories).toHaveLength(1);
    }
    for (let i = 0; i < 4; i++) {
      const asked = await client.callTool({ name: 'ask_model', arguments: { question: `q${i}` } });
      expect(JSON.parse(text(asked))).toEqual({ sampled: `answer to q${i}`, elicited: 'accept' });
    }
    expect(new Set(posted)).toEqual(new Set(['A', 'B']));
    // Each replica built a copy of the one session (B took it up from Redis).
    expect(set.map((r) => r.built.filter((s) => s.session.transport === 'http').length)).toEqual([1, 1]);
    expect(set[0]!.built[0]!.sessionId).toBe(set[1]!.built[0]!.sessionId);
  });

  it('without Redis the other replica does not know the session (the control)', async () => {
    const set = await replicas(2, { redisUrl: 'redis://127.0.0.1:1' });
    // initialize went to A; the next POST (initialized) goes to B, which has never heard of the session.
    await expect(spreadClient(set)).rejects.toThrow(/Session not found/);
  });

  it('subscriptions and log level move with the session: a level set through B filters what A sends', async () => {
    const set = await replicas(2);
    const { client } = await spreadClient(set);
    const messages: string[] = [];
    client.setNotificationHandler((await import('@modelcontextprotocol/sdk/types.js')).LoggingMessageNotificationSchema, async (n) => {
      messages.push(String(n.params.data));
    });
    await client.setLoggingLevel('error');
    await new Promise((r) => setTimeout(r, 300));
    // Set through one replica, obeyed by both: the two calls land one on each.
    await client.callTool({ name: 'log', arguments: { levels: ['info', 'error'] } });
    await client.callTool({ name: 'log', arguments: { levels: ['warning', 'error'] } });
    // Unsolicited, they may trail the call's answer (B's go through the replica holding the stream).
    await expect.poll(() => messages.filter((m) => m.includes('error')).length).toBe(2);
    expect(messages.filter((m) => m.includes('info') || m.includes('warning'))).toEqual([]);
  });

  it('the GET stream resumes on another replica with Last-Event-ID: what it missed while reconnecting, once each', async () => {
    const set = await replicas(2);
    let streamTo = set[0]!;
    const { client, notifications } = await spreadClient(set, { streamTo: () => streamTo });
    await client.callTool({ name: 'allowed_directories', arguments: {} }); // B takes the session up too
    const onA = set[0]!.built.find((s) => s.session.transport === 'http')!;
    const onB = set[1]!.built.find((s) => s.session.transport === 'http')!;
    await expect.poll(() => set[0]!.running.sessionCount()).toBe(1);
    // Both copies announce the same change: the client hears it once, live on A's stream.
    await new Promise((r) => setTimeout(r, 300));
    onA.listChanged('tools');
    onB.listChanged('tools');
    await expect.poll(() => notifications.filter((m) => m === 'notifications/tools/list_changed').length).toBe(1);
    // A goes away with the stream; what B announces meanwhile is kept, and the stream's next
    // connection (to B now) replays it after the last event the client saw.
    streamTo = set[1]!;
    await set[0]!.running.close();
    onB.log.error('missed 1');
    onB.log.error('missed 2');
    await expect.poll(() => notifications.filter((m) => m !== 'notifications/tools/list_changed'), { timeout: 10_000 }).toEqual(['message: missed 1', 'message: missed 2']);
    expect(notifications.filter((m) => m === 'notifications/tools/list_changed')).toHaveLength(1);
  });

  it('the session cap counts every replica: the third session is refused on either, and a closed one frees its place', async () => {
    const set = await replicas(2, { maxSessions: 2 });
    const open = async (replica: Replica): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> => {
      const transport = new StreamableHTTPClientTransport(new URL(replica.running.url));
      const client = new Client({ name: 'cap', version: '0' });
      await client.connect(transport);
      closers.push(() => client.close());
      return { client, transport };
    };
    const first = await open(set[0]!);
    await open(set[1]!);
    await expect(open(set[0]!)).rejects.toThrow(/busy|503/i);
    await expect(open(set[1]!)).rejects.toThrow(/busy|503/i);
    await first.transport.terminateSession();
    await open(set[1]!);
  });

  it('Redis holds what open sessions need, not what their calls did: a few keys per session after 100 calls, none once it ends', async () => {
    const set = await replicas(2);
    const redis = new Redis(REDIS);
    closers.push(async () => redis.disconnect());
    const prefix = set[0]!.link.prefix;
    const keys = async (): Promise<string[]> => (await redis.keys(`${prefix}*`)).map((key) => key.slice(prefix.length).replace(/[0-9a-f-]{36}/g, 'ID')).sort();
    const { client, transport } = await spreadClient(set);
    for (let i = 0; i < 100; i++) expect(text(await client.callTool({ name: 'allowed_directories', arguments: {} }))).toBeDefined();
    // Written without waiting for Redis: wait until the last call's event is there.
    await expect.poll(async () => redis.xlen(`${prefix}events:${transport.sessionId}:requests`), { timeout: 5000 }).toBeGreaterThanOrEqual(100);
    expect(await keys()).toEqual(['events:ID:requests', 'session:ID', 'sessions']);
    let bytes = 0;
    for (const key of await redis.keys(`${prefix}*`)) bytes += Number(await redis.call('MEMORY', 'USAGE', key));
    // Measured: 80 KB with 200 calls behind it, about 0.4 KB a call; the request events are capped at about 1,000.
    expect(bytes).toBeLessThan(200_000);
    await transport.terminateSession();
    // The last session gone, its sorted set of sessions goes too (Redis drops an empty set).
    await expect.poll(keys, { timeout: 5000 }).toEqual([]);
  });

  it("a request's stream resumes on another replica from the one Redis stream of the session's requests: its own events after the last seen, in order", async () => {
    const [a, b] = await replicas(2);
    const store = new RedisSessionDirectory(a!.link, 60_000).eventStore('s1');
    const other = new RedisSessionDirectory(b!.link, 60_000).eventStore('s1');
    const note = (n: number) => ({ jsonrpc: '2.0' as const, method: 'notifications/progress', params: { progressToken: 1, progress: n } });
    const first = await store.storeEvent('req-1', note(1));
    await store.storeEvent('req-2', note(100));
    await store.storeEvent('req-1', note(2));
    await store.storeEvent('req-1', note(3));
    const redis = new Redis(REDIS);
    closers.push(async () => redis.disconnect());
    await expect.poll(async () => redis.xlen(`${a!.link.prefix}events:s1:requests`), { timeout: 5000 }).toBe(4);
    const replayed: unknown[] = [];
    expect(await other.getStreamIdForEventId!(first)).toBe('req-1');
    expect(await other.replayEventsAfter(first, { send: async (_id, message) => void replayed.push((message as unknown as { params: { progress: number } }).params.progress) })).toBe('req-1');
    expect(replayed).toEqual([2, 3]);
  });

  it('Redis restarted empty: each replica records its live sessions again when the link comes back, so the cap still holds and the sessions still move', async () => {
    const set = await replicas(2, { maxSessions: 2 });
    const redis = new Redis(REDIS);
    closers.push(async () => redis.disconnect());
    const prefix = set[0]!.link.prefix;
    const open = async (replica: Replica): Promise<Client> => {
      const client = new Client({ name: 'cap', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(replica.running.url)));
      closers.push(() => client.close());
      return client;
    };
    await open(set[0]!);
    const second = await open(set[1]!);
    // What a Redis restarted without persistence holds: nothing of ours.
    await redis.del(...(await redis.keys(`${prefix}*`)));
    // Each replica's connection drops and comes back, as it does when Redis restarts.
    for (const replica of set) (replica.link as unknown as { commands: Redis }).commands.disconnect(true);
    await expect.poll(() => redis.zcard(`${prefix}sessions`), { timeout: 10_000, interval: 100 }).toBe(2);
    await expect.poll(() => set.every((r) => r.link.ready), { timeout: 10_000 }).toBe(true);
    // The cap holds across replicas again: a third session is refused on either.
    await expect(open(set[0]!)).rejects.toThrow(/busy|503/i);
    await expect(open(set[1]!)).rejects.toThrow(/busy|503/i);
    // And the record is whole again: the session still answers.
    expect(text(await second.callTool({ name: 'allowed_directories', arguments: {} }))).toBeDefined();
  });

  it('Redis unreachable: each replica serves its own sessions alone, within its own cap, and no request waits for Redis', async () => {
    const set = await replicas(1, { redisUrl: 'redis://127.0.0.1:1', maxSessions: 1 });
    const started = Date.now();
    const { client } = await spreadClient(set);
    for (let i = 0; i < 3; i++) expect(text(await client.callTool({ name: 'log', arguments: { levels: [] } }))).toBe('logged');
    expect(Date.now() - started).toBeLessThan(3_000);
    await expect(spreadClient(set)).rejects.toThrow(/busy|503/i);
  });
});
