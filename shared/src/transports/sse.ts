import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { AuthInfo } from '../server/context.js';
import { parseJSONRPCMessage, type JSONRPCMessage, type MessageExtraInfo, type Transport } from '@modelcontextprotocol/server';

/**
 * The deprecated HTTP+SSE transport (protocol 2024-11-05) for the clients that still speak it: a
 * GET stream that first names the endpoint to POST to, then carries every server message. SDK v2
 * serves it only through a frozen copy that needs Express; this is the transport alone, behind the
 * same Host, Origin, credential and body checks as Streamable HTTP (done by the caller).
 */
export class SseServerTransport implements Transport {
  readonly sessionId = randomUUID();
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  private stream: http.ServerResponse | undefined;
  private closed = false;

  constructor(
    private readonly endpoint: string,
    private readonly res: http.ServerResponse,
  ) {}

  async start(): Promise<void> {
    if (this.stream) throw new Error('The SSE transport is started already.');
    this.res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache, no-transform', Connection: 'keep-alive' });
    this.res.write(`event: endpoint\ndata: ${this.endpoint}?sessionId=${this.sessionId}\n\n`);
    this.stream = this.res;
    this.res.on('close', () => void this.close());
  }

  /** One POSTed message (already read and parsed by the caller): 202, or 400 when it is not JSON-RPC. */
  handlePost(body: unknown, res: http.ServerResponse, authInfo: AuthInfo | undefined): void {
    if (!this.stream) {
      res.writeHead(409, { 'Content-Type': 'text/plain' }).end('The SSE stream of this session is not open.');
      return;
    }
    let message: JSONRPCMessage;
    try {
      message = parseJSONRPCMessage(body);
    } catch {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end('Invalid message: not a JSON-RPC 2.0 message.');
      return;
    }
    res.writeHead(202, { 'Content-Type': 'text/plain' }).end('Accepted');
    this.onmessage?.(message, authInfo ? { authInfo: { clientId: '', scopes: [], ...authInfo } } : undefined);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.stream) throw new Error('Not connected');
    this.stream.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stream?.end();
    this.stream = undefined;
    this.onclose?.();
  }
}
