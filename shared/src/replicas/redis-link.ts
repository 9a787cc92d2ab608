import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from '../core/logging.js';

/** What a Redis command answers when Redis is down or slow: the caller serves on alone. */
export const UNAVAILABLE = Symbol('redis unavailable');
export type Answer<T> = T | typeof UNAVAILABLE;

/**
 * One replica's two connections to Redis (commands and pub/sub), shared by everything replicas
 * share: changes, 2025 sessions, their events. Redis is never waited for long: a command gets 1 s,
 * nothing is queued while the connection is down, and the connections come back by themselves.
 * The loss and the return are each logged once.
 */
export class RedisLink {
  /** Tells this replica's own messages from the others'. */
  readonly replicaId = randomUUID();
  readonly prefix: string;
  private readonly commands: Redis;
  private readonly subscriber: Redis;
  private readonly handlers = new Map<string, Set<(message: unknown) => void>>();
  private degraded = false;
  private closing = false;
  private readonly readyHandlers = new Set<() => void>();

  constructor(
    url: string,
    private readonly log: Logger,
    options: { prefix?: string } = {},
  ) {
    this.prefix = options.prefix ?? 'suite:';
    const common = {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 2_000,
      commandTimeout: 1_000,
      retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000),
    };
    this.commands = new Redis(url, common);
    // Subscriptions are re-sent by ioredis after a reconnect; they may wait for the connection.
    this.subscriber = new Redis(url, { ...common, enableOfflineQueue: true });
    for (const connection of [this.commands, this.subscriber]) {
      connection.on('error', (error: Error) => this.degrade(error));
      // A connection that was ready and is lost (Redis stopped, a network cut): not shared from this
      // moment. Waiting for a reconnection attempt to fail would miss a Redis back within its delay,
      // and then neither the outage nor the return would be said.
      connection.on('close', () => {
        if (!this.closing) this.degrade(new Error('connection lost'));
      });
      connection.on('ready', () => this.recover());
    }
    this.commands.on('ready', () => {
      for (const handler of this.readyHandlers) handler();
    });
    this.subscriber.on('message', (channel: string, text: string) => {
      const handlers = this.handlers.get(channel);
      if (!handlers) return;
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        return;
      }
      for (const handler of handlers) handler(message);
    });
  }

  /** Whether commands can be sent now (false: skip Redis instead of waiting for it). */
  get ready(): boolean {
    return this.commands.status === 'ready';
  }

  /** Runs whenever the command connection is (again) ready: a user that stood back from Redis may stop now. */
  onReady(handler: () => void): () => void {
    this.readyHandlers.add(handler);
    return () => void this.readyHandlers.delete(handler);
  }

  /** Runs a command on the shared connection; UNAVAILABLE when Redis is down or does not answer in time. */
  async run<T>(command: (redis: Redis) => Promise<T>): Promise<Answer<T>> {
    if (!this.ready) return UNAVAILABLE;
    try {
      return await command(this.commands);
    } catch (error) {
      this.degrade(error as Error);
      return UNAVAILABLE;
    }
  }

  /** Publishes without waiting: a message dropped while Redis is down beats a request held. */
  publish(channel: string, message: unknown): void {
    if (!this.ready) return;
    void this.commands.publish(this.prefix + channel, JSON.stringify(message)).catch((error: Error) => this.degrade(error));
  }

  /** Hears a channel (named without the prefix); returns how to stop. */
  subscribe(channel: string, handler: (message: unknown) => void): () => void {
    const name = this.prefix + channel;
    let handlers = this.handlers.get(name);
    if (!handlers) {
      handlers = new Set();
      this.handlers.set(name, handlers);
      void this.subscriber.subscribe(name).catch((error: Error) => this.degrade(error));
    }
    handlers.add(handler);
    return () => {
      handlers!.delete(handler);
      if (handlers!.size > 0) return;
      this.handlers.delete(name);
      void this.subscriber.unsubscribe(name).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    this.handlers.clear();
    this.readyHandlers.clear();
    this.commands.disconnect();
    this.subscriber.disconnect();
  }

  private degrade(error: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log.warning(`Redis is unreachable (${error.message}): changes and sessions are not shared with other replicas until it is back; this replica serves on alone`);
  }

  private recover(): void {
    if (!this.degraded || this.commands.status !== 'ready' || this.subscriber.status !== 'ready') return;
    this.degraded = false;
    this.log.warning('Redis is back: changes and sessions are shared with the other replicas again');
  }
}
