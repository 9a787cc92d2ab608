import { ToolError, type ResourceTemplateDefinition } from '@suite/shared';
import { completeRange, completeRepository } from '../completion.js';
import { renderDiff, type DiffSource } from '../git/diff.js';
import { resolveRange } from '../git/revisions.js';
import { gitUri, TEMPLATES } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { subscribeToRepository } from './changes.js';
import { perRepository } from './listing.js';

const MIME = 'text/x-diff';

function worktreeDiff(ws: Workspace, which: 'staged' | 'unstaged'): ResourceTemplateDefinition {
  const source: DiffSource = { kind: which };
  return {
    uriTemplate: which === 'staged' ? TEMPLATES.staged : TEMPLATES.unstaged,
    name: `diff-${which}`,
    title: which === 'staged' ? 'Staged changes' : 'Unstaged changes',
    description: `The ${which} diff, within the diff budget (lock and generated files left out, large files cut, binary files summarised; the end says what was left out).`,
    mimeType: MIME,
    read: async (uri, { repo: name }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      const diff = await renderDiff(repo, {
        source,
        budget: ws.config.budget,
        signal: ctx.signal,
        seeMore: `To see one of these files, call git_diff_${which} with path set to it.`,
      });
      return { uri, mimeType: MIME, text: diff.files.length === 0 ? `# No ${which} changes in ${repo.name}.\n` : diff.text };
    },
    list: async (_cursor, ctx) =>
      perRepository(ws, ctx, (repo) => ({ uri: which === 'staged' ? gitUri.staged(repo) : gitUri.unstaged(repo), name: `${repo} ${which} changes`, mimeType: MIME })),
    subscribe: subscribeToRepository(ws),
    complete: { repo: (value, _context, ctx) => completeRepository(ws, ctx, value) },
  };
}

export const stagedDiffResource = (ws: Workspace): ResourceTemplateDefinition => worktreeDiff(ws, 'staged');
export const unstagedDiffResource = (ws: Workspace): ResourceTemplateDefinition => worktreeDiff(ws, 'unstaged');

/** The diff of a range: `main...HEAD` (what HEAD adds since it left main, as a pull request shows it), `A..B`, or `A` for `A...HEAD`. */
export function compareResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.compare,
    name: 'compare',
    title: 'Changes of a range',
    description:
      'The diff of a range of commits: BASE...HEAD (from where they diverged, like a pull request), A..B (between the two), or BASE alone for BASE...HEAD. Percent-encode the range. Within the diff budget.',
    mimeType: MIME,
    read: async (uri, { repo: name, range = '' }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      if (range.trim() === '') throw ToolError.invalidArgument('Give a range, e.g. main...HEAD.');
      const spec = /\.\./.test(range) ? range : `${range}...HEAD`;
      const resolved = await resolveRange(repo, spec, ctx.signal);
      const diff = await renderDiff(repo, {
        source: { kind: 'commits', from: resolved.from, to: resolved.to },
        budget: ws.config.budget,
        signal: ctx.signal,
        seeMore: 'To see one of these files, call git_show with revision set to <commit>:<path>, or git_diff with target and path.',
      });
      return { uri, mimeType: MIME, text: diff.files.length === 0 ? `# No changes in ${spec}.\n` : diff.text };
    },
    subscribe: subscribeToRepository(ws),
    complete: {
      repo: (value, _context, ctx) => completeRepository(ws, ctx, value),
      range: (value, context, ctx) => completeRange(ws, ctx, context.arguments.repo, value),
    },
  };
}
