import { parentPort } from 'node:worker_threads';
import { compileContentQuery, searchFileSync, type CompiledContentQuery, type ContentQuery, type FileSearchOutcome } from '../file-search.js';
import { CheckedOpener, insideRoots } from '../open-checked.js';
import { encodeOutcomes, type FromSearchWorker, type ToSearchWorker } from '../search-protocol.js';

/**
 * A search_content worker: it opens (checked against the roots, as the main thread would, a
 * directory at a time: see CheckedOpener), reads and searches the files it is given,
 * synchronously and one after another, and answers with each batch's outcomes in order. Two or more run at once, so a tree is searched on every core while
 * the main thread walks it; the main thread merges the answers in walk order. A job stops at the
 * next chunk once its stop flag is set (a cancellation, the time budget, enough matches).
 */

const port = parentPort;
if (!port) throw new Error('search-worker runs as a worker thread');

interface Job {
  query: ContentQuery;
  compiled: CompiledContentQuery;
  /** Opens the job's files, checked against its roots; holds the current directory open until the job ends. */
  opener: CheckedOpener;
  stop: Int32Array;
}

const jobs = new Map<number, Job>();
const STOPPED: FileSearchOutcome = Object.freeze({ kind: 'stopped' });
const UNREADABLE: FileSearchOutcome = Object.freeze({ kind: 'unreadable' });

function post(message: FromSearchWorker): void {
  port!.postMessage(message);
}

port.on('message', (message: ToSearchWorker) => {
  try {
    if (message.type === 'job') {
      const { query } = message;
      jobs.set(message.job, { query, compiled: compileContentQuery(query.pattern, query.literal, query.caseSensitive), opener: new CheckedOpener(insideRoots(message.roots)), stop: new Int32Array(message.stop) });
      return;
    }
    if (message.type === 'end') {
      jobs.get(message.job)?.opener.close();
      jobs.delete(message.job);
      return;
    }
    const job = jobs.get(message.job);
    if (!job) throw new Error('files before their job');
    const stopped = (): boolean => Atomics.load(job.stop, 0) !== 0;
    const outcomes: FileSearchOutcome[] = [];
    // The batch's files come one after another in walk order: once they hold maxMatches matches,
    // the files after them cannot be shown (the answer is full before them), so they are not searched.
    let left = message.maxMatches;
    for (let d = 0; d < message.directories.length; d++) {
      const directory = message.directories[d] as string;
      // The files read through this directory, outcomes[from, …): dropped if it left the roots meanwhile.
      const from = outcomes.length;
      for (const name of message.names[d] as string[]) {
        const outcome: FileSearchOutcome = stopped() || left <= 0 ? STOPPED : searchFileSync(directory, name, job.opener, job.query, job.compiled, left, stopped);
        if (outcome.kind === 'searched') left -= outcome.matches.length;
        outcomes.push(outcome);
      }
      if (!job.opener.stillInside()) for (let i = from; i < outcomes.length; i++) if ((outcomes[i] as FileSearchOutcome).kind !== 'stopped') outcomes[i] = UNREADABLE;
    }
    post({ type: 'results', job: message.job, batch: message.batch, outcomes: encodeOutcomes(outcomes) });
  } catch (error) {
    post({ type: 'failed', job: message.job, message: error instanceof Error ? error.message : String(error) });
  }
});
