import { constants } from 'node:fs';
import { lstat, type FileHandle } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { CancelledError, ToolError, type PathGuard, type RequestContext } from '@suite/shared';
import { hardLinkRefusal } from './access.js';
import type { FormatSpec } from './formats/parsers.js';
import { GONE, type FileOutcome, type FromWorker, type ScanJob, type SearchMatch, type StatsResult, type ToWorker } from './scan-protocol.js';

/**
 * Runs a search or a statistics pass in a worker thread and gives the request what it needs
 * around it: files opened here through the path guard, one at a time, their descriptors handed
 * over; progress notifications; cancellation (the worker is terminated at once); and the time
 * budget, which the worker keeps by itself between chunks and which is enforced here by
 * terminating it shortly after the deadline when it cannot (a regular expression backtracking on
 * one line). Whatever matched before then is kept.
 *
 * A worker that finished its job normally stays warm for a while (one at most, not keeping the
 * process alive): a thread, its modules and its compiled hot loops cost tens of milliseconds per
 * start, and a model usually searches several times in a row. A worker that was terminated, or
 * that failed, is never reused.
 */

/** The worker script sits next to this module's output (dist/worker/, the bundled bin included). */
function workerUrl(): URL {
  // Under vitest this module runs from its TypeScript source, which a worker thread cannot load;
  // the tests' global setup builds dist first, and the worker comes from there.
  if (import.meta.url.endsWith('.ts')) return new URL('../dist/worker/scan-worker.js', import.meta.url);
  return new URL('./worker/scan-worker.js', import.meta.url);
}

/** How long past its deadline a worker that does not answer is given before it is terminated. */
const HARD_STOP_GRACE_MS = 1000;
/** The worker's heap: a scan holds a chunk, the matches and the statistics (both bounded), nothing more. */
const WORKER_HEAP_MB = 64;

export interface ScanTarget {
  /** Real path (opened through the guard). */
  real: string;
  /** As shown in results. */
  display: string;
  compressed: boolean;
  spec: FormatSpec;
  size: number;
}

export interface ScanReport {
  matches: SearchMatch[];
  stats?: StatsResult;
  files: { display: string; outcome: FileOutcome }[];
  /** Why the scan ended before covering everything. */
  stopped?: 'max-results' | 'time-budget';
  /** The worker had to be terminated at the deadline (stuck in a regular expression). */
  killed: boolean;
  bytesScanned: number;
  filesNotReached: number;
}

/** How long a worker that finished a job waits for the next before it is stopped. */
const IDLE_WORKER_MS = 30_000;

/** Scans currently running in this process (tests use it to see a cancelled scan stop). */
let running = 0;
export function runningScans(): number {
  return running;
}

let idle: { worker: Worker; timer: NodeJS.Timeout; onExit: () => void } | undefined;

function takeWorker(): Worker {
  if (idle) {
    const { worker, timer, onExit } = idle;
    idle = undefined;
    clearTimeout(timer);
    worker.off('exit', onExit);
    worker.ref();
    return worker;
  }
  return new Worker(workerUrl(), { resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 } });
}

/**
 * Keeps a worker that ended its job normally for the next one (its job's listeners already
 * removed: only ours, since Node's own listeners on a Worker keep its port working); a second idle
 * worker is not needed.
 */
function releaseWorker(worker: Worker): void {
  if (idle) {
    void worker.terminate();
    return;
  }
  worker.unref();
  // A worker that dies while idle (out of memory, a crash) is simply forgotten.
  const onExit = (): void => {
    if (idle?.worker === worker) {
      clearTimeout(idle.timer);
      idle = undefined;
    }
  };
  worker.once('exit', onExit);
  const timer = setTimeout(() => {
    if (idle?.worker === worker) idle = undefined;
    void worker.terminate();
  }, IDLE_WORKER_MS);
  timer.unref();
  idle = { worker, timer, onExit };
}

export async function runScan(job: ScanJob, targets: readonly ScanTarget[], guard: PathGuard, ctx: Pick<RequestContext, 'signal' | 'progress'>, describe: (report: ScanReport) => string): Promise<ScanReport> {
  if (ctx.signal.aborted) throw new CancelledError();
  const totalBytes = targets.reduce((n, t) => n + t.size, 0);
  const report: ScanReport = { matches: [], files: [], killed: false, bytesScanned: 0, filesNotReached: 0 };
  const worker = takeWorker();
  running++;
  let next = 0;
  let open: FileHandle | undefined;
  let settled = false;
  let bytesDone = 0;

  return new Promise<ScanReport>((resolve, reject) => {
    /** `reusable`: the worker answered 'done' and may take another job. */
    const cleanup = async (reusable: boolean): Promise<void> => {
      clearTimeout(hardStop);
      ctx.signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      if (reusable) releaseWorker(worker);
      else await worker.terminate().catch(() => undefined);
      await open?.close().catch(() => undefined);
      open = undefined;
    };
    const finish = (error?: unknown, reusable = false): void => {
      if (settled) return;
      settled = true;
      running--;
      report.filesNotReached = targets.length - report.files.length;
      void cleanup(reusable).then(() => (error ? reject(error) : resolve(report)));
    };
    const send = (message: ToWorker): void => worker.postMessage(message);

    const sendNext = async (): Promise<void> => {
      while (next < targets.length && !settled) {
        const target = targets[next] as ScanTarget;
        const index = next++;
        try {
          // O_NONBLOCK: a FIFO swapped in for a log must not hang the scan.
          open = await guard.open(target.real, constants.O_RDONLY | constants.O_NONBLOCK, undefined, target.display);
          const stat = await open.stat();
          if (!stat.isFile()) throw new Error('not a regular file');
          const links = hardLinkRefusal(guard, stat.nlink);
          if (links) {
            await open.close().catch(() => undefined);
            open = undefined;
            report.files.push({ display: target.display, outcome: { status: 'unreadable', reason: links } });
            continue;
          }
        } catch (error) {
          await open?.close().catch(() => undefined);
          open = undefined;
          // A file removed between its opening and the check of where its descriptor points looks outside the roots: it is gone.
          const gone = (error as NodeJS.ErrnoException).code === 'ENOENT' || (await lstat(target.real).then(() => false, (e: NodeJS.ErrnoException) => e.code === 'ENOENT'));
          const reason = gone ? GONE : error instanceof ToolError ? 'outside the allowed directories' : 'not readable';
          report.files.push({ display: target.display, outcome: { status: 'unreadable', reason } });
          continue;
        }
        if (settled) return;
        send({ type: 'file', index, fd: open.fd, display: target.display, compressed: target.compressed, spec: target.spec });
        return;
      }
      if (!settled) send({ type: 'end' });
    };

    const onAbort = (): void => finish(new CancelledError());
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const hardStop = setTimeout(() => {
      report.killed = true;
      report.stopped = 'time-budget';
      finish();
    }, Math.max(0, job.deadline - Date.now()) + HARD_STOP_GRACE_MS);

    const onMessage = (message: FromWorker): void => {
      if (settled) return;
      switch (message.type) {
        case 'progress':
          bytesDone = message.bytes;
          ctx.progress.report(bytesDone, totalBytes, describe(report));
          break;
        case 'matches':
          report.matches.push(...message.matches);
          break;
        case 'file-done': {
          const target = targets[message.index] as ScanTarget;
          report.files.push({ display: target.display, outcome: message.outcome });
          if (message.outcome.status === 'scanned') report.bytesScanned += message.outcome.bytes;
          void open?.close().catch(() => undefined);
          open = undefined;
          if (message.stopped) {
            report.stopped = message.stopped;
            send({ type: 'end' });
          } else void sendNext();
          break;
        }
        case 'done':
          if (message.stats) report.stats = message.stats;
          ctx.progress.report(totalBytes, totalBytes, describe(report));
          finish(undefined, true);
          break;
        case 'failed':
          finish(new Error(`scan worker: ${message.message}`));
          break;
      }
    };
    const onError = (error: Error): void => {
      const oom = (error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      finish(oom ? ToolError.unavailable('The scan ran out of its memory allowance. Narrow it: fewer files, a time range, or a more specific pattern.') : error);
    };
    const onExit = (): void => finish(new Error('the scan worker exited unexpectedly'));
    worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    send({ type: 'start', job });
    void sendNext();
  });
}
