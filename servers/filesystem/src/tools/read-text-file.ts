import { z } from 'zod';
import { defineTool, type AnyToolDefinition, type RequestContext } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { readBudget } from '../read-budget.js';
import { formatSize } from '../sizes.js';
import { readTextFile, readTextOutput } from '../text-read.js';

const lineCount = z.number().int().nonnegative();

const readTextInput = z.object({
  path: z.string().describe('Path of the file, absolute or relative to the first allowed directory.'),
  head: lineCount.optional().describe('If provided, returns only the first N lines of the file'),
  tail: lineCount.optional().describe('If provided, returns only the last N lines of the file'),
  offset: z.number().int().min(1).optional().describe('Line number to start reading at (1 = first line). Use with limit to page through a large file.'),
  limit: z.number().int().min(1).optional().describe('Most lines to return, starting at offset (or at line 1).'),
});

/**
 * read_text_file, and read_file: the name the official server deprecated for it, kept as an
 * alias with the same arguments and answers.
 */
export function readTextFileTools(config: FilesystemConfig): AnyToolDefinition[] {
  const { maxReadBytes: maxBytes, readTimeoutMs } = config.limits;

  const handler = async (args: z.output<typeof readTextInput>, ctx: RequestContext) => {
    const guard = await ctx.paths();
    const budget = readBudget(ctx, readTimeoutMs, (limit) =>
      args.offset !== undefined
        ? `Reading ${args.path} up to line ${args.offset} was stopped after ${limit}: reaching a line means reading the file from its start. For the end of a huge file use tail; to find a line use search_content.`
        : `Reading ${args.path} was stopped after ${limit}.`,
    );
    const { text, output } = await readTextFile(guard, args.path, args, maxBytes, budget);
    return { text, structured: output };
  };

  const description =
    'Read a file as UTF-8 text. Use head or tail for the first or last N lines, or offset and limit (in lines) ' +
    `to page through a large file. A read returns at most ${formatSize(maxBytes)}; when the limit cuts it, the text ends ` +
    'with a "[truncated: ...]" marker that says how much was left out and which offset continues. head and tail read only ' +
    'the part they need, so they are fast on huge files. Binary files are refused (use read_media_file). Only works within allowed directories.';

  return [
    defineTool({
      name: 'read_file',
      description: `DEPRECATED: use read_text_file instead (this is an alias kept for compatibility with the same arguments). ${description}`,
      input: readTextInput,
      output: readTextOutput,
      annotations: { title: 'Read File (Deprecated)', ...READ_ONLY },
      handler,
    }),
    defineTool({
      name: 'read_text_file',
      description,
      input: readTextInput,
      output: readTextOutput,
      annotations: { title: 'Read Text File', ...READ_ONLY },
      handler,
    }),
  ];
}
