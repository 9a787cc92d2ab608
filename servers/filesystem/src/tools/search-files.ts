import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition, type PathGuard } from '@suite/shared';
import { READ_ONLY } from '../annotations.js';
import type { FilesystemConfig } from '../config.js';
import { entryType } from '../entry-type.js';
import { withPathErrors } from '../fs-errors.js';
import { searchExcludeMatcher } from '../globs.js';
import { MAX_ENTRIES_CEILING } from '../listing.js';
import { readBudget } from '../read-budget.js';
import { MAX_PATTERN_LENGTH, compileGlob } from '../search-patterns.js';
import { rootContaining, walkBatches } from '../walk.js';

async function searchRoot(guardPath: () => Promise<PathGuard>, userPath: string): Promise<{ guard: PathGuard; real: string }> {
  const guard = await guardPath();
  const { real } = await guard.resolve(userPath, { mustExist: true });
  const stat = await withPathErrors(userPath, () => fs.stat(real));
  if (!stat.isDirectory()) throw ToolError.invalidArgument(`Not a directory: ${userPath}. Give the directory to search in.`);
  return { guard, real };
}

const searchFilesOutput = z.object({
  path: z.string(),
  pattern: z.string(),
  matches: z.array(z.object({ path: z.string().describe('Full path.'), type: entryType })),
  truncated: z.boolean().describe('More matches exist than were returned.'),
  scanned: z.number().describe('Entries looked at.'),
});

export function searchFilesTool(config: FilesystemConfig): AnyToolDefinition {
  const { maxResults: defaultMax, readTimeoutMs } = config.limits;
  return defineTool({
    name: 'search_files',
    description:
      'Recursively search for files and directories whose path matches a glob pattern. The patterns should be glob-style patterns ' +
      "that match paths relative to the directory searched: use '*.ext' to match files in that directory, and '**/*.ext' " +
      'to match files in all subdirectories. excludePatterns leave paths (and everything under an excluded directory) out; ' +
      'a pattern without a slash also matches a name at any depth (node_modules). Returns full paths, ' +
      `at most ${defaultMax} by default, then a "[truncated ...]" marker. Symbolic links are listed but never followed. ` +
      'Only searches within allowed directories.',
    input: z.object({
      path: z.string().describe('Directory to search in.'),
      pattern: z.string().min(1).max(MAX_PATTERN_LENGTH).describe("Glob matched against paths relative to path, e.g. '**/*.ts'."),
      excludePatterns: z.array(z.string()).optional().default([]).describe('Globs of paths to leave out.'),
      maxResults: z.number().int().min(1).max(MAX_ENTRIES_CEILING).optional().describe(`Most matches to return (default ${defaultMax}).`),
      respectGitignore: z.boolean().optional().default(false).describe('Leave out what .gitignore files ignore, and .git.'),
    }),
    output: searchFilesOutput,
    annotations: { title: 'Search Files', ...READ_ONLY },
    handler: async (args, ctx) => {
      const { guard, real } = await searchRoot(() => ctx.paths(), args.path);
      const matchesPattern = compileGlob(args.pattern, 'pattern');
      for (const p of args.excludePatterns) compileGlob(p, 'excludePatterns');
      const excluded = searchExcludeMatcher(args.excludePatterns);
      const limit = args.maxResults ?? defaultMax;
      const matches: { path: string; type: z.output<typeof entryType> }[] = [];
      let scanned = 0;
      let truncated = false;
      const budget = readBudget(ctx, readTimeoutMs, (limit) =>
        `search_files was stopped after ${limit}, having looked at ${scanned} entries (${matches.length} matches so far). Search a smaller directory, or leave parts out with excludePatterns.`,
      );
      const gitignoreRoot = rootContaining(guard.directories, real);
      walk: for await (const batch of walkBatches(real, {
        exclude: (relative, _isDir, name) => excluded(relative, name),
        respectGitignore: args.respectGitignore,
        ...(gitignoreRoot ? { gitignoreRoot } : {}),
        signal: ctx.signal,
      })) {
        budget.check();
        for (const entry of batch.entries) {
          scanned++;
          if (!matchesPattern(entry.relative)) continue;
          if (matches.length >= limit) {
            truncated = true;
            break walk;
          }
          matches.push({ path: entry.path, type: entry.type });
        }
        ctx.progress.report(scanned, undefined, `${scanned} entries scanned, ${matches.length} matches`);
      }
      const lines = matches.map((m) => m.path);
      let text = lines.length > 0 ? lines.join('\n') : 'No matches found';
      if (truncated) text += `\n[truncated: more than ${limit} matches; showing the first ${limit}. Narrow the pattern or raise maxResults.]`;
      return { text, structured: { path: args.path, pattern: args.pattern, matches, truncated, scanned } };
    },
  });
}
