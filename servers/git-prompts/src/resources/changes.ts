import path from 'node:path';
import type { ChangeContext, ChangeSource, RequestContext, TemplateVariables } from '@suite/shared';
import type { Workspace } from '../workspace.js';

/**
 * What a subscription to a repository's resource follows, through the shared hub: HEAD and the
 * index of the working tree's git directory, and every ref (loose refs at any depth, packed refs)
 * of the repository's common directory. Staging, committing, switching branches, creating or
 * deleting a branch or tag, fetching: each writes one of these. Edits to working-tree files that
 * are not staged are not followed (watching a whole working tree, node_modules and all, costs
 * far more than it is worth).
 */
export function repositoryChanges(gitDir: string, commonDir: string): ChangeSource {
  return {
    paths: [path.join(gitDir, 'HEAD'), path.join(gitDir, 'index'), path.join(commonDir, 'packed-refs')],
    trees: [path.join(commonDir, 'refs')],
  };
}

/** A template's `subscribe`: the repository is resolved (and checked against the roots) like a read. */
export function subscribeToRepository(ws: Workspace): (uri: string, variables: TemplateVariables, ctx: RequestContext, change: ChangeContext) => Promise<ChangeSource> {
  return async (_uri, { repo: name }, ctx) => {
    const repo = await ws.resolve(ctx, name);
    return repositoryChanges(repo.gitDir, repo.commonDir);
  };
}
