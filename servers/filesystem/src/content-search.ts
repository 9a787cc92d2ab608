import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { WorkerPool, type TimeBudget } from '@suite/shared';
import type { ContentQuery, FileSearchOutcome } from './file-search.js';
import { decodeOutcomes, type FromSearchWorker, type ToSearchWorker } from './search-protocol.js';

/**
 * search_content's workers, seen from the main thread: files go out in batches to worker threads
 * (worker/search-worker.ts) that open, read and search them synchronously, one per core, while
 * the main thread walks the tree; each batch's outcomes come back as a promise, which the caller
 * takes in walk order. The workers belong to the process (a shared pool: concurrent calls share
 * them, never more than one per core, at most 4) and are kept 30 s after their last use,
 * unreferenced, so a model's second search pays no thread start.
 */

/** The worker script sits next to this module's output (dist/worker/, the bundled bin included). */
function workerUrl(): URL {
  // Under vitest this module runs from its TypeScript source, which a worker thread cannot load;
  // the tests' global setup builds dist first, and the worker comes from there.
  if (import.meta.url.endsWith('.ts')) return new URL('../dist/worker/search-worker.js', import.meta.url);
  return new URL('./worker/search-worker.js', import.meta.url);
}

/**
 * A worker's heap: one file's chunk and one batch's matches, at most maxResults + 1 of them (a
 * batch stops there), each with up to 41 lines of 400 characters: what the main thread held for
 * one file before the search moved to workers.
 */
const WORKER_HEAP_MB = 512;
/** Workers of the process: one per core, at most 4 (reading files scales no further here). */
const MAX_WORKERS = Math.max(1, Math.min(4, availableParallelism()));
/** Batches a call may have waiting per worker: enough to keep it busy between the main thread's turns. */
const QUEUE_PER_WORKER = 3;
/** How long a stopped worker is given to answer before it is terminated (a regular expression stuck on one line). */
const STOP_GRACE_MS = 1000;

let pool: WorkerPool | undefined;

/** The process's search workers (created on first use). */
export function searchWorkers(): WorkerPool {
  pool ??= new WorkerPool({
    url: workerUrl(),
    shared: true,
    max: MAX_WORKERS,
    idleMs: 30_000,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 },
  });
  return pool;
}

let jobs = 0;

interface Route {
  message(message: FromSearchWorker): void;
  fail(error: unknown): void;
}

/** The calls a worker serves, by job: one listener per worker passes each answer to its call. */
const routes = new WeakMap<Worker, Map<number, Route>>();
/** When each worker last answered anything: a worker that answers is not stuck, however long its queue. */
const lastAnswer = new WeakMap<Worker, number>();

/** Sends a job's answers from a worker to `to`; returns what stops it. */
function route(worker: Worker, job: number, to: Route): () => void {
  let jobsOf = routes.get(worker);
  if (!jobsOf) {
    const all = new Map<number, Route>();
    jobsOf = all;
    routes.set(worker, all);
    const failAll = (error: unknown): void => {
      for (const r of [...all.values()]) r.fail(error);
    };
    worker.on('message', (message: FromSearchWorker) => {
      lastAnswer.set(worker, Date.now());
      all.get(message.job)?.message(message);
    });
    worker.on('error', failAll).on('exit', () => failAll(new Error('the search worker exited unexpectedly')));
  }
  jobsOf.set(job, to);
  return () => void jobsOf.delete(job);
}

interface Pending {
  resolve(outcomes: FileSearchOutcome[]): void;
  reject(error: unknown): void;
}

interface Lane {
  worker: Worker;
  pending: Map<number, Pending>;
  failed: boolean;
  /** Called once nothing is outstanding. */
  whenIdle: (() => void)[];
  /** Removes this call's listeners from the worker. */
  detach(): void;
}

/** One search_content call's use of the workers. Close it in a `finally`. */
export class SearchRun {
  private readonly job = ++jobs;
  private readonly stopFlag = new Int32Array(new SharedArrayBuffer(4));
  private readonly lanes: Lane[] = [];
  private nextBatch = 0;
  private readonly settled = new WeakSet<Promise<FileSearchOutcome[]>>();
  private readonly interrupt: Promise<never>;
  private readonly cleanup: () => void;

  constructor(
    private readonly query: ContentQuery,
    private readonly roots: readonly string[],
    budget: TimeBudget,
  ) {
    // Rejects at a cancellation or once the time is up, whatever the workers are doing.
    let timer: NodeJS.Timeout | undefined;
    let fire: (() => void) | undefined;
    this.interrupt = new Promise<never>((_, reject) => {
      fire = (): void => {
        try {
          budget.check();
        } catch (error) {
          // Cancelled, or the time is up: the budget says which.
          this.stop();
          reject(error);
          return;
        }
        // The timer's clock ran ahead of the budget's (Date.now()) by a millisecond: not up yet by
        // the budget's reckoning, which is what the answer must say.
        timer = setTimeout(fire!, 1);
      };
      budget.signal.addEventListener('abort', fire, { once: true });
      timer = setTimeout(fire, Math.max(0, budget.deadline - Date.now()) + 1);
    });
    this.interrupt.catch(() => undefined);
    this.cleanup = () => {
      clearTimeout(timer);
      if (fire) budget.signal.removeEventListener('abort', fire);
    };
  }

  /** Whether another batch can go out without waiting for one to come back. */
  get canTakeMore(): boolean {
    let queued = 0;
    for (const lane of this.lanes) queued += lane.pending.size;
    return queued < MAX_WORKERS * QUEUE_PER_WORKER;
  }

  /**
   * Searches files in a worker, directory by directory (`names[i]` in `directories[i]`, absolute
   * real paths); each file stops after `maxMatches` matches. The outcomes come in the same order.
   */
  submit(directories: string[], names: string[][], maxMatches: number): Promise<FileSearchOutcome[]> {
    const lane = this.laneFor();
    const batch = this.nextBatch++;
    const promise = new Promise<FileSearchOutcome[]>((resolve, reject) => lane.pending.set(batch, { resolve, reject }));
    const settle = (): void => void this.settled.add(promise);
    promise.then(settle, settle);
    this.send(lane, { type: 'files', job: this.job, batch, directories, names, maxMatches });
    return promise;
  }

  /** Whether a batch's outcomes are in (taking them then does not wait). */
  done(batch: Promise<FileSearchOutcome[]>): boolean {
    return this.settled.has(batch);
  }

  /** `promise`, unless the call is cancelled or runs out of time first (then the error that says so). */
  wait<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([promise, this.interrupt]);
  }

  /** Tells the workers to stop this call's files at their next chunk. */
  stop(): void {
    Atomics.store(this.stopFlag, 0, 1);
  }

  /**
   * Gives the workers back, without making the call wait: at once when nothing is outstanding,
   * else once they answer (they are told to stop), or terminated if they do not within a moment.
   */
  close(): void {
    this.cleanup();
    if (this.lanes.some((lane) => lane.pending.size > 0)) this.stop();
    for (const lane of this.lanes.splice(0)) {
      const giveBack = (): void => {
        lane.detach();
        if (!lane.failed) this.send(lane, { type: 'end', job: this.job });
        searchWorkers().release(lane.worker, !lane.failed);
      };
      if (lane.pending.size === 0 || lane.failed) {
        giveBack();
        continue;
      }
      // A worker shared with other calls may take a while to reach this call's tasks (they then
      // end at once: the stop flag is set); only one that answers nothing for a while is stuck.
      let timer: NodeJS.Timeout;
      const check = (): void => {
        if (Date.now() - (lastAnswer.get(lane.worker) ?? 0) < STOP_GRACE_MS) {
          timer = setTimeout(check, STOP_GRACE_MS);
          timer.unref();
          return;
        }
        lane.failed = true;
        giveBack();
      };
      timer = setTimeout(check, STOP_GRACE_MS);
      timer.unref();
      lane.whenIdle.push(() => {
        clearTimeout(timer);
        giveBack();
      });
    }
  }

  /** The least busy of this call's workers; another one joins while every one has work waiting. */
  private laneFor(): Lane {
    let best: Lane | undefined;
    for (const lane of this.lanes) if (!lane.failed && (!best || lane.pending.size < best.pending.size)) best = lane;
    if (best && (best.pending.size === 0 || this.lanes.length >= MAX_WORKERS)) return best;
    const worker = searchWorkers().lease();
    const same = this.lanes.find((lane) => lane.worker === worker);
    if (same) {
      // Every worker of the process is busy and this call already holds the one it was lent.
      searchWorkers().release(worker);
      return best ?? same;
    }
    const lane: Lane = { worker, pending: new Map(), failed: false, whenIdle: [], detach: () => undefined };
    const idle = (): void => {
      if (lane.pending.size === 0) for (const f of lane.whenIdle.splice(0)) f();
    };
    const fail = (error: unknown): void => {
      lane.failed = true;
      for (const p of lane.pending.values()) p.reject(error);
      lane.pending.clear();
      idle();
    };
    lane.detach = route(worker, this.job, {
      message: (message) => {
        if (message.type === 'failed') return fail(new Error(`search worker: ${message.message}`));
        const p = lane.pending.get(message.batch);
        lane.pending.delete(message.batch);
        p?.resolve(decodeOutcomes(message.outcomes));
        idle();
      },
      fail,
    });
    this.lanes.push(lane);
    this.send(lane, { type: 'job', job: this.job, query: this.query, roots: [...this.roots], stop: this.stopFlag.buffer as SharedArrayBuffer });
    return lane;
  }

  private send(lane: Lane, message: ToSearchWorker): void {
    lane.worker.postMessage(message);
  }
}
