/**
 * One dedicated connection (outside the pool) that LISTENs on every channel someone subscribed
 * to. Channels are reference-counted. When the connection drops (a restart, a failover, a cut),
 * it is opened again with backoff and every channel LISTENed again; notifications sent in between
 * are lost (PostgreSQL queues them only for a listening session), so each channel records the
 * interruption and its subscribers are told to look again.
 */
import pg from 'pg';
import type { Logger } from '@suite/shared';
import type { Database } from './database.js';
import { unreachable } from './errors.js';

export interface ChannelNotification {
  payload: string;
  /** Backend pid of the session that sent NOTIFY. */
  senderPid: number;
  receivedAt: string;
}

/** A time the channel was not listened to: NOTIFYs sent then never arrived. */
export interface ChannelInterruption {
  lostAt: string;
  resumedAt: string;
}

/** A notification, or the news that the channel is listened to again after an interruption. */
export type ChannelEvent = { kind: 'notification'; notification: ChannelNotification } | { kind: 'resumed'; interruption: ChannelInterruption };

type Handler = (event: ChannelEvent) => void;

/** How many notifications per channel a resource read shows. */
const RECENT_PER_CHANNEL = 50;
/** How many interruptions per channel a resource read shows. */
const RECENT_INTERRUPTIONS = 10;
/** Reconnect delays: doubling from the first to the last, so an outage costs few attempts and a blip little delay. */
export interface ListenRetry {
  firstMs: number;
  maxMs: number;
}
const DEFAULT_RETRY: ListenRetry = { firstMs: 250, maxMs: 10_000 };

export class ChannelListener {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  /** Each channel's LISTEN, settled once the server confirmed it. */
  private readonly armed = new Map<string, Promise<unknown>>();
  private readonly recent = new Map<string, ChannelNotification[]>();
  private readonly interruptions = new Map<string, ChannelInterruption[]>();
  /** While the connection is down: since when, and the channels that were listened to then. */
  private outage: { lostAt: Date; channels: Set<string>; attempts: number } | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly database: Database,
    private readonly log: Logger,
    private readonly retry: ListenRetry = DEFAULT_RETRY,
  ) {}

  /**
   * Starts listening; resolves once the server confirmed the LISTEN. Returns the disposer. Fails
   * with an `unavailable` ToolError when the database cannot be reached now.
   */
  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      // Every subscriber of the channel waits for the one LISTEN, not only the first: a later one
      // told "listening" before the server confirmed it would miss what is sent meanwhile.
      this.armed.set(
        channel,
        this.connection().then((client) => client.query(`LISTEN ${pg.escapeIdentifier(channel)}`)),
      );
    }
    set.add(handler);
    try {
      await this.armed.get(channel);
    } catch (error) {
      set.delete(handler);
      if (set.size === 0 && this.handlers.get(channel) === set) {
        this.handlers.delete(channel);
        this.armed.delete(channel);
      }
      throw unreachable(error);
    }
    return async () => {
      const current = this.handlers.get(channel);
      if (!current?.delete(handler) || current.size > 0) return;
      this.handlers.delete(channel);
      this.armed.delete(channel);
      this.recent.delete(channel);
      this.interruptions.delete(channel);
      await this.client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
    };
  }

  isListening(channel: string): boolean {
    return this.handlers.has(channel) && this.client !== undefined && this.outage === undefined;
  }

  recentNotifications(channel: string): ChannelNotification[] {
    return [...(this.recent.get(channel) ?? [])];
  }

  recentInterruptions(channel: string): ChannelInterruption[] {
    return [...(this.interruptions.get(channel) ?? [])];
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.handlers.clear();
    this.armed.clear();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client(this.database.clientConfig(false));
    const lost = (reason: string): void => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => undefined);
      if (this.handlers.size === 0) return;
      this.outage ??= { lostAt: new Date(), channels: new Set(this.handlers.keys()), attempts: 0 };
      this.log.warning(`LISTEN connection lost (${this.database.redact(reason)}); reconnecting with backoff`);
      this.scheduleReconnect();
    };
    // Without a listener, an 'error' on this connection would end the process.
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('connection ended'));
    client.on('notification', (message) => {
      const handlers = this.handlers.get(message.channel);
      if (!handlers) return;
      const notification: ChannelNotification = { payload: message.payload ?? '', senderPid: message.processId, receivedAt: new Date().toISOString() };
      const list = this.recent.get(message.channel) ?? [];
      list.push(notification);
      if (list.length > RECENT_PER_CHANNEL) list.splice(0, list.length - RECENT_PER_CHANNEL);
      this.recent.set(message.channel, list);
      for (const handler of handlers) handler({ kind: 'notification', notification });
    });
    await client.connect();
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error('The listener was closed.');
    }
    this.client = client;
    return client;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.handlers.size === 0 || this.reconnectTimer || !this.outage) return;
    const delay = Math.min(this.retry.maxMs, this.retry.firstMs * 2 ** this.outage.attempts);
    this.outage.attempts++;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.relisten().catch((error: unknown) => {
        this.log.debug(`LISTEN reconnect failed (${this.database.redact(error instanceof Error ? error.message : String(error))}); retrying`);
        this.scheduleReconnect();
      });
    }, delay);
    this.reconnectTimer.unref();
  }

  /** Opens the connection again, LISTENs on every channel, and tells the subscribers of those that were interrupted. */
  private async relisten(): Promise<void> {
    const client = await this.connection();
    for (const channel of this.handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    const outage = this.outage;
    // The connection may have dropped again during the LISTENs; then the next attempt finishes the job.
    if (!outage || this.client !== client) return;
    this.outage = undefined;
    const interruption = { lostAt: outage.lostAt.toISOString(), resumedAt: new Date().toISOString() };
    this.log.info(`LISTEN connection back after ${((Date.now() - outage.lostAt.getTime()) / 1000).toFixed(1)} s; notifications sent meanwhile were missed`);
    for (const channel of outage.channels) {
      const handlers = this.handlers.get(channel);
      if (!handlers) continue;
      const list = this.interruptions.get(channel) ?? [];
      list.push(interruption);
      if (list.length > RECENT_INTERRUPTIONS) list.splice(0, list.length - RECENT_INTERRUPTIONS);
      this.interruptions.set(channel, list);
      for (const handler of handlers) handler({ kind: 'resumed', interruption });
    }
  }
}
