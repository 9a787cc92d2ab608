import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { startHttpServer, type ConformanceTarget, type HttpServerProcess, type PreparedTarget } from './conformance.js';
import { connectModernHttp } from './eras.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A Redis of the test's own (the machine's redis-server binary on a free port, nothing on disk), to stop and start again. */
export interface PrivateRedis {
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const proc = child;
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${out}`)), 10_000);
      proc.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        if (/Ready to accept connections/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('error', (error) => reject(new Error(`redis-server could not run (is Redis installed?): ${error.message}`)));
    });
  };
  const stop = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, stop, start };
}

/** A file holding a fresh requestState key (48 random bytes, base64). */
export async function requestStateKeyFile(dir: string): Promise<string> {
  const file = path.join(dir, `state-${randomBytes(4).toString('hex')}.key`);
  await writeFile(file, randomBytes(48).toString('base64'), { mode: 0o600 });
  return file;
}

/** Replicas of a built bin over HTTP, each on its own port, with the same extra arguments. */
export async function startReplicas(bin: string, args: string[], count: number, env?: Record<string, string | undefined>): Promise<HttpServerProcess[]> {
  return Promise.all(Array.from({ length: count }, () => startHttpServer(bin, args, env)));
}

/** haproxy in front of replicas, from the repository's own deploy/haproxy.cfg.template. */
export interface LoadBalancer {
  url: string;
  /** Requests each replica answered so far (haproxy's own count), in replica order. */
  served(): Promise<number[]>;
  /** What haproxy's health checks make of each replica now (UP, DOWN, "UP 1/2" in transition...), in replica order. */
  states(): Promise<string[]>;
  stop(): Promise<void>;
}

/**
 * `port`: the load balancer's, chosen before the replicas start (they must accept its Host header:
 * `--allowed-host 127.0.0.1:<port>`); a free one otherwise.
 */
export async function startHaproxy(replicas: readonly HttpServerProcess[], workDir: string, port?: number): Promise<LoadBalancer> {
  port ??= await freePort();
  const template = await readFile(path.join(root, 'deploy', 'haproxy.cfg.template'), 'utf8');
  const servers = replicas.map((r, i) => `    server r${i + 1} 127.0.0.1:${r.port} check`).join('\n');
  const config = path.join(workDir, `haproxy-${port}.cfg`);
  await writeFile(config, template.replace('${PORT}', String(port)).replace('${SERVERS}', servers));
  const child = spawn('haproxy', ['-f', config, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr.on('data', (c: Buffer) => (log += c.toString()));
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) => reject(new Error(`haproxy could not run (apt-get install haproxy): ${error.message}`)));
    child.once('exit', (code) => reject(new Error(`haproxy exited (${code}):\n${log}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  const stats = async (): Promise<string> => (await fetch(`${base}/haproxy-stats;csv`)).text();
  // Up once every replica passed its health check.
  const deadline = Date.now() + 15_000;
  for (;;) {
    const csv = await Promise.race([stats().catch(() => ''), failed]);
    const up = csv.split('\n').filter((line) => line.startsWith('replicas,r') && line.split(',')[17] === 'UP').length;
    if (up === replicas.length) break;
    if (Date.now() > deadline) throw new Error(`haproxy did not see every replica up:\n${csv}\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url: `${base}/mcp`,
    served: async () => {
      const rows = (await stats()).split('\n').filter((line) => line.startsWith('replicas,r'));
      return rows.map((row) => Number(row.split(',')[7]));
    },
    states: async () => (await stats()).split('\n').filter((line) => line.startsWith('replicas,r')).map((row) => row.split(',')[17]!),
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** What a listen stream follows: one resource's updates, or the list of resources. */
export type Followed = { uri: string } | 'list';

/**
 * Whether `client` (its listen stream already open) hears `followed` change while `change` is made
 * again every 500 ms, for at most `timeoutMs`.
 */
export async function hearsChange(client: Client, followed: Followed, change: (attempt: number) => Promise<void>, timeoutMs: number): Promise<boolean> {
  let heard = false;
  if (followed === 'list') {
    client.setNotificationHandler('notifications/resources/list_changed', () => void (heard = true));
  } else {
    client.setNotificationHandler('notifications/resources/updated', (n) => void (heard ||= n.params.uri === followed.uri));
  }
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; !heard && Date.now() < deadline; attempt++) {
    await change(attempt);
    const wait = Math.min(deadline, Date.now() + 500);
    while (!heard && Date.now() < wait) await new Promise((r) => setTimeout(r, 25));
  }
  return heard;
}

/** What a server's replica tests add to its conformance target. */
export interface ReplicaHooks {
  /**
   * A change a listen stream on replica A follows. Omitted for a server whose resources announce
   * no change (say why in the test file).
   */
  listen?: {
    /** The change, for the test's name ("a table created through replica B"). */
    what: string;
    /** What to follow (a client of replica A is at hand to list resources). */
    follow(client: Client, prepared: PreparedTarget): Promise<Followed>;
    /** Makes the change, through replica B's client where the server makes changes; called again until A hears it. */
    change(writer: Client, attempt: number, prepared: PreparedTarget): Promise<void>;
    /**
     * 'redis': only the change relay brings it to A, so without Redis A hears nothing. 'world':
     * A sees the change itself (the file, the database both replicas use), with or without Redis.
     */
    carriedBy: 'redis' | 'world';
  };
}

/** A pair of replicas of a built bin, and a 2026-07-28 client of each. */
interface ReplicaPair {
  a: Client;
  b: Client;
  replicas: HttpServerProcess[];
}

/**
 * Two replicas of a server's built bin over HTTP, in the 2026-07-28 era: with `--redis-url` (a
 * Redis of the test's own) requests alternate between them and are answered alike, a listen stream
 * on one hears a change made through the other, and Redis stopped and started again leaves every
 * request answered within a bounded time, the degradation said once, and the sharing back by
 * itself; the same replicas without Redis are the control.
 */
export function replicaSuite(target: ConformanceTarget, hooks: ReplicaHooks = {}): void {
  describe(`${target.name} replicas (the built bin over HTTP, --redis-url), in the 2026-07-28 era`, () => {
    const closers: (() => Promise<unknown>)[] = [];
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    });

    async function prepare(): Promise<PreparedTarget> {
      const prepared = await target.prepare();
      closers.push(() => prepared.cleanup());
      return prepared;
    }

    async function privateRedis(): Promise<PrivateRedis> {
      const redis = await startPrivateRedis();
      closers.push(() => redis.stop());
      return redis;
    }

    async function pair(prepared: PreparedTarget, redisUrl: string | undefined): Promise<ReplicaPair> {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'suite-replicas-'));
      closers.push(() => rm(dir, { recursive: true, force: true }));
      const auth = prepared.http ?? { auth: 'gate' as const };
      const token = auth.auth === 'gate' ? `replicas-${randomBytes(8).toString('hex')}` : auth.token;
      const args = [
        ...prepared.args,
        ...(auth.auth === 'gate' ? ['--auth-token', token] : []),
        '--request-state-key-file',
        await requestStateKeyFile(dir),
        ...(redisUrl ? ['--redis-url', redisUrl, '--redis-prefix', `suite-test-${process.pid}-${randomBytes(4).toString('hex')}:`] : []),
      ];
      const replicas = await startReplicas(target.bin, args, 2, { ...prepared.env, SUITE_LOG_LEVEL: 'warning' });
      for (const r of replicas) closers.push(() => r.server.stop());
      const [a, b] = await Promise.all(replicas.map((r) => connectModernHttp(r.url, { token })));
      closers.push(() => a!.close(), () => b!.close());
      return { a: a!, b: b!, replicas };
    }

    const cheap = async (client: Client, prepared: PreparedTarget): Promise<unknown> => {
      const answer = await client.callTool(prepared.cheapCall);
      expect(answer.isError, JSON.stringify(answer.content)).toBeFalsy();
      return answer.content;
    };

    const listen = hooks.listen;
    /** Whether a listen stream on A hears the change made through B. */
    const across = async (hook: NonNullable<ReplicaHooks['listen']>, prepared: PreparedTarget, { a, b }: ReplicaPair, timeoutMs: number): Promise<boolean> => {
      const followed = await hook.follow(a, prepared);
      const subscription = await a.listen(followed === 'list' ? { resourcesListChanged: true } : { resourceSubscriptions: [followed.uri] });
      closers.push(() => subscription.close());
      return hearsChange(a, followed, (attempt) => hook.change(b, attempt, prepared), timeoutMs);
    };

    it('answers requests alternating between the two replicas alike', async () => {
      const prepared = await prepare();
      const { a, b } = await pair(prepared, (await privateRedis()).url);
      const tools = (await a.listTools()).tools.map((t) => t.name);
      expect((await b.listTools()).tools.map((t) => t.name)).toEqual(tools);
      const first = await cheap(a, prepared);
      for (let i = 1; i < 6; i++) expect(await cheap(i % 2 === 0 ? a : b, prepared)).toEqual(first);
    });

    if (listen) {
      const control = listen.carriedBy === 'redis' ? 'without Redis it does not' : 'A sees the change itself, so it does without Redis too';
      it(`a listen stream on replica A hears ${listen.what}; ${control}`, async () => {
        const prepared = await prepare();
        expect(await across(listen, prepared, await pair(prepared, (await privateRedis()).url), 10_000)).toBe(true);
        // The control: the same replicas without Redis.
        expect(await across(listen, prepared, await pair(prepared, undefined), listen.carriedBy === 'redis' ? 2_500 : 10_000)).toBe(listen.carriedBy === 'world');
      });
    }

    it('Redis stopped: both replicas answer on alone within a bounded time and say so once each; Redis back: they share again by themselves', async () => {
      const prepared = await prepare();
      const redis = await privateRedis();
      const joined = await pair(prepared, redis.url);
      await cheap(joined.a, prepared);
      await redis.stop();
      for (let i = 0; i < 6; i++) {
        const started = Date.now();
        await cheap(i % 2 === 0 ? joined.a : joined.b, prepared);
        expect(Date.now() - started).toBeLessThan(2_000);
      }
      if (listen) {
        // A change made meanwhile is made (only not shared).
        const started = Date.now();
        await listen.change(joined.b, 0, prepared);
        expect(Date.now() - started).toBeLessThan(2_000);
      }
      const stderr = (r: HttpServerProcess): string => r.server.stderr();
      await expect.poll(() => joined.replicas.every((r) => /Redis is unreachable/.test(stderr(r))), { timeout: 10_000 }).toBe(true);
      await redis.start();
      await expect.poll(() => joined.replicas.every((r) => /Redis is back/.test(stderr(r))), { timeout: 15_000 }).toBe(true);
      if (listen?.carriedBy === 'redis') expect(await across(listen, prepared, joined, 10_000)).toBe(true);
      await cheap(joined.b, prepared);
      for (const r of joined.replicas) {
        // Once per replica and what it shares (the change relay; the upstream limits where a server keeps them), not once per request.
        const said = (stderr(r).match(/Redis is unreachable(?: \([^)]*\))?: [^(,;]+/g) ?? []).map((line) => line.replace(/ \([^)]*\)/, ''));
        expect(said.length).toBeGreaterThan(0);
        expect(new Set(said).size, said.join('\n')).toBe(said.length);
      }
    });
  });
}
