import { lstat, type Stats } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { entryType } from '../entry-type.js';
import { direntType, entryPrefix, maxEntriesArg, readDirectory, resolveDirectory } from '../listing.js';
import { formatSize } from '../sizes.js';
import type { WalkEntryType } from '../walk.js';

const STAT_CONCURRENCY = 64;

/** lstat through the callback API: for thousands of entries it avoids a promise per call. */
function lstatQuiet(file: string): Promise<Stats | undefined> {
  return new Promise((resolve) => lstat(file, (error, stats) => resolve(error ? undefined : stats)));
}

async function lstatAll(dir: string, names: readonly string[]): Promise<(Stats | undefined)[]> {
  const out = new Array<Stats | undefined>(names.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(STAT_CONCURRENCY, names.length) }, async () => {
    while (next < names.length) {
      const index = next++;
      out[index] = await lstatQuiet(path.join(dir, names[index] as string));
    }
  });
  await Promise.all(workers);
  return out;
}

const listWithSizesOutput = z.object({
  path: z.string(),
  entries: z.array(
    z.object({
      name: z.string(),
      type: entryType,
      size: z.number().optional().describe('Bytes, for files only.'),
      modified: z.string().optional().describe('ISO 8601 modification time (not given for symbolic links).'),
    }),
  ),
  totalFiles: z.number(),
  totalDirectories: z.number(),
  totalSize: z.number().describe('Sum of the sizes of the regular files, in bytes.'),
  truncated: z.boolean(),
});

export function listDirectoryWithSizesTool(config: FilesystemConfig): AnyToolDefinition {
  const defaultMax = config.limits.maxEntries;
  return defineTool({
    name: 'list_directory_with_sizes',
    description:
      'Get a listing of the files and directories in a path with file sizes, sorted by name or by size (largest first), ' +
      'followed by totals. Entries are prefixed [FILE], [DIR] or [LINK]; symbolic links are never followed and show no size. ' +
      `At most ${defaultMax} entries by default (totals always cover all of them). Only works within allowed directories.`,
    input: z.object({
      path: z.string().describe('Directory to list.'),
      sortBy: z.enum(['name', 'size']).optional().default('name').describe('Sort entries by name or size'),
      maxEntries: maxEntriesArg(defaultMax),
    }),
    output: listWithSizesOutput,
    annotations: { title: 'List Directory with Sizes', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const real = await resolveDirectory(guard, args.path);
      const dirents = await readDirectory(args.path, real);
      // lstat, never stat: a link's target (possibly outside the roots) must not leak its size or times.
      const stats = await lstatAll(
        real,
        dirents.map((d) => d.name),
      );
      const detailed = dirents.map((d, i) => {
        const stat = stats[i];
        const type: WalkEntryType = stat ? (stat.isFile() ? 'file' : stat.isDirectory() ? 'directory' : stat.isSymbolicLink() ? 'symlink' : 'other') : direntType(d);
        return {
          name: d.name,
          type,
          size: type === 'file' && stat ? stat.size : undefined,
          modified: type !== 'symlink' && stat ? stat.mtime.toISOString() : undefined,
        };
      });
      if (args.sortBy === 'size') detailed.sort((a, b) => (b.size ?? -1) - (a.size ?? -1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const limit = args.maxEntries ?? defaultMax;
      const shown = detailed.slice(0, limit);
      const totalFiles = detailed.filter((e) => e.type === 'file').length;
      const totalDirectories = detailed.filter((e) => e.type === 'directory').length;
      const totalSize = detailed.reduce((sum, e) => sum + (e.size ?? 0), 0);
      const lines = shown.map((e) => `${entryPrefix(e.type)} ${e.name.padEnd(30)} ${e.size !== undefined ? formatSize(e.size).padStart(10) : ''}`.trimEnd());
      if (detailed.length > limit) lines.push(`[truncated: ${detailed.length - limit} more entries not shown; raise maxEntries]`);
      lines.push('', `Total: ${totalFiles} files, ${totalDirectories} directories`, `Combined size: ${formatSize(totalSize)}`);
      return {
        text: lines.join('\n'),
        structured: {
          path: args.path,
          entries: shown.map((e) => ({
            name: e.name,
            type: e.type,
            ...(e.size !== undefined ? { size: e.size } : {}),
            ...(e.modified !== undefined ? { modified: e.modified } : {}),
          })),
          totalFiles,
          totalDirectories,
          totalSize,
          truncated: detailed.length > limit,
        },
      };
    },
  });
}
