import { z } from 'zod';
import { countOf, ToolError, type ToolDefinition } from '@suite/shared';
import { blame, MAX_BLAME_LINES } from '../git/blame.js';
import { resolveRepoPath } from '../git/repo-paths.js';
import { resolveRevision } from '../git/revisions.js';
import type { Workspace } from '../workspace.js';
import { READ_ONLY, repoPath } from './arguments.js';


const input = z.object({
  repo_path: repoPath,
  path: z.string().min(1).max(4096).describe('The file, relative to the top of the repository.'),
  revision: z.string().min(1).max(256).default('HEAD').describe('The commit whose version of the file is blamed (default HEAD; uncommitted changes are not blamed).'),
  start_line: z.number().int().min(1).default(1).describe('First line (from 1).'),
  end_line: z.number().int().min(1).optional().describe(`Last line (default: ${MAX_BLAME_LINES - 1} lines after start_line, or the end of the file).`),
});

const range = z.object({
  start: z.number().int(),
  end: z.number().int(),
  commit: z.string(),
  author: z.string(),
  email: z.string(),
  date: z.string(),
  summary: z.string(),
  originalStart: z.number().int(),
  boundary: z.boolean().optional(),
});
const output = z.object({ repository: z.string(), path: z.string(), revision: z.string(), ranges: z.array(range), more: z.boolean() });

export function gitBlame(ws: Workspace): ToolDefinition<typeof input, typeof output> {
  return {
    name: 'git_blame',
    toolset: 'inspect',
    description: `Shows who last changed each line of a file at a revision (git blame), as ranges of lines with their commit, author, date and summary, then the lines themselves. At most ${MAX_BLAME_LINES} lines per call: use start_line and end_line for more.`,
    input,
    output,
    annotations: { title: 'Blame lines of a file', ...READ_ONLY },
    handler: async ({ repo_path, path: userPath, revision, start_line, end_line }, ctx) => {
      if (end_line !== undefined && end_line < start_line) throw ToolError.invalidArgument(`end_line (${end_line}) is before start_line (${start_line}).`);
      const repo = await ws.resolve(ctx, repo_path);
      const file = (await resolveRepoPath(repo, userPath)).relative;
      const commit = await resolveRevision(repo, revision, { peel: 'commit', signal: ctx.signal });
      const lines = await repo.run(['cat-file', '-e', `${commit}:${file}`], { signal: ctx.signal });
      if (!lines.ok) throw ToolError.notFound(`${file} does not exist at ${revision} in ${repo.name}.`);
      const total = await lineCount(repo, commit, file, ctx.signal);
      if (start_line > Math.max(total, 1)) throw ToolError.invalidArgument(`${file} has only ${countOf(total, 'line')} at ${revision}; start_line ${start_line} is past its end.`);
      const last = Math.min(end_line ?? total, total, start_line + MAX_BLAME_LINES - 1);
      if (total === 0) return { text: `${file} is empty at ${revision}.`, structured: { repository: repo.name, path: file, revision: commit, ranges: [], more: false } };
      const result = await blame(repo, commit, file, { start: start_line, end: last }, ctx.signal);
      const more = result.cut || last < Math.min(end_line ?? total, total);
      const text: string[] = [];
      let at = 0;
      for (const r of result.ranges) {
        text.push(`${r.start === r.end ? `L${r.start}` : `L${r.start}-${r.end}`} ${r.commit.slice(0, 12)} ${r.author} ${r.date.slice(0, 10)} ${r.summary}`);
        for (let n = r.start; n <= r.end; n++) text.push(`  ${String(n).padStart(5)}│ ${result.lines[at++] ?? ''}`);
      }
      const shownEnd = result.ranges.length > 0 ? result.ranges[result.ranges.length - 1]!.end : last;
      if (more) text.push(`[… more lines follow: call again with start_line ${shownEnd + 1}]`);
      return {
        text: `Blame of ${file} at ${revision} in ${repo.name} (lines ${start_line}-${shownEnd} of ${total}):\n${text.join('\n')}`,
        structured: { repository: repo.name, path: file, revision: commit, ranges: result.ranges, more },
      };
    },
  };
}

/** Lines of a file at a commit, counted from its content (a last line without a newline counts). */
async function lineCount(repo: Parameters<typeof blame>[0], commit: string, file: string, signal: AbortSignal): Promise<number> {
  const result = await repo.run(['cat-file', 'blob', `${commit}:${file}`], { signal, maxOutputBytes: 256 * 1024 * 1024 });
  if (!result.ok) throw repo.failure(result, 'git cat-file');
  if (result.truncated.stdout) throw ToolError.invalidArgument(`${file} is larger than 256 MiB; it is not blamed.`);
  const text = result.stdout;
  if (text === '') return 0;
  let count = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) count++;
  return text.endsWith('\n') ? count : count + 1;
}
