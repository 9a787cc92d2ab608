import { parentPort } from 'node:worker_threads';
import { readSync } from 'node:fs';
import { MAX_LINE_BYTES, countNewlines, gzipFailure, gzipSource, plainSource, type RawSource } from '../chunks.js';
import type { FromWorker, ScanFileMessage, ScanJob, SearchMatch, ToWorker } from '../scan-protocol.js';
import { compileQuery, firstLines, searchSource, type CompiledQuery } from '../search.js';
import { StatsAccumulator } from '../stats.js';

/**
 * The scan worker: searches and statistics run here, off the server's event loop, so that a scan
 * of gigabytes never delays another request, a notification or a subscription. The main thread
 * opens every file through the path guard and hands over descriptors one at a time; this thread
 * never opens a path. It stops at the deadline by itself; a regular expression stuck on one line
 * cannot check the clock, so the main thread terminates the worker a little after the deadline.
 * Jobs run one after another; each 'start' resets everything, so a warm worker can take the next.
 */

const port = parentPort;
if (!port) throw new Error('scan-worker runs as a worker thread');

const PROGRESS_EVERY_MS = 100;

function post(message: FromWorker): void {
  port!.postMessage(message);
}

let job: ScanJob | undefined;
let compiled: CompiledQuery | undefined;
let stats: StatsAccumulator | undefined;
let remaining = 0;
let bytesBefore = 0;
let lastProgress = 0;

function sourceFor(file: ScanFileMessage): RawSource {
  if (file.part) return plainSource(file.fd, { sync: true, start: file.part.start, end: file.part.end, alignReads: true });
  return file.compressed ? gzipSource(file.fd, { sync: true }) : plainSource(file.fd, { sync: true });
}

/** The first `n` lines of a file from `position` (the after-context of a part's last matches). */
function linesFrom(fd: number, position: number, n: number): string[] {
  if (n === 0) return [];
  let bytes = Buffer.alloc(0);
  for (let size = 64 * 1024; ; size *= 4) {
    const buffer = Buffer.allocUnsafe(size);
    const got = readSync(fd, buffer, 0, size, position);
    bytes = buffer.subarray(0, got);
    if (got < size || countNewlines(bytes) >= n || size >= n * MAX_LINE_BYTES) break;
  }
  return firstLines(bytes, n);
}

async function scanFile(file: ScanFileMessage): Promise<void> {
  if (!job) throw new Error('file before start');
  const source = sourceFor(file);
  const progress = (): void => {
    const now = Date.now();
    if (now - lastProgress < PROGRESS_EVERY_MS) return;
    lastProgress = now;
    post({ type: 'progress', bytes: bytesBefore + source.consumed() });
  };
  try {
    if (job.kind === 'search') {
      if (file.remaining !== undefined) remaining = file.remaining;
      const part = file.part;
      const outcome = await searchSource(
        source,
        file.display,
        file.spec,
        job.query,
        compiled!,
        {
          deadline: job.deadline,
          limit: remaining,
          emit: (matches: SearchMatch[]) => {
            remaining -= matches.length;
            post({ type: 'matches', matches });
          },
          chunkDone: progress,
          // Always present (undefined for a file's last part), so every call hands the search hooks of one shape: the compiled loop stays.
          linesAfter: part?.more ? (n: number) => linesFrom(file.fd, part.end, n) : undefined,
        },
        part,
      );
      post({ type: 'file-done', index: file.index, outcome: { status: 'scanned', lines: outcome.lines, bytes: outcome.bytes }, ...(outcome.stopped ? { stopped: outcome.stopped } : {}) });
    } else if (!file.compressed) {
      const outcome = await stats!.add(source, file.spec, job.deadline, progress);
      post({ type: 'file-done', index: file.index, outcome: { status: 'scanned', lines: outcome.lines, bytes: outcome.bytes }, ...(outcome.timedOut ? { stopped: 'time-budget' as const } : {}) });
    } else {
      // A .gz file is counted apart, and merged only as far as its data is valid gzip.
      const part = stats!.fork();
      const counted = { lines: 0, bytes: 0 };
      try {
        const outcome = await part.add(source, file.spec, job.deadline, progress, counted);
        stats!.merge(part);
        post({ type: 'file-done', index: file.index, outcome: { status: 'scanned', lines: outcome.lines, bytes: outcome.bytes }, ...(outcome.timedOut ? { stopped: 'time-budget' as const } : {}) });
      } catch (error) {
        const failure = gzipFailure(error);
        if (failure !== 'truncated') throw error;
        // What decompressed before a truncation is the file's own text: it counts, and the answer says where the file ends.
        stats!.merge(part);
        const note = 'truncated gzip data: counted up to where it ends';
        post({ type: 'file-done', index: file.index, outcome: { status: 'scanned', lines: counted.lines, bytes: counted.bytes, note } });
      }
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const failure = gzipFailure(error);
    const consequence = job?.kind === 'stats' ? 'not counted' : 'matches before the damage are shown';
    const other = failure !== undefined && failure !== 'truncated' && failure !== 'corrupt';
    const skipped = job?.kind === 'stats' ? 'not counted' : 'not searched';
    const reason = other ? `not gzip data (${failure} data under a .gz name): ${skipped}` : failure !== undefined ? `not valid gzip data (${failure}): ${consequence}` : code === 'EISDIR' ? 'a directory' : `read error${code ? ` (${code})` : ''}`;
    post({ type: 'file-done', index: file.index, outcome: { status: 'unreadable', reason } });
  }
  bytesBefore += source.consumed();
}

port.on('message', (message: ToWorker) => {
  void (async () => {
    try {
      if (message.type === 'start') {
        job = message.job;
        compiled = undefined;
        stats = undefined;
        bytesBefore = 0;
        lastProgress = 0;
        if (job.kind === 'search') {
          compiled = compileQuery(job.query);
          remaining = job.query.maxResults;
        } else stats = new StatsAccumulator(job.query);
      } else if (message.type === 'file') {
        await scanFile(message);
      } else {
        post(stats ? { type: 'done', stats: stats.result() } : { type: 'done' });
        job = undefined;
        compiled = undefined;
        stats = undefined;
      }
    } catch (error) {
      post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    }
  })();
});
