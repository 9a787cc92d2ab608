import type { ResourceTemplateDefinition } from '@suite/shared';
import { completeRepository } from '../completion.js';
import { describeStatus, readStatus } from '../git/status.js';
import { gitUri, TEMPLATES } from '../uris.js';
import type { Workspace } from '../workspace.js';
import { subscribeToRepository } from './changes.js';
import { perRepository } from './listing.js';

export function statusResource(ws: Workspace): ResourceTemplateDefinition {
  return {
    uriTemplate: TEMPLATES.status,
    name: 'status',
    title: 'Working tree status',
    description: 'The branch, its upstream, and the staged, unstaged, untracked and conflicted files.',
    mimeType: 'text/plain',
    read: async (uri, { repo: name }, ctx) => {
      const repo = await ws.resolve(ctx, name);
      return { uri, mimeType: 'text/plain', text: describeStatus(await readStatus(repo, ctx.signal), repo.name) };
    },
    list: async (_cursor, ctx) => perRepository(ws, ctx, (repo) => ({ uri: gitUri.status(repo), name: `${repo} status`, mimeType: 'text/plain' })),
    subscribe: subscribeToRepository(ws),
    complete: { repo: (value, _context, ctx) => completeRepository(ws, ctx, value) },
  };
}
