import { ConcurrencyLimit } from '../process/concurrency.js';

/**
 * Limits an upstream imposes on a credential (a GitHub token), kept where every session, and with
 * `--redis-url` every replica, of a server sees them: what the upstream said (a rate limit in force
 * until a time) and how many requests are in flight. A server asks before a request leaves and
 * tells after an answer; it never names the credential itself, only a scope derived from it, and
 * the Redis implementation hashes that scope again with a key before it becomes a Redis key.
 */

/** A limit the upstream announced: in force until `until` (Date.now() milliseconds). */
export interface KnownLimit {
  until: number;
  /** What it is, for messages ("5000 requests per hour used up"). */
  detail: string;
}

export interface SharedLimits {
  /** Of the limits named `names` under `scope`, the one in force that lifts last, if any. */
  limitInForce(scope: string, names: readonly string[]): Promise<KnownLimit | undefined>;
  /** Records a limit; one already known under the same name that lifts later is kept. */
  recordLimit(scope: string, name: string, limit: KnownLimit): Promise<void>;
  /**
   * Runs `task` while holding one of `cap` slots of `scope`; the others wait in arrival order.
   * Aborting `signal` while waiting throws CancelledError and the task never starts.
   */
  withSlot<T>(scope: string, cap: number, task: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** The limits of one process: the default, and what a shared implementation falls back on. */
export class MemorySharedLimits implements SharedLimits {
  private readonly known = new Map<string, Map<string, KnownLimit>>();
  private readonly slots = new Map<string, { limit: ConcurrencyLimit; users: number }>();

  /** limitInForce without the promise, for a caller that has the answer at hand. */
  limitNow(scope: string, names: readonly string[], now = Date.now()): KnownLimit | undefined {
    const limits = this.known.get(scope);
    if (!limits) return undefined;
    let found: KnownLimit | undefined;
    for (const name of names) {
      const limit = limits.get(name);
      if (limit && limit.until <= now) limits.delete(name);
      else if (limit && (!found || limit.until > found.until)) found = limit;
    }
    // A process serving many scopes keeps only the limits still in force.
    if (limits.size === 0) this.known.delete(scope);
    return found;
  }

  async limitInForce(scope: string, names: readonly string[]): Promise<KnownLimit | undefined> {
    return this.limitNow(scope, names);
  }

  recordNow(scope: string, name: string, limit: KnownLimit): void {
    let limits = this.known.get(scope);
    if (!limits) {
      limits = new Map();
      this.known.set(scope, limits);
    }
    const current = limits.get(name);
    if (!current || current.until < limit.until) limits.set(name, { until: limit.until, detail: limit.detail });
  }

  async recordLimit(scope: string, name: string, limit: KnownLimit): Promise<void> {
    this.recordNow(scope, name, limit);
  }

  async withSlot<T>(scope: string, cap: number, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const key = `${cap} ${scope}`;
    let entry = this.slots.get(key);
    if (!entry) {
      entry = { limit: new ConcurrencyLimit(cap), users: 0 };
      this.slots.set(key, entry);
    }
    const held = entry;
    held.users += 1;
    try {
      return await held.limit.run(task, signal);
    } finally {
      held.users -= 1;
      // An idle scope is forgotten: a process that saw many credentials keeps none of them.
      if (held.users === 0 && this.slots.get(key) === held) this.slots.delete(key);
    }
  }
}

let processLimits: SharedLimits | undefined;

/** Sets the process's limits (the CLI does, for --redis-url); every later `sharedLimits()` answers them. */
export function setProcessSharedLimits(limits: SharedLimits | undefined): void {
  processLimits = limits;
}

/** The process's limits: shared through Redis with --redis-url, this process's alone otherwise. */
export function sharedLimits(): SharedLimits {
  processLimits ??= new MemorySharedLimits();
  return processLimits;
}
