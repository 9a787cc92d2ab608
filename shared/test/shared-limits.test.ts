import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '@suite/test-kit/replicas';
import { CancelledError } from '../src/core/progress.js';
import type { Logger } from '../src/core/logging.js';
import { RedisSharedLimits, type RedisLimitsOptions } from '../src/replicas/redis-limits.js';
import { RedisLink } from '../src/replicas/redis-link.js';
import { MemorySharedLimits, type SharedLimits } from '../src/replicas/shared-limits.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** A scope as a server derives it from a credential. */
const SCOPE = 'https://api.example token-of-alice';

/** The warnings a replica's limits log. */
function warnings(): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { lines, log: { warning: (line: string) => void lines.push(line) } as unknown as Logger };
}

/** Runs `count` tasks of `scope` through the given limits (round robin), each 50 ms long: the most that ran at once. */
async function mostAtOnce(limits: SharedLimits[], scope: string, cap: number, count: number): Promise<number> {
  let running = 0;
  let most = 0;
  await Promise.all(
    Array.from({ length: count }, (_, i) =>
      limits[i % limits.length]!.withSlot(scope, cap, async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(50);
        running -= 1;
      }),
    ),
  );
  return most;
}

describe('MemorySharedLimits (one process)', () => {
  it('answers the limit in force that lifts last among the names asked, and forgets lifted ones', async () => {
    const limits = new MemorySharedLimits();
    const now = Date.now();
    await limits.recordLimit(SCOPE, 'core', { until: now + 60_000, detail: 'core used up' });
    await limits.recordLimit(SCOPE, 'all', { until: now + 120_000, detail: 'secondary' });
    await limits.recordLimit(SCOPE, 'core', { until: now + 10_000, detail: 'an earlier one is not kept' });
    expect(await limits.limitInForce(SCOPE, ['core', 'all'])).toEqual({ until: now + 120_000, detail: 'secondary' });
    expect(await limits.limitInForce(SCOPE, ['core'])).toEqual({ until: now + 60_000, detail: 'core used up' });
    expect(await limits.limitInForce(SCOPE, ['search'])).toBeUndefined();
    expect(await limits.limitInForce('another scope', ['core', 'all'])).toBeUndefined();
    await limits.recordLimit(SCOPE, 'search', { until: now - 1, detail: 'lifted' });
    expect(await limits.limitInForce(SCOPE, ['search'])).toBeUndefined();
  });

  it('runs at most `cap` tasks of a scope at once; other scopes have their own', async () => {
    const limits = new MemorySharedLimits();
    expect(await mostAtOnce([limits], SCOPE, 3, 12)).toBe(3);
    const [one, other] = await Promise.all([mostAtOnce([limits], 'one', 2, 6), mostAtOnce([limits], 'other', 2, 6)]);
    expect([one, other]).toEqual([2, 2]);
  });
});

describe('RedisSharedLimits (replicas sharing a Redis)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function privateRedis(): Promise<PrivateRedis> {
    const redis = await startPrivateRedis();
    closers.push(() => redis.stop());
    return redis;
  }

  /** A replica's limits on a link of its own; `lines` are what the limits log (the link logs for itself). */
  async function replica(url: string, options: RedisLimitsOptions = {}, connected = true): Promise<{ limits: RedisSharedLimits; lines: string[]; link: RedisLink }> {
    const link = new RedisLink(url, warnings().log, { prefix: 'test:' });
    closers.push(() => link.close());
    const { log, lines } = warnings();
    const made = { limits: new RedisSharedLimits(link, log, { secret: 'the deployment secret, 32 bytes or more', ...options }), lines, link };
    if (connected) await linkReady(made);
    return made;
  }

  /** Until the replica's link is ready (or, `false`, knows Redis is gone). */
  const linkReady = (r: { link: RedisLink }, ready = true): Promise<void> => expect.poll(() => r.link.ready, { timeout: 10_000 }).toBe(ready);

  async function keysOf(url: string): Promise<string[]> {
    const client = new Redis(url);
    try {
      return await client.keys('*');
    } finally {
      client.disconnect();
    }
  }

  it('a limit recorded by one replica is in force on another; keys are keyed hashes, never the scope', async () => {
    const redis = await privateRedis();
    const [a, b] = [await replica(redis.url), await replica(redis.url)];
    const until = Date.now() + 60_000;
    await a.limits.recordLimit(SCOPE, 'core', { until, detail: '5000 requests per hour used up' });
    expect(await b.limits.limitInForce(SCOPE, ['core', 'all'])).toEqual({ until, detail: '5000 requests per hour used up' });
    expect(await b.limits.limitInForce(SCOPE, ['search', 'all'])).toBeUndefined();
    // A limit that lifts earlier does not replace it.
    await b.limits.recordLimit(SCOPE, 'core', { until: until - 30_000, detail: 'earlier' });
    expect((await (await replica(redis.url)).limits.limitInForce(SCOPE, ['core']))?.detail).toBe('5000 requests per hour used up');
    const keys = await keysOf(redis.url);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(/^test:limit:[0-9a-f]{32}:core$/);
    expect(keys[0]).not.toContain('alice');
    // Another secret, other keys: replicas share only with the ones that share the secret.
    expect(await (await replica(redis.url, { secret: 'another deployment secret, also long' })).limits.limitInForce(SCOPE, ['core'])).toBeUndefined();
    // The key goes when the limit lifts.
    const client = new Redis(redis.url);
    closers.push(async () => client.disconnect());
    expect(await client.pttl(keys[0]!)).toBeGreaterThan(50_000);
  });

  it('counts slots across replicas; a waiting task cancelled never runs', async () => {
    const redis = await privateRedis();
    const replicas = [(await replica(redis.url)).limits, (await replica(redis.url)).limits];
    expect(await mostAtOnce(replicas, SCOPE, 3, 12)).toBe(3);
    // Without Redis each would hold 3 of its own (the control).
    expect(await mostAtOnce([new MemorySharedLimits(), new MemorySharedLimits()], SCOPE, 3, 12)).toBe(6);
    let release!: () => void;
    const held = replicas[0]!.withSlot(SCOPE, 1, () => new Promise<void>((r) => (release = r)));
    await sleep(50);
    const controller = new AbortController();
    let ran = false;
    const waiting = replicas[1]!.withSlot(SCOPE, 1, async () => void (ran = true), controller.signal);
    await sleep(100);
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(CancelledError);
    release();
    await held;
    expect(ran).toBe(false);
  });

  it('a replica that dies holding slots gives them back within its lease', async () => {
    const redis = await privateRedis();
    const dying = await replica(redis.url, { leaseMs: 600 });
    const survivor = await replica(redis.url, { leaseMs: 600 });
    void dying.limits.withSlot(SCOPE, 1, () => new Promise(() => undefined));
    await sleep(100);
    await dying.link.close();
    const started = Date.now();
    await survivor.limits.withSlot(SCOPE, 1, async () => undefined);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThan(200);
    expect(waited).toBeLessThan(3_000);
  });

  it('a held slot is renewed: a task longer than the lease keeps it', async () => {
    const redis = await privateRedis();
    const [a, b] = [(await replica(redis.url, { leaseMs: 600 })).limits, (await replica(redis.url, { leaseMs: 600 })).limits];
    let bRan = 0;
    // Three leases long: held only if renewed.
    const long = a.withSlot(SCOPE, 1, () => sleep(1_800));
    await sleep(50);
    const started = Date.now();
    await b.withSlot(SCOPE, 1, async () => void (bRan = Date.now() - started));
    await long;
    expect(bRan).toBeGreaterThan(1_500);
  });

  it('Redis stopped: limits are kept alone at once, said once; Redis back: shared again, said once', async () => {
    const redis = await privateRedis();
    const a = await replica(redis.url);
    const b = await replica(redis.url);
    await redis.stop();
    await linkReady(a, false);
    const started = Date.now();
    await a.limits.recordLimit(SCOPE, 'core', { until: Date.now() + 60_000, detail: 'learned alone' });
    expect((await a.limits.limitInForce(SCOPE, ['core']))?.detail).toBe('learned alone');
    expect(await mostAtOnce([a.limits], SCOPE, 2, 6)).toBe(2);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(a.lines).toEqual(['Redis is unreachable: upstream limits (rate limits, requests in flight) are kept by this replica alone until it is back']);
    await redis.start();
    await Promise.all([linkReady(a), linkReady(b)]);
    expect(await b.limits.limitInForce(SCOPE, ['core'])).toBeUndefined();
    await a.limits.recordLimit(SCOPE, 'all', { until: Date.now() + 60_000, detail: 'learned together' });
    expect((await b.limits.limitInForce(SCOPE, ['all']))?.detail).toBe('learned together');
    expect(a.lines).toHaveLength(2);
    expect(a.lines[1]).toMatch(/^Redis is back: upstream limits are shared/);
  });

  it('Redis stalls (CLIENT PAUSE): a call waits at most one command timeout (1 s), the next ones not at all, and sharing resumes after', async () => {
    const redis = await privateRedis();
    const a = await replica(redis.url);
    const b = await replica(redis.url);
    const admin = new Redis(redis.url);
    closers.push(async () => admin.disconnect());
    await admin.call('CLIENT', 'PAUSE', '1500', 'ALL');
    let started = Date.now();
    await a.limits.recordLimit(SCOPE, 'core', { until: Date.now() + 60_000, detail: 'learned while Redis stalls' });
    expect(Date.now() - started).toBeLessThan(1_500);
    started = Date.now();
    for (let i = 0; i < 5; i++) expect((await a.limits.limitInForce(SCOPE, ['core']))?.detail).toBe('learned while Redis stalls');
    await a.limits.withSlot(SCOPE, 1, async () => undefined);
    expect(Date.now() - started).toBeLessThan(200);
    expect(a.lines).toEqual([expect.stringMatching(/^Redis is unreachable: upstream limits/)]);
    // After the pause, and the replica's wait before it asks Redis again, it shares once more.
    await sleep(2_500);
    await a.limits.recordLimit(SCOPE, 'all', { until: Date.now() + 60_000, detail: 'learned together' });
    expect((await b.limits.limitInForce(SCOPE, ['all']))?.detail).toBe('learned together');
    expect(a.lines[1]).toMatch(/^Redis is back/);
  });

  it('a Redis that accepts connections and never answers: no call waits for it', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => void sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    closers.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    });
    const { limits, lines } = await replica(`redis://127.0.0.1:${(silent.address() as { port: number }).port}`, {}, false);
    let started = Date.now();
    await limits.recordLimit(SCOPE, 'core', { until: Date.now() + 60_000, detail: 'learned alone' });
    expect(Date.now() - started).toBeLessThan(200);
    started = Date.now();
    for (let i = 0; i < 5; i++) {
      expect((await limits.limitInForce(SCOPE, ['core']))?.detail).toBe('learned alone');
      await limits.withSlot(SCOPE, 1, async () => undefined);
    }
    expect(Date.now() - started).toBeLessThan(200);
    expect(lines).toHaveLength(1);
  });
});
