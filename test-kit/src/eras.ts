import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startHttpServer, type ConformanceTarget, type FollowedResource, type HttpServerProcess, type PreparedTarget } from './conformance.js';

const MODERN = '2026-07-28';
type Era = 'modern' | 'legacy' | 'auto';

/** A connected client of one era, over stdio of the built bin or over its HTTP mode. */
async function connect(era: Era, how: { stdio: { bin: string; args: string[]; env: Record<string, string> } } | { http: { url: string; token: string } }): Promise<Client> {
  const client = new Client(
    { name: `eras-kit-${era}`, version: '0' },
    era === 'legacy' ? {} : { versionNegotiation: { mode: era === 'auto' ? 'auto' : { pin: MODERN } } },
  );
  if ('stdio' in how) {
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [how.stdio.bin, ...how.stdio.args], env: how.stdio.env, stderr: 'ignore' }));
  } else {
    await client.connect(new StreamableHTTPClientTransport(new URL(how.http.url), { requestInit: { headers: { authorization: `Bearer ${how.http.token}` } } }));
  }
  return client;
}

function childEnv(extra: PreparedTarget['env']): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

/** What a client of one era sees: the catalog, and the answer to the target's cheap call. */
async function survey(client: Client, prepared: PreparedTarget): Promise<{ tools: string[]; prompts: string[]; templates: string[]; cheap: unknown; raw: Record<string, unknown> }> {
  const listed = await client.listTools();
  const caps = client.getServerCapabilities() ?? {};
  const prompts = caps.prompts ? (await client.listPrompts()).prompts.map((p) => p.name) : [];
  const templates = caps.resources ? (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate) : [];
  const cheap = await client.callTool({ name: prepared.cheapCall.name, arguments: prepared.cheapCall.arguments });
  return { tools: listed.tools.map((t) => t.name).sort(), prompts: prompts.sort(), templates: templates.sort(), cheap: cheap.content, raw: listed as unknown as Record<string, unknown> };
}

/**
 * Both protocol eras against a server's built bin, over stdio and HTTP: a 2026-07-28 client (pinned,
 * and in auto mode) sees the same tools, prompts and templates as a 2025 client and gets the same
 * answer to the cheap call; unknown resources are -32602 in both; the modern lists carry cache hints
 * and 2020-12 input schemas.
 */
export function erasSuite(target: ConformanceTarget, options: { follows?: boolean } = {}): void {
  describe(`protocol eras: ${target.name}, the built bin in 2025-11-25 and 2026-07-28`, () => {
    let prepared: PreparedTarget;
    let http: HttpServerProcess;
    let token: string;
    const clients: Client[] = [];

    beforeAll(async () => {
      prepared = await target.prepare();
      const auth = prepared.http ?? { auth: 'gate' as const };
      token = auth.auth === 'gate' ? `eras-kit-${process.pid}-${Date.now()}` : auth.token;
      http = await startHttpServer(target.bin, [...prepared.args, ...(auth.auth === 'gate' ? ['--auth-token', token] : [])], prepared.env);
    }, 120_000);

    afterAll(async () => {
      for (const c of clients) await c.close().catch(() => undefined);
      await http?.server.stop().catch(() => undefined);
      await prepared?.cleanup();
    }, 60_000);

    const over = (transport: 'stdio' | 'http'): Parameters<typeof connect>[1] =>
      transport === 'stdio' ? { stdio: { bin: target.bin, args: prepared.args, env: childEnv(prepared.env) } } : { http: { url: http.url, token } };

    for (const transport of ['stdio', 'http'] as const) {
      it(`over ${transport}: a 2026-07-28 client sees what a 2025 client sees, and auto mode picks 2026-07-28`, async () => {
        const legacy = await connect('legacy', over(transport));
        clients.push(legacy);
        const modern = await connect('modern', over(transport));
        clients.push(modern);
        const auto = await connect('auto', over(transport));
        clients.push(auto);
        expect(legacy.getProtocolEra()).toBe('legacy');
        expect(modern.getProtocolEra()).toBe('modern');
        expect(auto.getProtocolEra()).toBe('modern');
        const before = await survey(legacy, prepared);
        const after = await survey(modern, prepared);
        expect(after.tools).toEqual(before.tools);
        expect(after.prompts).toEqual(before.prompts);
        expect(after.templates).toEqual(before.templates);
        expect(after.cheap).toEqual(before.cheap);
        expect((await survey(auto, prepared)).tools).toEqual(before.tools);
        // Resources: the same listing, and the first one reads the same.
        if (legacy.getServerCapabilities()?.resources) {
          const listedBefore = (await legacy.listResources()).resources.map((r) => r.uri);
          const listedAfter = (await modern.listResources()).resources.map((r) => r.uri);
          expect(listedAfter).toEqual(listedBefore);
          if (listedBefore.length > 0) {
            const readBefore = await legacy.readResource({ uri: listedBefore[0]! });
            const readAfter = await modern.readResource({ uri: listedBefore[0]! });
            expect(readAfter.contents).toEqual(readBefore.contents);
          }
        }
        const modernTools = (await modern.listTools()).tools;
        for (const tool of modernTools) expect(tool.inputSchema, tool.name).toMatchObject({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' });
        for (const tool of (await legacy.listTools()).tools) expect(tool.inputSchema.$schema, tool.name).toBeUndefined();
        for (const client of [legacy, modern]) {
          if (!client.getServerCapabilities()?.resources) continue;
          await expect(client.readResource({ uri: 'nothing://at/all' })).rejects.toMatchObject({ code: -32602 });
        }
        await expect(modern.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({ code: -32602 });
      });
    }

    if (options.follows) {
      for (const transport of ['stdio', 'http'] as const) {
        for (const era of ['modern', 'legacy'] as const) {
          const how = era === 'modern' ? 'a listen stream' : 'resources/subscribe';
          it(`over ${transport}, ${how}: a change made right after the ${era === 'modern' ? 'acknowledgement' : 'answer'} is delivered, every time; refused resources are not acknowledged`, async () => {
            const followed = prepared.followed;
            if (!followed) throw new Error(`${target.name}: prepare() gives no followed resource, which erasSuite(target, { follows: true }) needs`);
            const client = await connect(era, over(transport));
            clients.push(client);
            await expectChangeAfterAck(client, followed);
            await expectRefusedNotFollowed(client, followed);
          });
        }
      }
    }

    it('over HTTP: 2026-07-28 requests hold no session, carry cache hints, and have their headers checked', async () => {
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const post = (headers: Record<string, string>): Promise<Response> =>
        fetch(http.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, ...headers },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }),
        });
      const ok = await post({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('mcp-session-id')).toBeNull();
      const body = await ok.text();
      const json = JSON.parse(body.startsWith('{') ? body : /data: (.*)/.exec(body)![1]!) as { result: { ttlMs?: number; cacheScope?: string; tools: unknown[] } };
      expect(json.result).toMatchObject({ cacheScope: 'private', ttlMs: 60_000 });
      expect(json.result.tools.length).toBeGreaterThan(0);
      // A request whose headers disagree with its body is refused.
      const mismatch = await post({ 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call' });
      expect(mismatch.status).toBe(400);
      expect(await mismatch.text()).toContain('-32020');
      // Without the credentials the server wants, nothing is served in this era either.
      const anonymous = await fetch(http.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope } }),
      });
      expect(anonymous.status).toBe(401);
    });
  });
}

/** A 2026-07-28 client (pinned) of a built bin over stdio, with the capabilities given. */
export async function connectModernStdio(bin: string, args: string[], options: { capabilities?: Record<string, unknown>; env?: Record<string, string | undefined> } = {}): Promise<Client> {
  const client = new Client({ name: 'suite-test-modern', version: '0' }, { capabilities: options.capabilities ?? {}, versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, ...args], env: childEnv(options.env), stderr: 'ignore' }));
  return client;
}

/** A 2026-07-28 client (pinned) of a server's HTTP endpoint. */
export async function connectModernHttp(url: string, options: { capabilities?: Record<string, unknown>; token?: string } = {}): Promise<Client> {
  const client = new Client({ name: 'suite-test-modern', version: '0' }, { capabilities: options.capabilities ?? {}, versionNegotiation: { mode: { pin: MODERN } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), options.token ? { requestInit: { headers: { authorization: `Bearer ${options.token}` } } } : {}));
  return client;
}

/**
 * Makes `change` happen until a notifications/resources/updated for `uri` arrives on the client's
 * listen stream (a change source may still be starting when the stream is acknowledged).
 */
export async function untilListenUpdate(client: Client, uri: string, change: (attempt: number) => Promise<void> | void, timeoutMs = 15_000): Promise<void> {
  let seen = false;
  const previous = client.fallbackNotificationHandler;
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    if (n.params.uri === uri) seen = true;
  });
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; !seen; attempt++) {
    if (Date.now() > deadline) throw new Error(`no notifications/resources/updated for ${uri} within ${timeoutMs} ms`);
    await change(attempt);
    const wait = Date.now() + 600;
    while (!seen && Date.now() < wait) await new Promise((r) => setTimeout(r, 25));
  }
  void previous;
}

/** Rounds of {@link expectChangeAfterAck}: the race it guards against lost a change in 3 of 9 runs. */
const CHANGE_ROUNDS = 4;

/**
 * The class test of a change made right after a subscription takes effect: `rounds` times, a
 * 2026-07-28 client opens a listen stream on `uri` (a 2025 client subscribes), changes the resource
 * the moment the acknowledgement (or the subscribe answer) is in, with no wait at all, and must
 * hear notifications/resources/updated for it. A server that acknowledges before its change
 * source is armed loses some of these changes.
 */
export async function expectChangeAfterAck(client: Client, followed: Pick<FollowedResource, 'uri' | 'change'>, options: { rounds?: number; timeoutMs?: number } = {}): Promise<void> {
  const rounds = options.rounds ?? CHANGE_ROUNDS;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const modern = client.getProtocolEra() === 'modern';
  let heard = 0;
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    if (n.params.uri === followed.uri) heard += 1;
  });
  for (let round = 0; round < rounds; round++) {
    let stop: () => Promise<unknown>;
    if (modern) {
      const subscription = await client.listen({ resourceSubscriptions: [followed.uri] });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual([followed.uri]);
      stop = () => subscription.close();
    } else {
      await client.subscribeResource({ uri: followed.uri });
      stop = () => client.unsubscribeResource({ uri: followed.uri });
    }
    const before = heard;
    await followed.change(round);
    const deadline = Date.now() + timeoutMs;
    while (heard === before) {
      if (Date.now() > deadline) {
        throw new Error(
          `round ${round + 1} of ${rounds}: no notifications/resources/updated for ${followed.uri} within ${timeoutMs} ms of a change made right after the ${modern ? 'listen acknowledgement' : 'subscribe answer'}`,
        );
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await stop();
    await quietFor(() => heard, 400);
  }
}

/** Waits until `count` has stayed the same for `ms` (a change's late, debounced notices have passed), at most 5 s. */
async function quietFor(count: () => number, ms: number): Promise<void> {
  let last = count();
  let since = Date.now();
  const giveUp = Date.now() + 5000;
  while (Date.now() - since < ms && Date.now() < giveUp) {
    await new Promise((r) => setTimeout(r, 50));
    if (count() !== last) {
      last = count();
      since = Date.now();
    }
  }
}

/**
 * What the server refuses to follow is never acknowledged: a listen stream naming `followed.uri`
 * and every refused URI is acknowledged for `followed.uri` alone, one naming only refused URIs for
 * none; in the 2025 era each refused resources/subscribe fails.
 */
export async function expectRefusedNotFollowed(client: Client, followed: Pick<FollowedResource, 'uri' | 'refused'>): Promise<void> {
  if (client.getProtocolEra() !== 'modern') {
    for (const uri of followed.refused) await expect(client.subscribeResource({ uri }), uri).rejects.toMatchObject({ code: expect.any(Number) });
    return;
  }
  const mixed = await client.listen({ resourceSubscriptions: [followed.uri, ...followed.refused] });
  expect(mixed.honoredFilter.resourceSubscriptions).toEqual([followed.uri]);
  await mixed.close();
  const refused = await client.listen({ resourceSubscriptions: followed.refused });
  expect(refused.honoredFilter.resourceSubscriptions ?? []).toEqual([]);
  await refused.close();
}
export type { FollowedResource } from './conformance.js';
