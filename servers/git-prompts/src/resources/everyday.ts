import path from 'node:path';
import { countOf, type ChangeSource, type RequestContext, type ResourceTemplateDefinition, type TemplateVariables } from '@suite/shared';
import { completePath, completeRepository } from '../completion.js';
import { blame, MAX_BLAME_LINES } from '../git/blame.js';
import { resolveRepoPath } from '../git/repo-paths.js';
import { resolveRevision } from '../git/revisions.js';
import { listStash } from '../git/stash.js';
import { TEMPLATES } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { repositoryChanges } from './changes.js';
import { perRepository } from './listing.js';

/**
 * A file's blame at HEAD (the first MAX_BLAME_LINES lines): one line per range of lines, then the
 * lines. Follows the refs and HEAD like the other resources: a commit changes it.
 */
export function blameResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.blame,
    name: 'blame',
    title: 'Blame of a file at HEAD',
    description: `Who last changed each line of a file at HEAD (the first ${MAX_BLAME_LINES} lines): each range of lines with its commit, author, date and summary. The path is percent-encoded (src%2Fapp.ts); git_blame takes a revision and a line range.`,
    mimeType: 'text/plain',
    read: async (uri, { repo: name, path: userPath = '' }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      const file = (await resolveRepoPath(repo, userPath)).relative;
      const head = await resolveRevision(repo, 'HEAD', { peel: 'commit', signal: ctx.signal });
      const result = await blame(repo, head, file, { start: 1, end: MAX_BLAME_LINES }, ctx.signal).catch(async (error: unknown) => {
        // -L past the end of a short file: blame it whole.
        if (error instanceof Error && /has only \d+ lines?/.test(error.message)) return blame(repo, head, file, { start: 1 }, ctx.signal);
        throw error;
      });
      const lines: string[] = [];
      let at = 0;
      for (const r of result.ranges) {
        lines.push(`# L${r.start}-${r.end} ${r.commit.slice(0, 12)} ${r.author} <${r.email}> ${r.date} ${r.summary}`);
        for (let n = r.start; n <= r.end; n++) lines.push(result.lines[at++] ?? '');
      }
      if (result.cut || result.lines.length >= MAX_BLAME_LINES) lines.push(`# … the blame stops at line ${result.lines.length}: git_blame with start_line shows more.`);
      return { uri, mimeType: 'text/plain', text: `${lines.join('\n')}\n` };
    },
    subscribe: subscribeHeadAndRefs(ws),
    complete: {
      repo: (value, _context, ctx) => completeRepository(ws, ctx, value),
      path: (value, context, ctx) => completePath(ws, ctx, context.arguments.repo, value),
    },
  };
}

/** The stash: one line per entry, newest first. Follows refs/stash and its reflog (a drop of an older entry changes only the reflog). */
export function stashResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.stash,
    name: 'stash',
    title: 'The stash',
    description: 'The stash entries, newest first: stash@{n}, date, message, the commit it was made on.',
    mimeType: 'text/plain',
    read: async (uri, { repo: name }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      const { entries, cut } = await listStash(repo, ctx.signal);
      const text =
        entries.length === 0
          ? `# The stash of ${repo.name} is empty.\n`
          : `# ${countOf(entries.length, 'stash entry', 'stash entries')} in ${repo.name}${cut ? ' (list cut: more exist)' : ''}\n${entries.map((e) => `${e.name} ${e.date} ${e.message} (on ${e.base.slice(0, 12)})`).join('\n')}\n`;
      return { uri, mimeType: 'text/plain', text };
    },
    list: async (_cursor, ctx) => perRepository(ws, ctx, (repo) => ({ uri: `git://${repo}/stash`, name: `${repo} stash`, mimeType: 'text/plain' })),
    subscribe: async (_uri: string, { repo: name }: TemplateVariables, ctx: RequestContext): Promise<ChangeSource> => {
      const repo = await ws.resolve(ctx, name);
      const base = repositoryChanges(repo.gitDir, repo.commonDir);
      return { ...base, paths: [...(base.paths ?? []), path.join(repo.commonDir, 'logs', 'refs', 'stash')] };
    },
    complete: { repo: (value, _context, ctx) => completeRepository(ws, ctx, value) },
  };
}

function subscribeHeadAndRefs(ws: Workspace) {
  return async (_uri: string, { repo: name }: TemplateVariables, ctx: RequestContext): Promise<ChangeSource> => {
    const repo = await ws.resolve(ctx, name);
    return repositoryChanges(repo.gitDir, repo.commonDir);
  };
}
