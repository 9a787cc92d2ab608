import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { entryType } from '../entry-type.js';
import { treeExcludeMatcher } from '../globs.js';
import { compileGlob } from '../search-patterns.js';
import { maxEntriesArg, resolveDirectory } from '../listing.js';
import { readBudget } from '../read-budget.js';
import { rootContaining, walkBatches, type WalkEntryType } from '../walk.js';

/** After a tree is cut, the walk goes on counting (without keeping) at most this many more entries. */
const COUNT_BEYOND_LIMIT = 100_000;

/** An entry of the JSON tree directory_tree answers with (the official server's shape). */
interface TreeNode {
  name: string;
  type: 'file' | 'directory';
  children?: TreeNode[];
}

const directoryTreeOutput = z.object({
  path: z.string(),
  entries: z
    .array(z.object({ path: z.string().describe('Relative to the tree root, with / separators.'), type: entryType, depth: z.number() }))
    .describe('The entries of the tree, breadth-first.'),
  returned: z.number(),
  truncated: z.boolean(),
  omitted: z.number().describe('Entries left out by maxEntries (a lower bound when omittedIsLowerBound).'),
  omittedIsLowerBound: z.boolean(),
  depthLimited: z.boolean().describe('Some directories were at maxDepth and their contents were not read.'),
});

export function directoryTreeTool(config: FilesystemConfig): AnyToolDefinition {
  const { maxEntries: defaultMax, readTimeoutMs } = config.limits;
  return defineTool({
    name: 'directory_tree',
    // May outlast a client's request timeout: a task for 2026-07-28 clients with the tasks extension.
    longRunning: true,
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
    output: directoryTreeOutput,
    annotations: { title: 'Directory Tree', ...READ_ONLY },
    handler: async (args, ctx) => {
      const guard = await ctx.paths();
      const real = await resolveDirectory(guard, args.path);
      const limit = args.maxEntries ?? defaultMax;
      for (const p of args.excludePatterns) compileGlob(p, 'excludePatterns');
      const excluded = treeExcludeMatcher(args.excludePatterns);
      const top: TreeNode[] = [];
      const childrenOf = new Map<string, TreeNode[]>([['', top]]);
      const flat: { path: string; type: WalkEntryType; depth: number }[] = [];
      let omitted = 0;
      let counting = 0;
      let depthLimited = false;
      const budget = readBudget(
        ctx,
        readTimeoutMs,
        (limit) =>
          `directory_tree was stopped after ${limit}, having listed ${flat.length + omitted} entries. ` +
          'Use maxDepth or excludePatterns, or ask for a smaller directory.',
      );
      const gitignoreRoot = rootContaining(guard.directories, real);
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
          const node: TreeNode = { name: entry.name, type: entry.type === 'directory' ? 'directory' : 'file' };
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
