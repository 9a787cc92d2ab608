import { randomBytes, randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Logger, SuiteServer, serveHttp, type RunningHttp } from '../src/index.js';
import { MemorySecretStore, RedisSecretStore, SecretSealer } from '../src/auth/index.js';
import { RedisLink } from '../src/replicas/redis-link.js';

const ERAS = ['2025-11-25', '2026-07-28'] as const;

describe('sealed secret stores', () => {
  it('seal with AES-256-GCM bound to the record name: another name, another key or a flipped byte opens nothing', () => {
    const key = randomBytes(32);
    const sealer = new SecretSealer(key);
    const sealed = sealer.seal('token:alice', 'gho_secretvalue123');
    expect(sealed).not.toContain('gho_secretvalue123');
    expect(sealer.open('token:alice', sealed)).toBe('gho_secretvalue123');
    expect(sealer.open('token:mallory', sealed)).toBeUndefined();
    expect(new SecretSealer(randomBytes(32)).open('token:alice', sealed)).toBeUndefined();
    const parts = sealed.split('.');
    const body = Buffer.from(parts[3]!, 'base64url');
    body[0]! ^= 1;
    expect(sealer.open('token:alice', [parts[0], parts[1], parts[2], body.toString('base64url')].join('.'))).toBeUndefined();
    expect(sealer.seal('token:alice', 'x')).not.toBe(sealer.seal('token:alice', 'x'));
    expect(() => new SecretSealer(randomBytes(16))).toThrow(/32 bytes/);
  });

  it('keep values until their TTL, in memory and in Redis (where another process with the same key reads them)', async () => {
    const memory = new MemorySecretStore(new SecretSealer(randomBytes(32)));
    await memory.set('a', 'one', 60);
    await memory.set('b', 'two', 0.05);
    expect(await memory.get('a')).toBe('one');
    await new Promise((r) => setTimeout(r, 80));
    expect(await memory.get('b')).toBeUndefined();
    await memory.delete('a');
    expect(await memory.get('a')).toBeUndefined();

    const prefix = `suite-test-secrets-${randomUUID()}:`;
    const key = randomBytes(32);
    const log = new Logger('secrets-test');
    const [one, two] = [new RedisLink('redis://127.0.0.1:6379', log, { prefix }), new RedisLink('redis://127.0.0.1:6379', log, { prefix })];
    try {
      await expect.poll(() => one.ready && two.ready, { timeout: 5000 }).toBe(true);
      await new RedisSecretStore(one, 'ns', new SecretSealer(key)).set('token:alice', 'gho_redisvalue456', 60);
      expect(await new RedisSecretStore(two, 'ns', new SecretSealer(key)).get('token:alice')).toBe('gho_redisvalue456');
      expect(await new RedisSecretStore(two, 'ns', new SecretSealer(randomBytes(32))).get('token:alice')).toBeUndefined();
      const raw = await one.run((redis) => redis.get(`${prefix}secrets:ns:token:alice`));
      expect(raw).toMatch(/^v1\./);
      expect(raw).not.toContain('gho_redisvalue456');
      await new RedisSecretStore(two, 'ns', new SecretSealer(key)).delete('token:alice');
      expect(await new RedisSecretStore(one, 'ns', new SecretSealer(key)).get('token:alice')).toBeUndefined();
    } finally {
      await one.run((redis) => redis.del(`${prefix}secrets:ns:token:alice`));
      await Promise.all([one.close(), two.close()]);
    }
  });
});

describe('URL-mode elicitation and server routes over HTTP', () => {
  let http: RunningHttp | undefined;
  afterEach(async () => {
    await http?.close();
    http = undefined;
  });

  const start = async (): Promise<RunningHttp> => {
    http = await serveHttp(
      () => {
        const server = new SuiteServer({ name: '@suite/server-url-elicitation', version: '0' });
        server.tool({
          name: 'connect',
          description: 'Asks the user to visit a link.',
          input: z.object({}),
          annotations: { title: 'Connect', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
          handler: async (_args, ctx) => {
            if (!ctx.client.elicitationUrl) return `visit https://upstream.example/authorize yourself`;
            const answer = await ctx.client.elicitUrl({ message: 'Sign in upstream', url: 'https://upstream.example/authorize?x=1', elicitationId: 'el-1' });
            return `answered ${answer.action}`;
          },
        });
        return server;
      },
      {
        port: 0,
        host: '127.0.0.1',
        log: new Logger('url-elicitation'),
        routes: [{ method: 'GET', path: '/callback/upstream', handle: async (_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('route answered') }],
      },
    );
    return http;
  };

  it('asks clients that declared URL mode, in both eras; others get ctx.client.elicitationUrl false', async () => {
    const running = await start();
    for (const era of ERAS) {
      const client = new Client({ name: 'url', version: '0' }, { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
      const asked: Record<string, unknown>[] = [];
      client.setRequestHandler('elicitation/create', async (request) => {
        asked.push(request.params as Record<string, unknown>);
        return { action: 'accept' };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(running.url)));
      try {
        expect((await client.callTool({ name: 'connect', arguments: {} })).content).toEqual([{ type: 'text', text: 'answered accept' }]);
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatchObject({ message: 'Sign in upstream', url: 'https://upstream.example/authorize?x=1' });
        if (era === '2025-11-25') expect(asked[0]).toMatchObject({ mode: 'url', elicitationId: 'el-1' });
      } finally {
        await client.close();
      }
      const formOnly = new Client({ name: 'form', version: '0' }, { capabilities: { elicitation: {} }, versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
      await formOnly.connect(new StreamableHTTPClientTransport(new URL(running.url)));
      try {
        expect((await formOnly.callTool({ name: 'connect', arguments: {} })).content).toEqual([{ type: 'text', text: 'visit https://upstream.example/authorize yourself' }]);
      } finally {
        await formOnly.close();
      }
    }
  });

  it('answers a server route without credentials or Origin checks, keeps Host checks, and refuses to shadow MCP paths', async () => {
    const running = await start();
    const routeUrl = new URL('/callback/upstream', running.url);
    const answer = await fetch(routeUrl, { headers: { origin: 'https://elsewhere.example' } });
    expect(answer.status).toBe(200);
    expect(await answer.text()).toBe('route answered');
    expect((await fetch(routeUrl, { method: 'POST' })).status).toBe(404);
    // A DNS-rebinding page names another host: refused before the route.
    const foreignHost = await new Promise<number>((resolve, reject) => {
      request(routeUrl, { headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
    expect(foreignHost).toBe(403);
    await expect(serveHttp(() => new SuiteServer({ name: 'x', version: '0' }), { port: 0, host: '127.0.0.1', log: new Logger('x'), routes: [{ method: 'GET', path: '/mcp', handle: async () => undefined }] })).rejects.toThrow(/MCP's own/);
  });
});
