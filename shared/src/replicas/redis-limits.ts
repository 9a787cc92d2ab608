import { createHmac, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CancelledError } from '../core/progress.js';
import type { Logger } from '../core/logging.js';
import { UNAVAILABLE, type Answer, type RedisLink } from './redis-link.js';
import { MemorySharedLimits, type KnownLimit, type SharedLimits } from './shared-limits.js';

/**
 * The limits of every replica started with the same `--redis-url`: a limit one replica learned
 * stops the others' requests before they leave, and the slots of a scope are counted across
 * replicas. A slot is a lease in a sorted set that the holder renews while its request runs, so
 * a replica that dies gives its slots back within one lease.
 *
 * Redis is not waited for while it is known to be down, and after a command that failed or did
 * not answer in time (the link gives one a second) it is left alone for a while: each replica then
 * keeps its own limits (which it always keeps too), says so once, and shares again by itself.
 * Scopes become Redis keys only as an HMAC under the deployment's secret (the requestState key),
 * so a dump of Redis names no credential.
 */

/** Takes a slot if fewer than ARGV[1] unexpired leases are held: [key], [cap, leaseMs, id] -> 1 or 0. Redis's clock, not the replicas'. */
const TAKE_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

/** Extends a held lease: [key], [leaseMs, id]. */
const RENEW_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;

/** Records "UNTIL DETAIL" unless a limit that lifts later is there; it expires when it lifts: [key], [until, detail]. */
const RECORD_LIMIT = `
local current = redis.call('GET', KEYS[1])
if current then
  local lifts = tonumber(string.match(current, '^(%d+)'))
  if lifts and lifts >= tonumber(ARGV[1]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PXAT', ARGV[1])
return 1`;

export interface RedisLimitsOptions {
  /** Keys the HMAC that turns a scope into a key; replicas must share it (the requestState key). */
  secret?: string;
  /** How long a slot is held without renewal: a dead replica's slots come back within this. */
  leaseMs?: number;
  /** After a command failed or timed out, how long Redis is left alone before it is asked again. */
  retryAfterMs?: number;
}

export class RedisSharedLimits implements SharedLimits {
  /** This replica's own limits: always kept, and all there is while Redis is away. */
  private readonly local = new MemorySharedLimits();
  private readonly secret: string;
  private readonly leaseMs: number;
  private readonly retryAfterMs: number;
  private readonly digests = new Map<string, string>();
  /** Woken when a slot of this replica is given back, so its waiters need not wait for their next poll. */
  private readonly freed = new Set<() => void>();
  private alone = false;
  private quietUntil = 0;

  constructor(
    private readonly link: RedisLink,
    private readonly log: Logger,
    options: RedisLimitsOptions = {},
  ) {
    this.secret = options.secret ?? 'suite shared limits';
    this.leaseMs = options.leaseMs ?? 5_000;
    this.retryAfterMs = options.retryAfterMs ?? 2_000;
    // Back to Redis as soon as it is back: a limit learned meanwhile must not stay this replica's alone.
    link.onReady(() => (this.quietUntil = 0));
  }

  async limitInForce(scope: string, names: readonly string[]): Promise<KnownLimit | undefined> {
    const keys = names.map((name) => this.key('limit', scope, name));
    const values = await this.shared((redis) => redis.mget(...keys));
    const now = Date.now();
    values?.forEach((value, i) => {
      const match = value === null ? null : /^(\d+) ([\s\S]*)$/.exec(value);
      // Kept here too: the replica still knows it if Redis goes away before it lifts.
      if (match && Number(match[1]) > now) this.local.recordNow(scope, names[i]!, { until: Number(match[1]), detail: match[2]! });
    });
    return this.local.limitNow(scope, names, now);
  }

  async recordLimit(scope: string, name: string, limit: KnownLimit): Promise<void> {
    this.local.recordNow(scope, name, limit);
    const until = Math.ceil(limit.until);
    if (until > Date.now()) await this.shared((redis) => redis.eval(RECORD_LIMIT, 1, this.key('limit', scope, name), until, limit.detail));
  }

  withSlot<T>(scope: string, cap: number, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    // This replica's own cap first (it holds when Redis is away), then a lease counted across replicas.
    return this.local.withSlot(
      scope,
      cap,
      async () => {
        const release = await this.lease(this.key('slots', scope), cap, signal);
        try {
          return await task();
        } finally {
          release();
        }
      },
      signal,
    );
  }

  /** Waits for a lease of `key`; resolves with its release, or with a no-op when Redis is away (the local cap then stands alone). */
  private async lease(key: string, cap: number, signal: AbortSignal | undefined): Promise<() => void> {
    const id = randomUUID();
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) throw new CancelledError();
      const taken = await this.shared((redis) => redis.eval(TAKE_SLOT, 1, key, cap, this.leaseMs, id));
      if (taken === undefined) return () => undefined;
      if (taken === 1) break;
      await this.pause(Math.min(10 * 2 ** Math.min(attempt, 4), 100) * (0.5 + Math.random()), signal);
    }
    const renewal = setInterval(() => void this.shared((redis) => redis.eval(RENEW_SLOT, 1, key, this.leaseMs, id)), Math.max(50, Math.floor(this.leaseMs / 3)));
    renewal.unref();
    return () => {
      clearInterval(renewal);
      void this.shared((redis) => redis.zrem(key, id));
      for (const wake of [...this.freed]) wake();
    };
  }

  /** Sleeps `ms`, less when a slot of this replica is given back; CancelledError when `signal` aborts. */
  private pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.freed.delete(done);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        done();
        reject(new CancelledError());
      };
      const timer = setTimeout(done, ms);
      this.freed.add(done);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** A command's answer; undefined at once while Redis is known to be away or left alone after a failure. */
  private async shared<T>(command: (redis: Redis) => Promise<T>): Promise<T | undefined> {
    if (!this.link.ready || Date.now() < this.quietUntil) return this.fallBack();
    const answer: Answer<T> = await this.link.run(command);
    if (answer === UNAVAILABLE) {
      this.quietUntil = Date.now() + this.retryAfterMs;
      return this.fallBack();
    }
    if (this.alone) {
      this.alone = false;
      this.log.warning('Redis is back: upstream limits are shared with the other replicas again');
    }
    return answer;
  }

  private fallBack(): undefined {
    if (!this.alone) {
      this.alone = true;
      this.log.warning('Redis is unreachable: upstream limits (rate limits, requests in flight) are kept by this replica alone until it is back');
    }
    return undefined;
  }

  /** The Redis key of a scope: an HMAC of it, never the scope (which is derived from a credential). */
  private key(kind: 'limit' | 'slots', scope: string, name?: string): string {
    let digest = this.digests.get(scope);
    if (!digest) {
      digest = createHmac('sha256', this.secret).update(scope).digest('hex').slice(0, 32);
      if (this.digests.size > 10_000) this.digests.clear();
      this.digests.set(scope, digest);
    }
    return `${this.link.prefix}${kind}:${digest}${name === undefined ? '' : `:${name}`}`;
  }
}
