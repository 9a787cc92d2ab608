import { CancelledError } from '../core/progress.js';

interface Waiter {
  start: () => void;
  cancel: () => void;
}

/**
 * At most `limit` tasks at once; the others wait in arrival order. For work that costs a resource
 * per task while it runs (a child process, a connection upstream): 1,000 calls in flight then
 * hold `limit` of them, not 1,000, and the first callers are answered first instead of every
 * caller sharing the machine until all finish together.
 */
export class ConcurrencyLimit {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`limit must be a whole number of at least 1, got ${limit}.`);
  }

  /** Tasks running now. */
  get active(): number {
    return this.running;
  }

  /** Tasks waiting for a turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Runs `task` when a turn comes. Aborting `signal` while it waits throws CancelledError and the
   * task never starts; once started, the task sees the signal itself.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(new CancelledError());
    if (this.running < this.limit) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => waiter.cancel();
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        cancel: () => {
          const index = this.waiting.indexOf(waiter);
          if (index >= 0) this.waiting.splice(index, 1);
          reject(new CancelledError());
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private release(): void {
    const next = this.waiting.shift();
    // The turn passes straight to the next waiter: `running` stays as it is.
    if (next) next.start();
    else this.running -= 1;
  }
}
