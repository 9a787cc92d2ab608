/**
 * The stdio transport every server uses: newline-delimited JSON-RPC on stdin and stdout.
 *
 * It replaces the SDK's StdioServerTransport for two reasons. The SDK's read buffer closes the
 * transport (and so ends the server, silently, dropping work in flight) on the first message over
 * 10 MiB; here a line over the limit is discarded as it streams, keeping only its first and last
 * few kilobytes to find its id, and answered with a JSON-RPC error. And the SDK adds one `drain`
 * listener per message written while stdout is full (a MaxListenersExceededWarning at eleven);
 * here writes queue behind a single listener.
 */
import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import { parseJSONRPCMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/server';
import { envelopeKind, readEnvelope, type JsonRpcId } from './json-rpc-envelope.js';
import type { Logger } from '../core/logging.js';
import { collectYoungGeneration } from './memory.js';
import { formatBytes } from '../text/sizes.js';
import { MAX_JSON_NESTING, nestsDeeperThan, tooDeepError } from './json-nesting.js';

/**
 * The default largest message, as the SDK has always enforced it: clients already live within it
 * (the SDK client refuses answers over 10 MiB too), and a message costs about three times its size
 * while it is parsed, so one oversized paste cannot take hundreds of megabytes.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** Upper bound for --max-message-bytes: V8 cannot make a string much longer than 512 Mi characters. */
export const MAX_MESSAGE_BYTES_CEILING = 256 * 1024 * 1024;

/** Bytes kept from each end of an oversized line to read its envelope. */
const ENVELOPE_WINDOW = 64 * 1024;

/**
 * Bytes of an oversized line let go between two young-generation collections. Each chunk stdin
 * reads is a buffer whose memory lives outside V8's heap; left to itself, V8 (Node 24's most of
 * all) lets 60 MiB or more of them pile up before it collects, so a 50 MB paste raised the peak
 * by up to 80 MiB. A scavenge every 16 MiB costs a millisecond or two and bounds that to about
 * the limit plus 16 MiB.
 */
const DISCARDED_BYTES_PER_COLLECTION = 16 * 1024 * 1024;

/** JSON-RPC 2.0 error codes. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

export interface StdioTransportOptions {
  /** Largest line (one message) read from stdin, in bytes; default DEFAULT_MAX_MESSAGE_BYTES. */
  maxMessageBytes?: number;
  /** Run while an oversized line streams past, every DISCARDED_BYTES_PER_COLLECTION; collectYoungGeneration by default. */
  collectDiscarded?: () => void;
  log?: Logger;
  stdin?: Readable;
  stdout?: Writable;
}


/** A copy of the first `count` bytes of a list of buffers. */
function firstBytes(parts: readonly Buffer[], count: number): Buffer {
  const out: Buffer[] = [];
  let taken = 0;
  for (const part of parts) {
    if (taken >= count) break;
    const piece = part.subarray(0, count - taken);
    out.push(piece);
    taken += piece.length;
  }
  return Buffer.concat(out, taken);
}

/**
 * Splits a byte stream into lines with a bound: a line up to `max` bytes is handed over whole; a
 * longer one is handed over as its size plus its first and last ENVELOPE_WINDOW bytes, having
 * held no more than that while it streamed past.
 */
class BoundedLineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private head: Buffer | undefined;
  private tail: Buffer | undefined;
  private discardedSinceCollection = 0;

  constructor(
    private readonly max: number,
    private readonly onLine: (line: string) => void,
    private readonly onOversized: (size: number, head: Buffer, tail: Buffer) => void,
    private readonly collectDiscarded: (() => void) | undefined,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start);
      const end = newline === -1 ? chunk.length : newline;
      if (end > start) this.append(chunk.subarray(start, end));
      if (newline === -1) break;
      this.finishLine();
      start = newline + 1;
    }
  }

  /** Forgets a partial line (the stream ended or the transport closed). */
  reset(): void {
    this.parts = [];
    this.size = 0;
    this.head = undefined;
    this.tail = undefined;
  }

  private append(piece: Buffer): void {
    this.size += piece.length;
    if (this.head === undefined) {
      if (this.size <= this.max) {
        this.parts.push(piece);
        return;
      }
      // Over the limit: keep the two ends, let go of the rest, and from now on only count.
      const parts = [...this.parts, piece];
      this.parts = [];
      this.head = firstBytes(parts, ENVELOPE_WINDOW);
      this.tail = Buffer.alloc(0);
      let from = parts.length;
      for (let bytes = 0; from > 0 && bytes < ENVELOPE_WINDOW; ) bytes += parts[--from]!.length;
      for (const part of parts.slice(from)) this.keepTail(part);
      return;
    }
    this.keepTail(piece);
  }

  private keepTail(piece: Buffer): void {
    this.discardedSinceCollection += piece.length;
    if (this.discardedSinceCollection >= DISCARDED_BYTES_PER_COLLECTION) {
      this.discardedSinceCollection = 0;
      this.collectDiscarded?.();
    }
    const tail = this.tail ?? Buffer.alloc(0);
    this.tail =
      piece.length >= ENVELOPE_WINDOW
        ? Buffer.from(piece.subarray(piece.length - ENVELOPE_WINDOW))
        : Buffer.from(Buffer.concat([tail, piece]).subarray(Math.max(0, tail.length + piece.length - ENVELOPE_WINDOW)));
  }

  private finishLine(): void {
    const { parts, size, head, tail } = this;
    this.reset();
    if (head !== undefined) {
      this.onOversized(size, head, tail ?? Buffer.alloc(0));
      return;
    }
    if (size === 0) return;
    const line = (parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)).toString('utf8');
    this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}

/**
 * Newline-delimited JSON-RPC over a readable (stdin) and a writable (stdout), implementing the
 * SDK's Transport interface. Lines that are not JSON get a parse error (-32700), JSON that is not
 * a JSON-RPC message gets an invalid-request error (-32600), and neither stops the transport.
 */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /**
   * Sees every well-formed inbound message before the SDK does, and may hold it (a promise) or
   * hand on another in its place: the serving layer arms a listen stream's change sources before
   * the SDK acknowledges it, and narrows the stream to what it really follows. Messages reach the
   * SDK in the order they came, so those after a held one wait for it.
   */
  intercept?: (message: JSONRPCMessage) => JSONRPCMessage | undefined | Promise<JSONRPCMessage | undefined>;
  /**
   * Sees every message sent (the serving layer learns of the SDK's refusals through it), and may
   * send another in its place (a listen stream's acknowledgement that names its task ids).
   */
  observeSent?: (message: JSONRPCMessage) => JSONRPCMessage | void;

  readonly maxMessageBytes: number;
  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private readonly log: Logger | undefined;
  private readonly reader: BoundedLineReader;
  private started = false;
  private closed = false;
  /** Lines waiting for stdout to drain, each with the resolver of its send(). */
  private queue: { line: string; done: () => void }[] = [];
  private blocked = false;
  /** The last inbound message still held by `intercept`: later ones are delivered after it. */
  private held: Promise<void> | undefined;

  constructor(options: StdioTransportOptions = {}) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.log = options.log;
    this.reader = new BoundedLineReader(
      this.maxMessageBytes,
      (line) => this.handleLine(line),
      (size, head, tail) => this.handleOversized(size, head, tail),
      options.collectDiscarded ?? collectYoungGeneration,
    );
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('StdioTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStdinError);
    this.stdout.on('error', this.onStdoutError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The stdio transport is closed.'));
    const sent = this.observeSent?.(message) ?? message;
    const line = `${JSON.stringify(sent)}\n`;
    return new Promise((resolve) => {
      if (this.blocked) {
        this.queue.push({ line, done: resolve });
        return;
      }
      this.write(line);
      resolve();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStdinError);
    this.stdout.off('drain', this.onDrain);
    // Keep a listener: an EPIPE after close must not become an uncaught exception.
    this.stdout.off('error', this.onStdoutError);
    this.stdout.on('error', ignore);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.reader.reset();
    // Nothing more will be written: let every waiting send() return.
    for (const { done } of this.queue.splice(0)) done();
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.reader.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  };

  private readonly onStdinError = (error: Error): void => {
    this.onerror?.(error);
  };

  private readonly onStdoutError = (error: Error): void => {
    // The client is gone (EPIPE): nothing can be said to it any more.
    this.onerror?.(error);
    void this.close();
  };

  private readonly onDrain = (): void => {
    this.blocked = false;
    while (!this.blocked && this.queue.length > 0) {
      const { line, done } = this.queue.shift()!;
      this.write(line);
      done();
    }
  };

  /** Writes a line; when the stream's buffer is full, later lines wait for one `drain`. */
  private write(line: string): void {
    if (!this.stdout.write(line)) {
      this.blocked = true;
      this.stdout.once('drain', this.onDrain);
    }
  }

  private handleLine(line: string): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'invalid JSON';
      this.log?.warning('received a line that is not JSON', { bytes: Buffer.byteLength(line) });
      this.reply(null, PARSE_ERROR, `Parse error: the message is not valid JSON (${reason}). Send one JSON-RPC 2.0 object per line.`);
      return;
    }
    const object = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    const id = object && (typeof object.id === 'string' || typeof object.id === 'number') ? object.id : null;
    // Refused before anything walks it recursively (the SDK's validation would overflow the stack).
    if (nestsDeeperThan(value, MAX_JSON_NESTING)) {
      this.refuseTooDeep(object, id);
      return;
    }
    let message: JSONRPCMessage | undefined;
    try {
      message = parseJSONRPCMessage(value);
    } catch {
      message = undefined;
    }
    if (message) {
      this.deliver(message);
      return;
    }
    if (object && !('method' in object) && ('result' in object || 'error' in object)) {
      // A malformed response to one of our requests: answering it could start a ping-pong of errors.
      this.log?.warning('received a malformed JSON-RPC response; ignored', { id });
      return;
    }
    this.log?.warning('received JSON that is not a JSON-RPC 2.0 message', { id });
    const why = Array.isArray(value)
      ? 'JSON-RPC batches (arrays) are not supported by MCP; send one message per line.'
      : 'it is not a JSON-RPC 2.0 request or notification (it needs "jsonrpc": "2.0", a string "method" and, for a request, a string or number "id").';
    this.reply(id, INVALID_REQUEST, `Invalid Request: ${why}`);
  }

  /** Hands a message to the SDK through `intercept`, in arrival order. */
  private deliver(message: JSONRPCMessage): void {
    let next: JSONRPCMessage | undefined | Promise<JSONRPCMessage | undefined>;
    try {
      next = this.intercept ? this.intercept(message) : message;
    } catch (error) {
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
      next = message;
    }
    if (!this.held && !(next instanceof Promise)) {
      // undefined: the serving layer answered the message itself.
      if (next) this.onmessage?.(next);
      return;
    }
    const prior = this.held ?? Promise.resolve();
    const held = prior
      .then(() => next)
      .catch((error: unknown) => {
        // The message still gets its answer: the SDK sees it as it came.
        this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        return message;
      })
      .then((ready) => {
        if (!this.closed && ready) this.onmessage?.(ready);
      });
    this.held = held;
    void held.finally(() => {
      if (this.held === held) this.held = undefined;
    });
  }

  private refuseTooDeep(object: Record<string, unknown> | undefined, id: JsonRpcId | null): void {
    const error = tooDeepError(MAX_JSON_NESTING);
    if (object && !('method' in object) && ('result' in object || 'error' in object)) {
      // The answer to one of our own requests: fail that request rather than leave it waiting.
      this.log?.warning(`dropped a response nested more than ${MAX_JSON_NESTING} levels deep`, { id });
      if (id !== null) this.onmessage?.({ jsonrpc: '2.0', id, error: { ...error, message: `The client's response nests more than ${MAX_JSON_NESTING} levels deep and was discarded.` } });
      return;
    }
    this.log?.warning(`refused a message nested more than ${MAX_JSON_NESTING} levels deep`, { id });
    if (id === null && object && 'method' in object && !('id' in object)) return; // A notification: nothing to answer.
    this.reply(id, error.code, error.message, error.data);
  }

  private handleOversized(size: number, head: Buffer, tail: Buffer): void {
    const envelope = readEnvelope(head.toString('utf8'), tail.toString('utf8'));
    const kind = envelopeKind(envelope);
    const limit = `${formatBytes(this.maxMessageBytes)} (${this.maxMessageBytes} bytes)`;
    const data = { receivedBytes: size, maxMessageBytes: this.maxMessageBytes };
    if (envelope.id === undefined) {
      this.log?.warning(`dropped a ${size}-byte message without a readable id: it is over the ${limit} limit (--max-message-bytes)`, data);
      return;
    }
    if (kind === 'response') {
      // The answer to one of our own requests (sampling, roots): fail that request rather than leave it waiting.
      this.log?.warning(`dropped a ${size}-byte response over the ${limit} limit (--max-message-bytes)`, { id: envelope.id, ...data });
      this.onmessage?.({
        jsonrpc: '2.0',
        id: envelope.id,
        error: { code: INVALID_REQUEST, message: `The client's response was ${formatBytes(size)}, over this server's ${limit} message limit, and was discarded.`, data },
      });
      return;
    }
    this.log?.warning(`refused a ${size}-byte request over the ${limit} limit (--max-message-bytes)`, { id: envelope.id, ...data });
    this.reply(
      envelope.id,
      INVALID_REQUEST,
      `Request too large: the message was ${formatBytes(size)}, over this server's limit of ${limit}. ` +
        'Send less in one call (split the content), or start the server with a higher --max-message-bytes.',
      data,
    );
  }

  private reply(id: JsonRpcId | null, code: number, message: string, data?: Record<string, unknown>): void {
    // The SDK's message type has no `id: null`, which JSON-RPC requires when the id cannot be read.
    const error = { jsonrpc: '2.0', id, error: { code, message, ...(data ? { data } : {}) } } as unknown as JSONRPCMessage;
    this.send(error).catch(() => undefined);
  }
}

function ignore(): void {}
