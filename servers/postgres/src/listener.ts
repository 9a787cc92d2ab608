/**
 * One dedicated connection (outside the pool) that LISTENs on every channel someone subscribed
 * to. Channels are reference-counted; the connection reconnects and re-LISTENs if it drops.
 */
import pg from 'pg';
import type { Logger } from '@suite/shared';
import type { Database } from './database.js';

export interface ChannelNotification {
  payload: string;
  /** Backend pid of the session that sent NOTIFY. */
  senderPid: number;
  receivedAt: string;
}

type Handler = (notification: ChannelNotification) => void;

/** How many notifications per channel a resource read shows. */
const RECENT_PER_CHANNEL = 50;

export class ChannelListener {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly recent = new Map<string, ChannelNotification[]>();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly database: Database,
    private readonly log: Logger,
  ) {}

  /** Starts listening; resolves once the server confirmed the LISTEN. Returns the disposer. */
  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    const first = !set;
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    if (first) {
      try {
        const client = await this.connection();
        await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
      } catch (error) {
        set.delete(handler);
        if (set.size === 0) this.handlers.delete(channel);
        throw error;
      }
    }
    return async () => {
      const current = this.handlers.get(channel);
      if (!current?.delete(handler) || current.size > 0) return;
      this.handlers.delete(channel);
      this.recent.delete(channel);
      await this.client?.query(`UNLISTEN ${pg.escapeIdentifier(channel)}`).catch(() => undefined);
    };
  }

  isListening(channel: string): boolean {
    return this.handlers.has(channel);
  }

  recentNotifications(channel: string): ChannelNotification[] {
    return [...(this.recent.get(channel) ?? [])];
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.handlers.clear();
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
      this.log.warning(`LISTEN connection lost (${this.database.redact(reason)}); reconnecting`);
      this.scheduleReconnect();
    };
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
      for (const handler of handlers) handler(notification);
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private scheduleReconnect(): void {
    if (this.closed || this.handlers.size === 0 || this.reconnectTimer) return;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connection()
        .then(async (client) => {
          for (const channel of this.handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        })
        .catch(() => this.scheduleReconnect());
    }, 1000);
    this.reconnectTimer.unref();
  }
}
