import { z } from 'zod';
import { CancelledError, ToolError, defineTool, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { readBudget } from '../read-budget.js';
import { formatSize } from '../sizes.js';
import { readTextFile } from '../text-read.js';

/** How many files read_multiple_files reads at the same time. */
const MULTI_READ_CONCURRENCY = 16;
/** read_multiple_files returns at most this many times the single-read byte cap in total. */
const MULTI_READ_BUDGET_FACTOR = 4;
const MAX_MULTI_PATHS = 200;

const readMultipleInput = z.object({
  paths: z
    .array(z.string())
    .min(1, 'At least one file path must be provided')
    .max(MAX_MULTI_PATHS)
    .describe('Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories.'),
});

const readMultipleOutput = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      ok: z.boolean(),
      content: z.string().optional(),
      size: z.number().optional(),
      truncated: z.boolean().optional(),
      error: z.string().optional(),
    }),
  ),
  succeeded: z.number(),
  failed: z.number(),
});

type MultiFile = z.output<typeof readMultipleOutput>['files'][number];

async function mapWithConcurrency<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  });
  await Promise.all(workers);
  return results;
}

export function readMultipleFilesTool(config: FilesystemConfig): AnyToolDefinition {
  const { maxReadBytes: maxBytes, readTimeoutMs } = config.limits;
  return defineTool({
    name: 'read_multiple_files',
    description:
      'Read several text files at once; more efficient than one call per file. Each file comes back with its path as a ' +
      'heading; a file that cannot be read reports its own error without failing the others. Each file is capped like ' +
      `read_text_file, and the whole answer at ${formatSize(maxBytes * MULTI_READ_BUDGET_FACTOR)}. Only works within allowed directories.`,
    input: readMultipleInput,
    output: readMultipleOutput,
    annotations: { title: 'Read Multiple Files', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      // One time budget for the whole call: files left when it runs out report the timeout as their error.
      const budget = readBudget(ctx, readTimeoutMs, (limit) => `Not read: read_multiple_files was stopped after ${limit}. Read fewer files per call.`);
      let bytesLeft = maxBytes * MULTI_READ_BUDGET_FACTOR;
      const files = await mapWithConcurrency(args.paths, MULTI_READ_CONCURRENCY, async (userPath): Promise<MultiFile & { text: string }> => {
        // Each file reserves its cap from the shared budget before reading and gives back what it did not use,
        // so files read in parallel cannot together overshoot the budget.
        const cap = Math.min(maxBytes, bytesLeft);
        bytesLeft -= cap;
        try {
          budget.check();
          if (cap <= 0) throw ToolError.unavailable('skipped: the combined size limit for one call was reached; read it separately.');
          const { text, output } = await readTextFile(guard, userPath, {}, cap, budget);
          bytesLeft += cap - Buffer.byteLength(output.content);
          return { path: userPath, ok: true, content: output.content, size: output.size, truncated: output.truncated, text };
        } catch (error) {
          bytesLeft += cap;
          if (error instanceof CancelledError) throw error;
          const message = error instanceof ToolError ? error.message : 'the file could not be read.';
          return { path: userPath, ok: false, error: message, text: '' };
        }
      });
      const text = files.map((f) => (f.ok ? `${f.path}:\n${f.text}\n` : `${f.path}: Error - ${f.error}`)).join('\n---\n');
      const succeeded = files.filter((f) => f.ok).length;
      return {
        text,
        structured: {
          files: files.map(({ text: _text, ...file }) => file),
          succeeded,
          failed: files.length - succeeded,
        },
      };
    },
  });
}
