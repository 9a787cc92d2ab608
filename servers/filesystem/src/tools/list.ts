import { promises as fs, lstat, type Dirent, type Stats } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { TimeBudget, ToolError, isInside, isSuiteTempName, type PathGuard, type SuiteServer, type ToolAnnotations } from '@suite/shared';
import type { FilesystemConfig } from '../config.js';
import { treeExcludeMatcher } from '../globs.js';
import { withPathErrors } from '../fs-errors.js';
import { formatSize } from '../sizes.js';
import { walkBatches, type WalkEntryType } from '../walk.js';

const READ_ONLY: Omit<ToolAnnotations, 'title'> = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};

/** Hard ceiling for a caller-raised maxEntries, so one call cannot build an unbounded answer. */
export const MAX_ENTRIES_CEILING = 200_000;
/** After a tree is cut, the walk goes on counting (without keeping) at most this many more entries. */
const COUNT_BEYOND_LIMIT = 100_000;
const STAT_CONCURRENCY = 64;

const entryType = z.enum(['file', 'directory', 'symlink', 'other']);

function prefix(type: WalkEntryType): string {
  if (type === 'directory') return '[DIR]';
  if (type === 'symlink') return '[LINK]';
  return '[FILE]';
}

function direntType(dirent: Dirent): WalkEntryType {
  if (dirent.isFile()) return 'file';
  if (dirent.isDirectory()) return 'directory';
  if (dirent.isSymbolicLink()) return 'symlink';
  return 'other';
}

/** The allowed root that contains a real path (the deepest, when roots nest). */
export function rootContaining(guard: PathGuard, real: string): string | undefined {
  let best: string | undefined;
  for (const dir of guard.directories) if (isInside(real, dir) && (!best || dir.length > best.length)) best = dir;
  return best;
}

async function resolveDirectory(guard: PathGuard, userPath: string): Promise<string> {
  const { real } = await guard.resolve(userPath, { mustExist: true });
  const stat = await withPathErrors(userPath, () => fs.stat(real));
  if (!stat.isDirectory()) throw ToolError.invalidArgument(`Not a directory: ${userPath}. Use read_text_file or get_file_info for files.`);
  return real;
}

async function readDirectory(userPath: string, real: string): Promise<Dirent[]> {
  const dirents = (await withPathErrors(userPath, () => fs.readdir(real, { withFileTypes: true }))).filter((d) => !isSuiteTempName(d.name));
  return dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

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

const maxEntriesArg = (fallback: number) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_ENTRIES_CEILING)
    .optional()
    .describe(`Most entries to return (default ${fallback}); the rest are counted in a "[truncated: N more ...]" marker.`);

export function registerListTools(server: SuiteServer, config: FilesystemConfig): void {
  const defaultMax = config.limits.maxEntries;

  server.tool({
    name: 'list_directory',
    description:
      'Get a listing of the files and directories in a path, sorted by name. Entries are prefixed [FILE], [DIR] or [LINK] ' +
      `(symbolic link, never followed). At most ${defaultMax} entries by default, then a "[truncated: N more entries]" marker. ` +
      'Only works within allowed directories.',
    input: z.object({
      path: z.string().describe('Directory to list.'),
      maxEntries: maxEntriesArg(defaultMax),
    }),
    output: z.object({
      path: z.string(),
      entries: z.array(z.object({ name: z.string(), type: entryType })),
      total: z.number().describe('Entries in the directory, including any not returned.'),
      truncated: z.boolean(),
    }),
    annotations: { title: 'List Directory', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const real = await resolveDirectory(guard, args.path);
      const dirents = await readDirectory(args.path, real);
      const limit = args.maxEntries ?? defaultMax;
      const shown = dirents.slice(0, limit).map((d) => ({ name: d.name, type: direntType(d) }));
      const lines = shown.map((e) => `${prefix(e.type)} ${e.name}`);
      if (dirents.length > limit) lines.push(`[truncated: ${dirents.length - limit} more entries not shown; raise maxEntries or use search_files]`);
      if (dirents.length === 0) lines.push('(empty directory)');
      return { text: lines.join('\n'), structured: { path: args.path, entries: shown, total: dirents.length, truncated: dirents.length > limit } };
    },
  });

  server.tool({
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
    output: z.object({
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
    }),
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
      const lines = shown.map((e) => `${prefix(e.type)} ${e.name.padEnd(30)} ${e.size !== undefined ? formatSize(e.size).padStart(10) : ''}`.trimEnd());
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

  server.tool({
    name: 'directory_tree',
    description:
      "Get a recursive tree of files and directories as JSON: each entry has 'name', 'type' (file/directory) and, for " +
      "directories, 'children' (always an array, possibly empty). Formatted with 2-space indentation. excludePatterns are " +
      'globs (a pattern without * also matches that name at any depth). maxDepth limits how deep it goes, maxEntries how many ' +
      `entries it returns (default ${defaultMax}; shallower entries are kept first, then a "[truncated: N more entries]" marker follows). ` +
      'respectGitignore skips what .gitignore files ignore (and .git). Symbolic links are listed as files and never followed. ' +
      'Reports progress and can be cancelled. Only works within allowed directories.',
    input: z.object({
      path: z.string().describe('Directory at the top of the tree.'),
      excludePatterns: z.array(z.string()).optional().default([]).describe('Glob patterns of paths (relative to path) to leave out.'),
      maxDepth: z.number().int().min(1).max(1000).optional().describe('Deepest level to include (1 = only the direct children).'),
      maxEntries: maxEntriesArg(defaultMax),
      respectGitignore: z.boolean().optional().default(false).describe('Leave out what .gitignore files ignore, and .git.'),
    }),
    output: z.object({
      path: z.string(),
      entries: z
        .array(z.object({ path: z.string().describe('Relative to the tree root, with / separators.'), type: entryType, depth: z.number() }))
        .describe('The entries of the tree, breadth-first.'),
      returned: z.number(),
      truncated: z.boolean(),
      omitted: z.number().describe('Entries left out by maxEntries (a lower bound when omittedIsLowerBound).'),
      omittedIsLowerBound: z.boolean(),
      depthLimited: z.boolean().describe('Some directories were at maxDepth and their contents were not read.'),
    }),
    annotations: { title: 'Directory Tree', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const real = await resolveDirectory(guard, args.path);
      const limit = args.maxEntries ?? defaultMax;
      const excluded = treeExcludeMatcher(args.excludePatterns);
      interface Node {
        name: string;
        type: 'file' | 'directory';
        children?: Node[];
      }
      const top: Node[] = [];
      const childrenOf = new Map<string, Node[]>([['', top]]);
      const flat: { path: string; type: WalkEntryType; depth: number }[] = [];
      let omitted = 0;
      let counting = 0;
      let depthLimited = false;
      const budget = new TimeBudget(ctx.signal, config.limits.readTimeoutMs, (b) =>
        ToolError.timeout(
          `directory_tree was stopped after ${b.describe()} (the time limit of one call, --read-timeout), having listed ${flat.length + omitted} entries. ` +
            'Use maxDepth or excludePatterns, or ask for a smaller directory.',
        ),
      );
      const gitignoreRoot = rootContaining(guard, real);
      for await (const batch of walkBatches(real, {
        exclude: (relative) => excluded(relative),
        ...(args.maxDepth !== undefined ? { maxDepth: args.maxDepth } : {}),
        respectGitignore: args.respectGitignore,
        ...(gitignoreRoot ? { gitignoreRoot } : {}),
        signal: ctx.signal,
      })) {
        budget.check();
        if (flat.length >= limit) {
          omitted += batch.entries.length;
          counting += batch.entries.length;
          ctx.progress.report(flat.length + omitted, undefined, `${flat.length + omitted} entries`);
          if (counting >= COUNT_BEYOND_LIMIT) break;
          continue;
        }
        const siblings = childrenOf.get(batch.relative);
        for (const entry of batch.entries) {
          if (flat.length >= limit) {
            omitted++;
            continue;
          }
          flat.push({ path: entry.relative, type: entry.type, depth: entry.depth });
          const node: Node = { name: entry.name, type: entry.type === 'directory' ? 'directory' : 'file' };
          if (entry.type === 'directory') {
            node.children = [];
            childrenOf.set(entry.relative, node.children);
            if (args.maxDepth !== undefined && entry.depth >= args.maxDepth) depthLimited = true;
          }
          siblings?.push(node);
        }
        ctx.progress.report(flat.length + omitted, undefined, `${flat.length + omitted} entries`);
      }
      const lowerBound = counting >= COUNT_BEYOND_LIMIT;
      let text = JSON.stringify(top, null, 2);
      if (omitted > 0) {
        text += `\n[truncated: ${lowerBound ? 'at least ' : ''}${omitted} more entries not shown (limit ${limit}); narrow with excludePatterns or maxDepth, or raise maxEntries]`;
      }
      if (depthLimited) text += `\n[depth limit: directories at depth ${args.maxDepth} are shown without their contents]`;
      return {
        text,
        structured: {
          path: args.path,
          entries: flat,
          returned: flat.length,
          truncated: omitted > 0,
          omitted,
          omittedIsLowerBound: lowerBound,
          depthLimited,
        },
      };
    },
  });
}
