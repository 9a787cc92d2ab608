import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * Worker threads for scans, kept warm between calls and let go when idle. Starting a thread and
 * compiling its hot loops costs tens of milliseconds, and a model usually searches several times
 * in a row, so a worker nobody holds waits `idleMs` (unreferenced: it never keeps the process
 * alive, and uses no CPU) for the next lease before it ends. A worker that failed or had to be
 * terminated is never reused.
 *
 * Two ways to hold one: `shared` pools lend a worker to several calls at once (the worker tells
 * their jobs apart), never running more than `max`, so a thousand concurrent searches share two
 * threads instead of starting two thousand; otherwise each lease is a worker of its own, and
 * `max` only bounds the idle ones kept.
 */
export interface WorkerPoolOptions {
  /** The worker's script (a file next to the server's bin, so it ships in the package). */
  url: URL;
  /** Workers at most (shared pools), or idle workers kept (default 2). */
  max?: number;
  /** Whether one worker serves several leases at once. */
  shared?: boolean;
  /** How long a worker nobody holds is kept (default 30 s). */
  idleMs?: number;
  resourceLimits?: ResourceLimits;
}

interface Entry {
  worker: Worker;
  leases: number;
  timer?: NodeJS.Timeout;
  onExit: () => void;
}

export class WorkerPool {
  private readonly entries: Entry[] = [];
  private started = 0;

  constructor(private readonly options: WorkerPoolOptions) {}

  /** A worker to use: a warm one when there is one free (or, in a shared pool, the least busy), else a new one. */
  lease(): Worker {
    const max = this.options.max ?? 2;
    let best: Entry | undefined;
    for (const entry of this.entries) if (!best || entry.leases < best.leases) best = entry;
    if (!best || (best.leases > 0 && (!this.options.shared || this.entries.length < max))) best = this.start();
    best.leases++;
    if (best.timer) {
      clearTimeout(best.timer);
      best.timer = undefined;
      best.worker.ref();
    }
    return best.worker;
  }

  /**
   * Gives a lease back. `reusable` false (the job was cut short, the worker failed) ends the
   * worker; otherwise, once nobody holds it, it waits for the next lease.
   */
  release(worker: Worker, reusable = true): void {
    const entry = this.entries.find((e) => e.worker === worker);
    if (!entry) {
      void worker.terminate();
      return;
    }
    entry.leases--;
    if (!reusable) {
      this.end(entry);
      return;
    }
    if (entry.leases > 0) return;
    if (!this.options.shared && this.entries.filter((e) => e.leases === 0).length > (this.options.max ?? 2)) {
      this.end(entry);
      return;
    }
    worker.unref();
    entry.timer = setTimeout(() => this.end(entry), this.options.idleMs ?? 30_000);
    entry.timer.unref();
  }

  /** Workers alive now (held or idle). */
  get size(): number {
    return this.entries.length;
  }

  /** Workers started since the pool was made (tests see reuse with it). */
  get startedCount(): number {
    return this.started;
  }

  /** Ends every worker nobody holds, at once (tests, shutdown). */
  async drain(): Promise<void> {
    await Promise.all(this.entries.filter((e) => e.leases === 0).map((e) => this.end(e)));
  }

  private start(): Entry {
    this.started++;
    const worker = new Worker(this.options.url, this.options.resourceLimits ? { resourceLimits: this.options.resourceLimits } : {});
    // A worker that dies (out of memory, a crash, its idle time over) is simply forgotten; its holders see its exit themselves.
    const entry: Entry = { worker, leases: 0, onExit: () => this.forget(entry) };
    worker.once('exit', entry.onExit);
    this.entries.push(entry);
    return entry;
  }

  private end(entry: Entry): Promise<void> {
    this.forget(entry);
    return entry.worker.terminate().then(
      () => undefined,
      () => undefined,
    );
  }

  private forget(entry: Entry): void {
    const at = this.entries.indexOf(entry);
    if (at !== -1) this.entries.splice(at, 1);
    if (entry.timer) clearTimeout(entry.timer);
    entry.worker.off('exit', entry.onExit);
  }
}
