import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { ToolError, defineTool, nestedQuantifier, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { SearchRun } from '../content-search.js';
import { compileContentQuery, type ContentQuery, type FileSearchOutcome, type LineMatch } from '../file-search.js';
import { includeExcludeMatcher } from '../globs.js';
import { withPathErrors } from '../fs-errors.js';
import { readBudget } from '../read-budget.js';
import { MAX_PATTERN_LENGTH, compileGlob } from '../search-patterns.js';
import { CheckedOpener } from '../open-checked.js';
import { formatSize } from '../sizes.js';
import { rootContaining, walkBatches } from '../walk.js';

const DEFAULT_CONTENT_RESULTS = 100;
const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
/**
 * Files per batch sent to a search worker: the first ones small, so that the first matches come
 * back soon, then larger (each batch is a message each way and a wake-up of this thread: over
 * /usr/include, batches of 128 took 3 to 4 ms less CPU than batches of 32).
 */
const FIRST_BATCH_FILES = 32;
const BATCH_FILES = 128;

/** Checks a pattern the way a search compiles it; an invalid one is an invalid argument that says what to do. */
function checkQuery(pattern: string, literal: boolean, caseSensitive: boolean): void {
  if (pattern.length === 0) throw ToolError.invalidArgument('pattern must not be empty.');
  const nested = literal ? undefined : nestedQuantifier(pattern);
  if (nested) {
    throw ToolError.invalidArgument(
      `The regular expression has a repeated group that itself repeats (${nested}); on some lines that takes exponential time, so it is refused. ` +
        'Rewrite it without nesting (for example (ab)+ or a+ instead of (a+)+), or pass literal: true.',
    );
  }
  try {
    compileContentQuery(pattern, literal, caseSensitive);
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^Invalid regular expression: /, '') : 'invalid';
    throw ToolError.invalidArgument(`Invalid regular expression ${JSON.stringify(pattern)}: ${reason}. Pass literal: true to search for the text as is.`);
  }
}

/** A batch for the workers: files directory by directory, and each file's path for the answer. */
interface Batch {
  directories: string[];
  names: string[][];
  /** Each file's path relative to the directory searched, in the order sent. */
  relatives: string[];
}

function newBatch(): Batch {
  return { directories: [], names: [], relatives: [] };
}

function addFile(batch: Batch, directory: string, name: string, relative: string): void {
  const last = batch.directories.length - 1;
  if (last >= 0 && batch.directories[last] === directory) (batch.names[last] as string[]).push(name);
  else {
    batch.directories.push(directory);
    batch.names.push([name]);
  }
  batch.relatives.push(relative);
}

const searchContentDescription =
  'Search inside files for a regular expression (or, with literal: true, plain text), like grep. Returns the path ' +
  '(relative to the directory searched), line number and line of each match, with optional context lines. ' +
  'include/exclude are globs (a pattern without a slash matches file names at any depth, e.g. "*.ts"). .gitignore files are ' +
  `respected by default, and .git is skipped. Binary files and files over maxFileBytes (default ${formatSize(DEFAULT_MAX_FILE_BYTES)}) are skipped. ` +
  `Stops after maxResults matches (default ${DEFAULT_CONTENT_RESULTS}). Reports progress and can be cancelled. Only searches within allowed directories.`;

const searchContentInput = z.object({
  path: z.string().describe('Directory (or single file) to search.'),
  pattern: z.string().min(1).max(MAX_PATTERN_LENGTH).describe('JavaScript regular expression (or text, with literal: true), matched against each line.'),
  literal: z.boolean().optional().default(false).describe('Treat pattern as plain text, not a regular expression.'),
  caseSensitive: z.boolean().optional().default(true).describe('Match case exactly (default true).'),
  include: z.array(z.string()).optional().default([]).describe('Only search files matching one of these globs, e.g. ["*.ts", "src/**"].'),
  exclude: z.array(z.string()).optional().default([]).describe('Skip files and directories matching these globs.'),
  respectGitignore: z.boolean().optional().default(true).describe('Skip what .gitignore files ignore (default true).'),
  contextLines: z.number().int().min(0).max(20).optional().default(0).describe('Lines of context before and after each match.'),
  maxResults: z.number().int().min(1).max(10_000).optional().default(DEFAULT_CONTENT_RESULTS).describe('Most matching lines to return.'),
  maxFileBytes: z.number().int().min(1).optional().default(DEFAULT_MAX_FILE_BYTES).describe('Skip files larger than this many bytes.'),
});

const searchContentOutput = z.object({
  path: z.string(),
  matches: z.array(
    z.object({
      path: z.string().describe('Relative to the directory searched, with / separators.'),
      line: z.number().describe('1-based line number.'),
      text: z.string().describe('The matching line (cut around the match when very long).'),
      before: z.array(z.string()).optional(),
      after: z.array(z.string()).optional(),
    }),
  ),
  filesSearched: z.number(),
  filesMatched: z.number(),
  skippedBinary: z.number(),
  skippedTooLarge: z.number(),
  skippedUnreadable: z.number(),
  truncated: z.boolean().describe('maxResults was reached; there may be more matches.'),
});

export function searchContentTool(config: FilesystemConfig): AnyToolDefinition {
  const { readTimeoutMs } = config.limits;
  return defineTool({
    name: 'search_content',
    // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
    longRunning: true,
    description: searchContentDescription,
    input: searchContentInput,
    output: searchContentOutput,
    annotations: { title: 'Search File Contents', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const { real } = await guard.resolve(args.path, { mustExist: true });
      const stat = await withPathErrors(args.path, () => fs.stat(real));
      checkQuery(args.pattern, args.literal, args.caseSensitive);
      for (const p of [...args.include, ...args.exclude]) compileGlob(p, 'include/exclude');
      const filters = includeExcludeMatcher(args.include, args.exclude);

      const found: (LineMatch & { path: string })[] = [];
      const counts = { filesSearched: 0, filesMatched: 0, skippedBinary: 0, skippedTooLarge: 0, skippedUnreadable: 0 };
      // A file had more matches than fitted, or the search stopped with files left: there may be more.
      let truncated = false;
      // Out of time, the answer still carries what was found, after saying that it is incomplete.
      const budget = readBudget(ctx, readTimeoutMs, (limit) =>
        [
          `search_content was stopped after ${limit}, having searched ${counts.filesSearched} files; the ${found.length} matches found so far follow. ` +
            'Narrow the search with path, include or exclude.',
          ...(found.length > 0 ? ['', formatMatches(args.path, found, counts, false, args.maxResults, args.contextLines > 0)] : []),
        ].join('\n'),
      );
      const query: ContentQuery = { pattern: args.pattern, literal: args.literal, caseSensitive: args.caseSensitive, contextLines: args.contextLines, maxFileBytes: args.maxFileBytes };
      // One more match than can be shown, to know whether a cut hid anything.
      const maxMatches = (): number => args.maxResults - found.length + 1;

      const record = (relative: string, outcome: FileSearchOutcome): void => {
        if (outcome.kind === 'binary') counts.skippedBinary++;
        else if (outcome.kind === 'too-large') counts.skippedTooLarge++;
        else if (outcome.kind === 'unreadable') counts.skippedUnreadable++;
        else if (outcome.kind === 'searched') {
          counts.filesSearched++;
          if (outcome.matches.length > 0) counts.filesMatched++;
          for (const m of outcome.matches) {
            if (found.length >= args.maxResults) {
              truncated = true;
              return;
            }
            found.push({ path: relative, ...m });
          }
        }
      };

      // Files are searched by worker threads, in batches, while this thread walks the tree. Their
      // outcomes are taken in walk order, so the answer is that of a search of one file after another.
      const run = new SearchRun(query, guard.directories, budget);
      const queue: { batch: Batch; outcomes: Promise<FileSearchOutcome[]> }[] = [];
      let batch = newBatch();
      let batchFiles = FIRST_BATCH_FILES;
      // The cap is reached: a file after that means there may be more matches.
      let full = false;
      const send = (): void => {
        if (batch.relatives.length === 0) return;
        queue.push({ batch, outcomes: run.submit(batch.directories, batch.names, maxMatches()) });
        batch = newBatch();
        batchFiles = Math.min(BATCH_FILES, batchFiles * 2);
      };
      /** Records the oldest batch's outcomes, in order. */
      const takeOldest = async (): Promise<void> => {
        const oldest = queue.shift();
        if (!oldest) return;
        const outcomes = await run.wait(oldest.outcomes);
        for (let i = 0; i < outcomes.length; i++) {
          if (full) {
            truncated = true;
            return;
          }
          const relative = oldest.batch.relatives[i] as string;
          // Searched again alone: the file's directory and name, found from the batch's groups.
          const again = async (): Promise<FileSearchOutcome> => {
            const [directory, name] = fileAt(oldest.batch, i);
            return (await run.wait(run.submit([directory], [[name]], maxMatches())))[0] as FileSearchOutcome;
          };
          let outcome = outcomes[i] as FileSearchOutcome;
          // Sent before the matches of earlier files were known, the file was searched for more
          // matches than it may now show, and with context lines the last ones shown would take
          // their after-context from further on than a search that stopped sooner: search it again, capped right.
          if (outcome.kind === 'searched' && args.contextLines > 0 && outcome.matches.length > maxMatches()) {
            outcome = await again();
          }
          if (outcome.kind === 'stopped') {
            // Told to stop: out of time (or cancelled), which this reports...
            budget.check();
            // ...or left out by a batch already full, which cannot happen before the answer is:
            // should it, the file is searched now rather than lost.
            outcome = await again();
          }
          record(relative, outcome);
          if (found.length >= args.maxResults) {
            full = true;
            run.stop();
          }
        }
      };
      const progress = (): void => ctx.progress.report(counts.filesSearched, undefined, `${counts.filesSearched} files searched, ${found.length} matches`);

      try {
        if (stat.isFile()) {
          const directory = CheckedOpener.directoryOf(real);
          addFile(batch, directory, real.slice(directory.length + 1), args.path);
        } else if (stat.isDirectory()) {
          const gitignoreRoot = rootContaining(guard.directories, real);
          walk: for await (const dir of walkBatches(real, {
            exclude: (relative, isDir, name) => filters.excluded(relative, name) || (!isDir && !filters.included(relative, name)),
            respectGitignore: args.respectGitignore,
            ...(gitignoreRoot ? { gitignoreRoot } : {}),
            signal: ctx.signal,
            sync: true,
          })) {
            for (const entry of dir.entries) {
              if (entry.type !== 'file') continue;
              if (full) {
                truncated = true;
                break walk;
              }
              addFile(batch, dir.directory, entry.name, entry.relative);
              if (batch.relatives.length >= batchFiles) send();
              while (!run.canTakeMore) await takeOldest();
            }
            // While the workers have little to do, a directory's few files go out at once.
            if (queue.length < 2) send();
            while (queue.length > 0 && !full && run.done(queue[0]!.outcomes)) await takeOldest();
            progress();
          }
        } else {
          throw ToolError.invalidArgument(`${args.path} is neither a file nor a directory.`);
        }
        send();
        while (queue.length > 0) await takeOldest();
        progress();
        budget.check();
      } finally {
        run.close();
      }

      const text = formatMatches(args.path, found, counts, truncated, args.maxResults, args.contextLines > 0);
      return { text, structured: { path: args.path, matches: found, ...counts, truncated } };
    },
  });
}

/** The directory and name of a batch's i-th file. */
function fileAt(batch: Batch, i: number): [string, string] {
  let k = i;
  for (let d = 0; d < batch.names.length; d++) {
    const names = batch.names[d] as string[];
    if (k < names.length) return [batch.directories[d] as string, names[k] as string];
    k -= names.length;
  }
  throw new Error('no such file in the batch');
}

function formatMatches(
  root: string,
  found: (LineMatch & { path: string })[],
  counts: { filesSearched: number; filesMatched: number; skippedBinary: number; skippedTooLarge: number; skippedUnreadable: number },
  truncated: boolean,
  maxResults: number,
  withContext: boolean,
): string {
  const skipped: string[] = [];
  if (counts.skippedBinary) skipped.push(`${counts.skippedBinary} binary`);
  if (counts.skippedTooLarge) skipped.push(`${counts.skippedTooLarge} too large`);
  if (counts.skippedUnreadable) skipped.push(`${counts.skippedUnreadable} unreadable`);
  const skippedText = skipped.length > 0 ? `; skipped ${skipped.join(', ')}` : '';
  const header =
    found.length === 0
      ? `No matches in ${root} (${counts.filesSearched} files searched${skippedText}).`
      : `${found.length} match${found.length === 1 ? '' : 'es'} in ${counts.filesMatched} file${counts.filesMatched === 1 ? '' : 's'} under ${root} (${counts.filesSearched} files searched${skippedText}):`;
  const body: string[] = [];
  for (const m of found) {
    if (withContext) {
      const first = m.line - (m.before?.length ?? 0);
      m.before?.forEach((l, i) => body.push(`${m.path}-${first + i}-${l}`));
      body.push(`${m.path}:${m.line}:${m.text}`);
      m.after?.forEach((l, i) => body.push(`${m.path}-${m.line + 1 + i}-${l}`));
      body.push('--');
    } else {
      body.push(`${m.path}:${m.line}:${m.text}`);
    }
  }
  if (withContext && body[body.length - 1] === '--') body.pop();
  const lines = [header, ...body];
  if (truncated) lines.push(`[truncated: stopped at maxResults=${maxResults}; there are more matches. Narrow the pattern or include globs, or raise maxResults.]`);
  return lines.join('\n');
}
