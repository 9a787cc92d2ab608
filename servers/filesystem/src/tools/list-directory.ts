import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { entryType } from '../entry-type.js';
import { direntType, entryPrefix, maxEntriesArg, readDirectory, resolveDirectory } from '../listing.js';

const listDirectoryOutput = z.object({
  path: z.string(),
  entries: z.array(z.object({ name: z.string(), type: entryType })),
  total: z.number().describe('Entries in the directory, including any not returned.'),
  truncated: z.boolean(),
});

export function listDirectoryTool(config: FilesystemConfig): AnyToolDefinition {
  const defaultMax = config.limits.maxEntries;
  return defineTool({
    name: 'list_directory',
    description:
      'Get a listing of the files and directories in a path, sorted by name. Entries are prefixed [FILE], [DIR] or [LINK] ' +
      `(symbolic link, never followed). At most ${defaultMax} entries by default, then a "[truncated: N more entries]" marker. ` +
      'Only works within allowed directories.',
    input: z.object({
      path: z.string().describe('Directory to list.'),
      maxEntries: maxEntriesArg(defaultMax),
    }),
    output: listDirectoryOutput,
    annotations: { title: 'List Directory', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const real = await resolveDirectory(guard, args.path);
      const dirents = await readDirectory(args.path, real);
      const limit = args.maxEntries ?? defaultMax;
      const shown = dirents.slice(0, limit).map((d) => ({ name: d.name, type: direntType(d) }));
      const lines = shown.map((e) => `${entryPrefix(e.type)} ${e.name}`);
      if (dirents.length > limit) lines.push(`[truncated: ${dirents.length - limit} more entries not shown; raise maxEntries or use search_files]`);
      if (dirents.length === 0) lines.push('(empty directory)');
      return { text: lines.join('\n'), structured: { path: args.path, entries: shown, total: dirents.length, truncated: dirents.length > limit } };
    },
  });
}
