import { constants } from 'node:fs';
import { lstat, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { CancelledError, ToolError, WorkerPool, type PathGuard, type RequestContext } from '@suite/shared';
import { hardLinkRefusal } from './access.js';
import type { FormatSpec } from './formats/parsers.js';
import { planParts } from './parts.js';
import { GONE, type FileOutcome, type FilePart, type FromWorker, type ScanJob, type SearchMatch, type StatsResult, type ToWorker } from './scan-protocol.js';

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
  /** The container or pod (namespace/pod/container) a container runtime's log belongs to. */
  container?: string;
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
/** Parts a large plain log is cut into, each searched by a worker of its own: one per core, at most 4. */
const PARTS = Math.max(1, Math.min(4, availableParallelism()));

/** Logs searched in parts so far in this process (tests see the cut made with it). */
let parted = 0;
export function logsSearchedInParts(): number {
  return parted;
}

/** Scans currently running in this process (tests use it to see a cancelled scan stop). */
let running = 0;
export function runningScans(): number {
  return running;
}

let pool: WorkerPool | undefined;

/** Scan workers: one per scan (or per part of a log), the idle ones kept for the next scan. */
function scanWorkers(): WorkerPool {
  pool ??= new WorkerPool({ url: workerUrl(), max: PARTS, idleMs: IDLE_WORKER_MS, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB, maxYoungGenerationSizeMb: 16 } });
  return pool;
}

/** A worker searching one part (after the first) of a log, its answers kept until the parts before it are done. */
interface Helper {
  worker: Worker;
  part: FilePart;
  matches: SearchMatch[];
  bytes: number;
  outcome?: FileOutcome;
  stopped?: 'max-results' | 'time-budget';
  /** Resolves once the part is done. */
  done: Promise<void>;
  reusable: boolean;
  /** Removes the scan's listeners from the worker. */
  detach(): void;
}

export async function runScan(job: ScanJob, targets: readonly ScanTarget[], guard: PathGuard, ctx: Pick<RequestContext, 'signal' | 'progress'>, describe: (report: ScanReport) => string): Promise<ScanReport> {
  if (ctx.signal.aborted) throw new CancelledError();
  const totalBytes = targets.reduce((n, t) => n + t.size, 0);
  const report: ScanReport = { matches: [], files: [], killed: false, bytesScanned: 0, filesNotReached: 0 };
  const workers = scanWorkers();
  const worker = workers.lease();
  running++;
  let next = 0;
  let open: FileHandle | undefined;
  let settled = false;
  let bytesDone = 0;
  /** Bytes read by the workers of earlier parts, and by those searching parts of the current file. */
  let helperBytesDone = 0;
  let helpers: Helper[] = [];
  const helperBytes = (): number => helperBytesDone + helpers.reduce((n, h) => n + h.bytes, 0);
  /** Matches still wanted (the worker's own count does not see other workers' matches). */
  const remaining = (): number | undefined => (job.kind === 'search' ? Math.max(0, job.query.maxResults - report.matches.length) : undefined);

  return new Promise<ScanReport>((resolve, reject) => {
    /** `reusable`: the worker answered 'done' and may take another job. */
    const cleanup = async (reusable: boolean): Promise<void> => {
      clearTimeout(hardStop);
      ctx.signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      workers.release(worker, reusable);
      dropHelpers();
      await open?.close().catch(() => undefined);
      open = undefined;
    };
    /** Lets the helpers go: those that finished their part back to the pool, the others terminated. */
    const dropHelpers = (): void => {
      for (const h of helpers) {
        h.detach();
        workers.release(h.worker, h.reusable);
        helperBytesDone += h.bytes;
      }
      helpers = [];
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
        const left = remaining();
        // A large plain log is searched in parts, by as many workers, each part from one of the cuts a search from its start makes.
        const parts = job.kind === 'search' && !target.compressed && PARTS > 1 ? await planParts(open, target.size, target.spec, job.query.contextLines, PARTS).catch(() => undefined) : undefined;
        if (settled) return;
        if (parts) {
          parted++;
          for (const part of parts.slice(1)) helpers.push(startHelper(part, { type: 'file', index, fd: open.fd, display: target.display, compressed: false, spec: target.spec, ...(left !== undefined ? { remaining: left } : {}), part }));
        }
        send({ type: 'file', index, fd: open.fd, display: target.display, compressed: target.compressed, spec: target.spec, ...(left !== undefined ? { remaining: left } : {}), ...(parts ? { part: parts[0] as FilePart } : {}) });
        return;
      }
      if (!settled) send({ type: 'end' });
    };

    /** A file is done (its first part, when it was cut in parts: the others' answers join it, in order). */
    const fileDone = async (index: number, first: FileOutcome, firstStopped: 'max-results' | 'time-budget' | undefined): Promise<void> => {
      let outcome = first;
      let stopped = firstStopped;
      if (first.status === 'scanned' && !stopped && helpers.length > 0) {
        let { lines, bytes } = first;
        for (const h of helpers) {
          await h.done;
          if (settled) return;
          const part = h.outcome as FileOutcome;
          if (part.status !== 'scanned') {
            outcome = part;
            break;
          }
          // Line numbers count from the part's start.
          const wanted = (remaining() ?? 0);
          for (const m of h.matches.slice(0, wanted)) report.matches.push({ ...m, line: m.line + lines });
          lines += part.lines;
          bytes += part.bytes;
          if (h.matches.length > wanted || h.stopped === 'max-results') {
            stopped = 'max-results';
            break;
          }
          if (h.stopped === 'time-budget') {
            stopped = 'time-budget';
            break;
          }
        }
        if (outcome.status === 'scanned') outcome = { status: 'scanned', lines, bytes };
      }
      // Parts after a stop are not part of the answer: a search from the start would not have reached them.
      dropHelpers();
      if (settled) return;
      const target = targets[index] as ScanTarget;
      report.files.push({ display: target.display, outcome });
      if (outcome.status === 'scanned') report.bytesScanned += outcome.bytes;
      void open?.close().catch(() => undefined);
      open = undefined;
      if (stopped) {
        report.stopped = stopped;
        send({ type: 'end' });
      } else void sendNext();
    };

    /** A worker for one part after the first; its matches wait for the parts before it. */
    const startHelper = (part: FilePart, file: ToWorker): Helper => {
      const helperWorker = workers.lease();
      let resolveDone!: () => void;
      const helper: Helper = { worker: helperWorker, part, matches: [], bytes: 0, done: new Promise<void>((resolve) => (resolveDone = resolve)), reusable: false, detach: () => undefined };
      const onHelperMessage = (message: FromWorker): void => {
        if (settled) return;
        switch (message.type) {
          case 'progress':
            helper.bytes = message.bytes;
            ctx.progress.report(bytesDone + helperBytes(), totalBytes, describe(report));
            break;
          case 'matches':
            helper.matches.push(...message.matches);
            break;
          case 'file-done':
            helper.outcome = message.outcome;
            if (message.stopped) helper.stopped = message.stopped;
            if (message.outcome.status === 'scanned') helper.bytes = message.outcome.bytes;
            helperWorker.postMessage({ type: 'end' } satisfies ToWorker);
            break;
          case 'done':
            helper.reusable = true;
            resolveDone();
            break;
          case 'failed':
            finish(new Error(`scan worker: ${message.message}`));
            break;
        }
      };
      helperWorker.on('message', onHelperMessage).on('error', onError).on('exit', onExit);
      helper.detach = () => void helperWorker.off('message', onHelperMessage).off('error', onError).off('exit', onExit);
      helperWorker.postMessage({ type: 'start', job } satisfies ToWorker);
      helperWorker.postMessage(file);
      return helper;
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
          ctx.progress.report(bytesDone + helperBytes(), totalBytes, describe(report));
          break;
        case 'matches':
          report.matches.push(...message.matches);
          break;
        case 'file-done':
          void fileDone(message.index, message.outcome, message.stopped);
          break;
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
