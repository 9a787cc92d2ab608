import type { ChangeRelay, RelayedChange } from '../changes/subscriptions.js';
import type { RedisLink } from './redis-link.js';

/**
 * Replicas of one server started with the same `--redis-url` share the changes their handlers
 * announce, over Redis pub/sub: a write through replica B reaches a listen stream (or a 2025
 * subscription) on replica A. What each replica's own watchers see stays local; the hub's debounce
 * merges a relayed announcement with the same change seen locally, so a stream hears it once.
 *
 * Redis is never waited for: a change is published when Redis is there and dropped when it is not
 * (the link logs that once). Every replica keeps serving alone meanwhile.
 */
export class RedisChangeRelay implements ChangeRelay {
  private readonly handlers = new Set<(change: RelayedChange) => void>();
  private readonly stop: () => void;

  constructor(private readonly link: RedisLink) {
    this.stop = link.subscribe('changes', (message) => {
      const { from, change } = (message ?? {}) as { from?: unknown; change?: unknown };
      if (from === link.replicaId || !isChange(change)) return;
      for (const handler of this.handlers) handler(change);
    });
  }

  send(change: RelayedChange): void {
    this.link.publish('changes', { from: this.link.replicaId, change });
  }

  receive(handler: (change: RelayedChange) => void): () => void {
    this.handlers.add(handler);
    return () => void this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.stop();
  }
}

function isChange(value: unknown): value is RelayedChange {
  const change = value as RelayedChange | undefined;
  return change?.kind === 'list_changed' || (change?.kind === 'updated' && typeof change.uri === 'string');
}
