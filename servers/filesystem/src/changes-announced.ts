import { pathToFileURL } from 'node:url';
import type { RequestContext } from '@suite/shared';

/**
 * What a write tool changed, told to the change hub: subscribers of the files hear it, and so do
 * the other replicas' (through Redis with --redis-url), where a watch cannot see this host's writes
 * (another host on a network volume). A replica's own watch sees the same change; the hub's
 * debounce makes it one notification.
 */
export function announceWritten(ctx: RequestContext, realPaths: readonly string[], options: { listChanged?: boolean } = {}): void {
  for (const real of realPaths) ctx.changes.resourceUpdated(pathToFileURL(real).href);
  if (options.listChanged) ctx.changes.resourceListChanged();
}
