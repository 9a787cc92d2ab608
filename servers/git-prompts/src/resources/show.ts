import type { ResourceTemplateDefinition } from '@suite/shared';
import { completeRef, completeRepository } from '../completion.js';
import { showRevision } from '../git/show.js';
import { TEMPLATES } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { subscribeToRepository } from './changes.js';

export function showResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.show,
    name: 'show',
    title: 'A commit, or a file at a revision',
    description: 'A commit (message and diff, within the diff budget), a tag, a directory listing (HEAD:src) or a file at a revision (HEAD:path). Percent-encode the revision (HEAD%3Asrc%2Fapp.ts).',
    mimeType: 'text/plain',
    read: async (uri, { repo: name, rev = '' }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      const shown = await showRevision(repo, rev, ws.config.budget, ctx.signal);
      return { uri, mimeType: shown.type === 'commit' ? 'text/x-diff' : 'text/plain', text: shown.text };
    },
    subscribe: subscribeToRepository(ws),
    complete: {
      repo: (value, _context, ctx) => completeRepository(ws, ctx, value),
      rev: (value, context, ctx) => completeRef(ws, ctx, context.arguments.repo, value, ['HEAD']),
    },
  };
}
