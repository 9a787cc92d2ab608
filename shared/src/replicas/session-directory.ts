import { createHash } from 'node:crypto';
import type { EventStore, JSONRPCMessage } from '@modelcontextprotocol/server';
import type { SessionState } from '../server/server.js';
import { UNAVAILABLE, type Answer, type RedisLink } from './redis-link.js';

/** A 2025-era session as every replica can see it. */
export interface SessionRecord {
  /** The SHA-256 of the bearer token the session was opened with, hex; empty without one. */
  tokenDigest: string;
  /** The client's initialize parameters: replayed on a replica that takes the session over. */
  initialize: Record<string, unknown>;
  state: SessionState | undefined;
  /** The replica holding the client's GET stream, if one does. */
  holder: string | undefined;
}

/** What one replica tells the others about sessions. */
export type SessionNews =
  | { kind: 'state'; id: string; from: string; state: SessionState }
  | { kind: 'holder'; id: string; from: string }
  | { kind: 'released'; id: string; from: string }
  | { kind: 'closed'; id: string; from: string }
  | { kind: 'notified'; id: string; from: string; message: JSONRPCMessage };

/** A message for one replica: a client's answer to its request, or a notification for the stream it holds. */
export interface Routed {
  id: string;
  message: JSONRPCMessage;
}

// Opening is one step, so that two replicas opening the last free session at once cannot both win.
const OPEN = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('HSET', KEYS[2], 'token', ARGV[5], 'init', ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[7])
return 1`;

// Only the holder lets go of the stream: a GET that already moved elsewhere keeps its new holder.
const RELEASE = `
if redis.call('HGET', KEYS[1], 'holder') == ARGV[1] then return redis.call('HDEL', KEYS[1], 'holder') end
return 0`;

/** The SDK's name for a session's GET stream, as it appears in the event ids it has us store. */
export const GET_STREAM = '_GET_stream';

// Every replica serving a session stores the notifications it would send on the session's stream
// (the holder also sends them live): the same change announced by two replicas within a second is
// one event, and the second replica gets the first one's id.
const STORE_ONCE = `
local seen = redis.call('GET', KEYS[2])
if seen then return seen end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'm', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('SET', KEYS[2], id, 'PX', 1000)
return id`;

/**
 * A notification every replica serving a session may send for the same change (they follow the
 * same subscriptions): the ones that are merged when they repeat within a second.
 */
export function isChangeAnnouncement(message: JSONRPCMessage): boolean {
  const method = 'method' in message && !('id' in message) ? message.method : undefined;
  return method === 'notifications/resources/updated' || (method?.startsWith('notifications/') === true && method.endsWith('/list_changed'));
}

/** Events kept per stream for Last-Event-ID: enough for a reconnect, bounded for memory. */
const EVENTS_PER_STREAM = 1_000;

/**
 * 2025-era sessions shared by replicas through Redis: each session's record (its token digest, its
 * initialize parameters, its state, which replica holds its GET stream) expires after the idle
 * timeout unless a request touches it; the set of live sessions carries the cap for all replicas
 * together. Events of every stream go to Redis streams, so a client that reconnects to another
 * replica with Last-Event-ID gets what it missed.
 */
export class RedisSessionDirectory {
  private readonly touched = new Map<string, number>();

  constructor(
    readonly link: RedisLink,
    private readonly ttlMs: number,
  ) {}

  get replicaId(): string {
    return this.link.replicaId;
  }

  /** Records a new session within the cap: false when all sessions of all replicas are in use. */
  async open(id: string, tokenDigest: string, initialize: unknown, maxSessions: number): Promise<Answer<boolean>> {
    const now = Date.now();
    const opened = await this.link.run((redis) =>
      redis.eval(OPEN, 2, this.key('sessions'), this.sessionKey(id), now, now + this.ttlMs, maxSessions, id, tokenDigest, JSON.stringify(initialize ?? {}), this.ttlMs),
    );
    if (opened === UNAVAILABLE) return UNAVAILABLE;
    this.touched.set(id, now);
    return opened === 1;
  }

  /**
   * Records again a session this replica serves, after Redis came back: it may have restarted
   * empty. Not bound by the cap: the session is open already. The record's fields are this
   * replica's view; another replica serving the same session writes the same ones.
   */
  async reregister(id: string, tokenDigest: string, initialize: Record<string, unknown>, state: SessionState, holdsStream: boolean): Promise<void> {
    const now = Date.now();
    const done = await this.link.run((redis) => {
      const steps = redis
        .multi()
        .zadd(this.key('sessions'), now + this.ttlMs, id)
        .hset(this.sessionKey(id), 'token', tokenDigest, 'init', JSON.stringify(initialize), 'state', JSON.stringify(state));
      if (holdsStream) steps.hset(this.sessionKey(id), 'holder', this.replicaId);
      return steps.pexpire(this.sessionKey(id), this.ttlMs).exec();
    });
    if (done !== UNAVAILABLE) this.touched.set(id, now);
  }

  async find(id: string): Promise<Answer<SessionRecord | undefined>> {
    const fields = await this.link.run((redis) => redis.hgetall(this.sessionKey(id)));
    if (fields === UNAVAILABLE) return UNAVAILABLE;
    if (fields.init === undefined) return undefined;
    try {
      return {
        tokenDigest: fields.token ?? '',
        initialize: JSON.parse(fields.init) as Record<string, unknown>,
        state: fields.state ? (JSON.parse(fields.state) as SessionState) : undefined,
        holder: fields.holder || undefined,
      };
    } catch {
      return undefined;
    }
  }

  /** Keeps a session alive for another idle timeout; written at most every tenth of it per replica. */
  touch(id: string): void {
    const now = Date.now();
    if (now - (this.touched.get(id) ?? 0) < this.ttlMs / 10) return;
    this.touched.set(id, now);
    void this.link.run((redis) => redis.multi().pexpire(this.sessionKey(id), this.ttlMs).zadd(this.key('sessions'), 'XX', now + this.ttlMs, id).exec());
  }

  /** How many sessions are open across replicas (UNAVAILABLE without Redis). */
  async count(): Promise<Answer<number>> {
    return this.link.run(async (redis) => {
      await redis.zremrangebyscore(this.key('sessions'), '-inf', Date.now());
      return redis.zcard(this.key('sessions'));
    });
  }

  saveState(id: string, state: SessionState): void {
    void this.link.run((redis) => redis.hset(this.sessionKey(id), 'state', JSON.stringify(state)));
    this.link.publish('sessions', { kind: 'state', id, from: this.replicaId, state } satisfies SessionNews);
  }

  /** This replica now holds the session's GET stream. */
  hold(id: string): void {
    void this.link.run((redis) => redis.hset(this.sessionKey(id), 'holder', this.replicaId));
    this.link.publish('sessions', { kind: 'holder', id, from: this.replicaId } satisfies SessionNews);
  }

  /** This replica's GET stream of the session closed. */
  release(id: string): void {
    void this.link.run((redis) => redis.eval(RELEASE, 1, this.sessionKey(id), this.replicaId));
    this.link.publish('sessions', { kind: 'released', id, from: this.replicaId } satisfies SessionNews);
  }

  /** A notification the client sent this replica's copy: the other copies get it too. */
  notifyCopies(id: string, message: JSONRPCMessage): void {
    this.link.publish('sessions', { kind: 'notified', id, from: this.replicaId, message } satisfies SessionNews);
  }

  /** The client ended the session (DELETE): gone for every replica, its events too. */
  async close(id: string): Promise<void> {
    this.touched.delete(id);
    await this.link.run((redis) =>
      redis.multi().del(this.sessionKey(id), this.key(`events:${id}:${GET_STREAM}`), this.requestEventsKey(id)).zrem(this.key('sessions'), id).exec(),
    );
    this.link.publish('sessions', { kind: 'closed', id, from: this.replicaId } satisfies SessionNews);
  }

  /** Forgets what this replica kept about a session it dropped (the record stays for the others). */
  forget(id: string): void {
    this.touched.delete(id);
  }

  /** Sends a message to the replica that must deliver or receive it. */
  route(replica: string, routed: Routed): void {
    this.link.publish(`replica:${replica}`, routed);
  }

  /** Hears what other replicas say about sessions, and the messages routed to this replica. */
  listen(onNews: (news: SessionNews) => void, onRouted: (routed: Routed) => void): () => void {
    const stopNews = this.link.subscribe('sessions', (message) => {
      const news = message as SessionNews;
      if (news?.from !== this.replicaId && typeof news?.id === 'string') onNews(news);
    });
    const stopRouted = this.link.subscribe(`replica:${this.replicaId}`, (message) => {
      const routed = message as Routed;
      if (typeof routed?.id === 'string' && routed.message && typeof routed.message === 'object') onRouted(routed);
    });
    return () => {
      stopNews();
      stopRouted();
    };
  }

  /**
   * The session's event store, so a GET with Last-Event-ID resumes on any replica: the events of its
   * GET stream in one Redis stream, and those of all its requests' streams together in a second
   * one (each entry names its request stream). Two keys per session, however many calls it makes,
   * both removed when the session ends; a key per request's stream left 1,353 keys (6.5 MB, each
   * kept for the idle timeout) after 1,353 calls. Without Redis, events get ids that replay nothing.
   */
  eventStore(sessionId: string): EventStore {
    let local = 0;
    const streamKey = (streamId: string): string => this.key(`events:${sessionId}:${streamId}`);
    const requestsKey = this.requestEventsKey(sessionId);
    return {
      storeEvent: async (streamId, message) => {
        // A priming event (empty) only marks the start of a stream: replaying after it is replaying all.
        if (Object.keys(message).length === 0) return `${streamId}/0-0`;
        const text = JSON.stringify(message);
        if (streamId !== GET_STREAM) {
          // A request's own stream has one writer, this replica: its event ids are numbered here and
          // the event written without waiting, so that keeping it costs the call no round trip.
          const entry = `${REQUEST_EVENT}${this.nextEntryId()}`;
          void this.link.run((redis) =>
            redis.multi().xadd(requestsKey, 'MAXLEN', '~', EVENTS_PER_STREAM, '*', 's', streamId, 'e', entry, 'm', text).pexpire(requestsKey, this.ttlMs).exec(),
          );
          return `${streamId}/${entry}`;
        }
        const stored = await this.link.run(async (redis) => {
          if (isChangeAnnouncement(message)) {
            const digest = createHash('sha256').update(text).digest('hex');
            return (await redis.eval(STORE_ONCE, 2, streamKey(streamId), this.key(`seen:${sessionId}:${digest}`), EVENTS_PER_STREAM, text, this.ttlMs)) as string;
          }
          const [[, entry]] = (await redis
            .multi()
            .xadd(streamKey(streamId), 'MAXLEN', '~', EVENTS_PER_STREAM, '*', 'm', text)
            .pexpire(streamKey(streamId), this.ttlMs)
            .exec()) as [[Error | null, string], unknown];
          return entry;
        });
        return `${streamId}/${stored === UNAVAILABLE ? `local-${++local}` : stored}`;
      },
      getStreamIdForEventId: async (eventId) => splitEventId(eventId)?.streamId,
      replayEventsAfter: async (lastEventId, { send }) => {
        const parts = splitEventId(lastEventId);
        if (!parts) throw new Error('unknown event id');
        if (parts.entry.startsWith('local-')) return parts.streamId;
        if (parts.entry.startsWith(REQUEST_EVENT)) {
          // The request's events after the one named, in the order written (one writer, so the
          // numbers of one stream grow with time); the others' entries are skipped.
          const after = entryOrder(parts.entry.slice(REQUEST_EVENT.length));
          const entries = await this.link.run((redis) => redis.xrange(requestsKey, '-', '+', 'COUNT', 2 * EVENTS_PER_STREAM));
          if (entries === UNAVAILABLE) return parts.streamId;
          for (const [, fields] of entries) {
            const field = fieldsOf(fields);
            if (field.s !== parts.streamId || !field.e?.startsWith(REQUEST_EVENT) || compareOrder(entryOrder(field.e.slice(REQUEST_EVENT.length)), after) <= 0) continue;
            await send(`${parts.streamId}/${field.e}`, JSON.parse(field.m ?? '{}') as JSONRPCMessage);
          }
          return parts.streamId;
        }
        const entries = await this.link.run((redis) => redis.xrange(streamKey(parts.streamId), `(${parts.entry}`, '+', 'COUNT', EVENTS_PER_STREAM));
        if (entries === UNAVAILABLE) return parts.streamId;
        for (const [entry, fields] of entries) {
          await send(`${parts.streamId}/${entry}`, JSON.parse(fields[1] ?? '{}') as JSONRPCMessage);
        }
        return parts.streamId;
      },
    };
  }

  private lastMs = 0;
  private sequence = 0;

  /** A Redis stream entry id, increasing across this process (a request's stream has no other writer). */
  private nextEntryId(): string {
    const now = Date.now();
    if (now > this.lastMs) {
      this.lastMs = now;
      this.sequence = 0;
    } else {
      this.sequence += 1;
    }
    return `${this.lastMs}-${this.sequence}`;
  }

  private key(name: string): string {
    return this.link.prefix + name;
  }

  /** The Redis stream of every request stream's events of a session. */
  private requestEventsKey(id: string): string {
    return this.key(`events:${id}:requests`);
  }

  private sessionKey(id: string): string {
    return this.key(`session:${id}`);
  }
}

/** Marks the event ids of requests' streams (numbered by their replica), told from Redis entry ids. */
const REQUEST_EVENT = 'r';

/** A Redis entry's field list ([name, value, name, value, …]) as an object. */
function fieldsOf(list: string[]): Record<string, string | undefined> {
  const fields: Record<string, string | undefined> = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]!] = list[i + 1];
  return fields;
}

/** The two numbers of an entry id `ms-seq`. */
function entryOrder(entry: string): [number, number] {
  const [ms, seq] = entry.split('-');
  return [Number(ms), Number(seq)];
}

function compareOrder(a: [number, number], b: [number, number]): number {
  return a[0] - b[0] || a[1] - b[1];
}

function splitEventId(eventId: string): { streamId: string; entry: string } | undefined {
  const slash = eventId.lastIndexOf('/');
  if (slash <= 0 || slash === eventId.length - 1) return undefined;
  return { streamId: eventId.slice(0, slash), entry: eventId.slice(slash + 1) };
}
