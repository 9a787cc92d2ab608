import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { isChangeAnnouncement, type RedisSessionDirectory } from '../replicas/session-directory.js';

/** Separates the replica from the request number in the ids of requests a replica sends clients. */
const ID_MARK = '~';

/** Requests kept for a GET stream that is not open yet; past this the oldest go. */
const MAX_WAITING = 32;

/**
 * A 2025-era Streamable HTTP session between the SDK server and the SDK's HTTP transport.
 *
 * A request the server sends on its own (roots/list, right after the client's `initialized`) can
 * only travel on the client's GET stream, which the client opens after that very notification was
 * accepted: the SDK would drop it, and the server would wait for roots that never come. Such
 * requests wait here until the stream opens.
 *
 * With replicas sharing the session (`directory`), several replicas may serve it at once, and one
 * of them holds the client's GET stream. Then this transport also:
 * - names every request it sends the client after this replica, so that the client's answer,
 *   posted to whichever replica, is routed back to the one waiting for it;
 * - sends its unsolicited requests through the replica holding the stream;
 * - sends its unsolicited messages (notifications, roots/list) through the replica holding the
 *   stream; every replica serving the session follows the same subscriptions (their state travels
 *   with the session), so the holder passes on the same notification once, and with no holder the
 *   session's event store keeps one event per notification for the next Last-Event-ID;
 * - passes the client's notifications (initialized, roots/list_changed, cancelled) to the other
 *   replicas' copies of the session.
 */
export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private holderId: string | undefined;
  private localStreams = 0;
  private waiting: JSONRPCRequest[] = [];
  private readonly recent = new Map<string, number>();
  /** The client's requests this copy has not answered yet: what a shutdown must answer itself. */
  private readonly inFlight = new Set<string | number>();

  constructor(
    private readonly inner: Transport,
    private readonly id: string,
    private readonly directory?: RedisSessionDirectory,
  ) {}

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  /** Whether a GET stream of this session is open on this replica. */
  get holdsStream(): boolean {
    return this.localStreams > 0;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  setSupportedProtocolVersions(versions: string[]): void {
    this.inner.setSupportedProtocolVersions?.(versions);
  }

  async start(): Promise<void> {
    this.inner.onmessage = (message, extra) => this.receive(message, extra);
    this.inner.onerror = (error) => this.onerror?.(error);
    this.inner.onclose = () => this.onclose?.();
    await this.inner.start();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.inFlight.delete(message.id as string | number);
    const outgoing = isJSONRPCRequest(message) && this.directory ? { ...message, id: `${this.directory.replicaId}${ID_MARK}${message.id}` } : message;
    const unsolicited = options?.relatedRequestId === undefined && !isJSONRPCResultResponse(message) && !isJSONRPCErrorResponse(message);
    if (!unsolicited) return this.inner.send(outgoing, options);
    return this.dispatch(outgoing);
  }

  /**
   * An unsolicited message (its id already final) goes on the session's stream: ours, else the
   * holder's. With no stream anywhere, the SDK stores a notification for a later Last-Event-ID,
   * and a request waits for the next stream to open.
   */
  private async dispatch(message: JSONRPCMessage): Promise<void> {
    const request = isJSONRPCRequest(message);
    if (this.localStreams > 0) {
      // Only replicas announce one change twice; alone, a second announcement is a second change.
      if (this.directory && isChangeAnnouncement(message) && this.seenLately(message)) return;
      return this.inner.send(message);
    }
    // Kept in the session's event store too, so that a holder that dies with it undelivered
    // loses nothing: the client's next stream, anywhere, replays it.
    if (!request) await this.inner.send(message);
    const holder = this.holderId;
    if (holder !== undefined && this.directory && holder !== this.directory.replicaId) {
      this.directory.route(holder, { id: this.id, message });
      return;
    }
    if (!request) return;
    this.waiting.push(message);
    if (this.waiting.length > MAX_WAITING) this.waiting.shift();
  }

  /**
   * Whether the stream carried this very announcement within the last second: replicas following
   * the same subscriptions each announce a change, and the client hears it once.
   */
  private seenLately(message: JSONRPCMessage): boolean {
    const now = Date.now();
    for (const [key, at] of this.recent) if (now - at > 1_000) this.recent.delete(key);
    const key = JSON.stringify(message);
    if (this.recent.has(key)) return true;
    this.recent.set(key, now);
    return false;
  }

  /** The client's GET stream is open here (the SDK has registered it). */
  streamOpened(): void {
    this.localStreams += 1;
    this.holderId = this.directory?.replicaId;
    this.flush();
  }

  /** Returns whether this replica held the stream until now. */
  streamClosed(): boolean {
    this.localStreams -= 1;
    if (this.localStreams > 0 || this.holderId !== this.directory?.replicaId) return false;
    this.holderId = undefined;
    return true;
  }

  /** Another replica holds the client's GET stream now (or it is known from the session's record). */
  heldBy(replica: string | undefined): void {
    this.holderId = replica;
    if (replica !== undefined) this.flush();
  }

  /** The replica that held the stream let go of it. */
  released(replica: string): void {
    if (this.holderId === replica) this.holderId = undefined;
  }

  /** A message another replica routed here: the client's answer to our request, or a request for the stream we hold. */
  async deliver(message: JSONRPCMessage): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) this.receive(message, undefined, false);
    else await this.dispatch(message);
  }

  /** A notification the client sent another replica's copy of this session. */
  notified(message: JSONRPCMessage): void {
    this.onmessage?.(message);
  }

  /**
   * Answers every request of the client still running here with a JSON-RPC error (the server is
   * shutting down): without it the client hears nothing until its own timeout.
   */
  async answerInFlight(message: string): Promise<void> {
    const ids = [...this.inFlight];
    this.inFlight.clear();
    await Promise.all(ids.map((id) => this.inner.send({ jsonrpc: '2.0', id, error: { code: -32000, message } }, { relatedRequestId: id }).catch(() => undefined)));
  }

  async close(): Promise<void> {
    this.waiting = [];
    await this.inner.close();
  }

  private flush(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const request of waiting) void this.dispatch(request).catch((error: Error) => this.onerror?.(error));
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo, fromClient = true): void {
    const target = replicaOfAnswer(message);
    if (target !== undefined && this.directory && (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message))) {
      if (target !== this.directory.replicaId) {
        this.directory.route(target, { id: this.id, message });
        return;
      }
      const ours = String(message.id).slice(target.length + ID_MARK.length);
      this.onmessage?.({ ...message, id: /^\d+$/.test(ours) ? Number(ours) : ours }, extra);
      return;
    }
    if (fromClient && this.directory && isJSONRPCNotification(message)) this.directory.notifyCopies(this.id, message);
    if (fromClient && isJSONRPCRequest(message)) this.inFlight.add(message.id);
    this.onmessage?.(message, extra);
  }
}

/** The replica a client's answer is for, from the id of the request it answers. */
export function replicaOfAnswer(message: JSONRPCMessage): string | undefined {
  if (!(isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) || typeof message.id !== 'string') return undefined;
  const mark = message.id.indexOf(ID_MARK);
  return mark > 0 ? message.id.slice(0, mark) : undefined;
}
