import type { RequestContext, ResourceListing } from '@suite/shared';
import type { Workspace } from '../workspace.js';

/** One entry per repository the session's roots hold: what resources/list shows for a per-repository template. */
export async function perRepository(
  ws: Workspace,
  ctx: RequestContext,
  entry: (repo: string) => Omit<ResourceListing, 'uri'> & { uri: string },
): Promise<{ resources: ResourceListing[] }> {
  const repositories = await ws.repositories(ctx);
  return { resources: repositories.map((r) => entry(r.name)) };
}
