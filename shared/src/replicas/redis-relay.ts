import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { ChangeRelay, RelayedChange } from '../changes/subscriptions.js';
import type { Logger } from '../core/logging.js';

/**
 * Replicas of one server started with the same `--redis-url` share the changes their handlers
 * announce, over Redis pub/sub: a write through replica B reaches a listen stream (or a 2025
 * subscription) on replica A. What each replica's own watchers see stays local; the hub's debounce
 * merges a relayed announcement with the same change seen locally, so a stream hears it once.
 *
 * Redis is never waited for: a change is published when Redis is there and dropped (logged once)
 * when it is not, and the connections reconnect by themselves. Every replica keeps serving alone
 * meanwhile.
 */
export class RedisChangeRelay implements ChangeRelay {
  readonly replicaId = randomUUID();
  private readonly channel: string;
  private readonly publisher: Redis;
  private readonly subscriber: Redis;
  private readonly handlers = new Set<(change: RelayedChange) => void>();
  private degraded = false;

  constructor(
    url: string,
    private readonly log: Logger,
    options: { prefix?: string } = {},
  ) {
    this.channel = `${options.prefix ?? 'suite:'}changes`;
    const common = {
      // Never queue a command for a Redis that is down: a change dropped beats a request held.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      commandTimeout: 1_000,
      lazyConnect: false,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
    };
    this.publisher = new Redis(url, common);
    this.subscriber = new Redis(url, { ...common, enableOfflineQueue: true });
    for (const connection of [this.publisher, this.subscriber]) {
      connection.on('error', (error: Error) => this.degrade(error));
      connection.on('ready', () => this.recover());
    }
    void this.subscriber.subscribe(this.channel).catch((error: Error) => this.degrade(error));
    this.subscriber.on('message', (channel: string, text: string) => {
      if (channel !== this.channel) return;
      let message: { from?: unknown; change?: RelayedChange };
      try {
        message = JSON.parse(text) as typeof message;
      } catch {
        return;
      }
      if (message.from === this.replicaId || !isChange(message.change)) return;
      for (const handler of this.handlers) handler(message.change);
    });
  }

  send(change: RelayedChange): void {
    if (this.publisher.status !== 'ready') return;
    void this.publisher.publish(this.channel, JSON.stringify({ from: this.replicaId, change })).catch((error: Error) => this.degrade(error));
  }

  receive(handler: (change: RelayedChange) => void): () => void {
    this.handlers.add(handler);
    return () => void this.handlers.delete(handler);
  }

  async close(): Promise<void> {
    this.handlers.clear();
    this.publisher.disconnect();
    this.subscriber.disconnect();
  }

  private degrade(error: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log.warning(`Redis is unreachable (${error.message}): changes are not shared with other replicas until it is back; this replica serves on alone`);
  }

  private recover(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log.warning('Redis is back: changes are shared with the other replicas again');
  }
}

function isChange(value: unknown): value is RelayedChange {
  const change = value as RelayedChange | undefined;
  return change?.kind === 'list_changed' || (change?.kind === 'updated' && typeof change.uri === 'string');
}
