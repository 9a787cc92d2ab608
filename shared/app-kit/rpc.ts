/**
 * The app's side of the MCP Apps conversation with its host: JSON-RPC 2.0 over a port (the host
 * window's postMessage in a browser, anything in a test). No DOM here, so Node tests drive it
 * against the extension's real `AppBridge`.
 */

/** The Apps protocol revision this kit speaks (ext-apps 2.x). */
export const APPS_PROTOCOL_VERSION = '2026-01-26';

export interface Port {
  post(message: unknown): void;
  /** Calls the handler with every message from the host; returns a function that stops it. */
  listen(handler: (message: unknown) => void): () => void;
}

export interface ToolResult {
  content?: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface HostContext {
  theme?: 'light' | 'dark';
  styles?: { variables?: Record<string, string | undefined> };
  toolInfo?: { tool?: { name?: string } };
  [key: string]: unknown;
}

interface Message {
  jsonrpc?: string;
  id?: string | number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string };
}

type Handler = (params: unknown) => void;

/** A tool call's failure as the host or server reported it. */
export class HostError extends Error {}

export class HostConnection {
  private nextId = 1;
  private readonly pending = new Map<string | number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private readonly handlers = new Map<string, Handler[]>();
  private readonly stop: () => void;
  context: HostContext = {};

  constructor(private readonly port: Port) {
    this.stop = port.listen((raw) => this.receive(raw));
    this.on('ui/notifications/host-context-changed', (params) => {
      this.context = { ...this.context, ...(params as HostContext) };
    });
  }

  /** The handshake: `ui/initialize`, then `ui/notifications/initialized`. Resolves with the host's context. */
  async initialize(appInfo: { name: string; version: string }): Promise<HostContext> {
    const result = (await this.request('ui/initialize', { appInfo, appCapabilities: {}, protocolVersion: APPS_PROTOCOL_VERSION })) as { hostContext?: HostContext };
    this.context = result.hostContext ?? {};
    this.notify('ui/notifications/initialized', {});
    return this.context;
  }

  /** Calls a tool of this app's server through the host. An isError result resolves; a refused call rejects. */
  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return (await this.request('tools/call', { name, arguments: args })) as ToolResult;
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.port.post({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    this.port.post({ jsonrpc: '2.0', method, params });
  }

  /** Handles a notification from the host (`ui/notifications/tool-input`, `…/tool-result`, …). */
  on(method: string, handler: Handler): void {
    const list = this.handlers.get(method) ?? [];
    list.push(handler);
    this.handlers.set(method, list);
  }

  close(): void {
    this.stop();
    for (const { reject } of this.pending.values()) reject(new HostError('The connection to the host closed.'));
    this.pending.clear();
  }

  private receive(raw: unknown): void {
    if (typeof raw !== 'object' || raw === null) return;
    const message = raw as Message;
    if (message.jsonrpc !== '2.0') return;
    if (message.method === undefined && message.id !== undefined) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new HostError(message.error.message));
      else waiting.resolve(message.result);
      return;
    }
    if (message.method === undefined) return;
    if (message.id !== undefined) {
      // Requests from the host: ping and teardown are answered; nothing else is offered.
      const known = message.method === 'ping' || message.method === 'ui/resource-teardown';
      this.port.post(known ? { jsonrpc: '2.0', id: message.id, result: {} } : { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
      return;
    }
    for (const handler of this.handlers.get(message.method) ?? []) handler(message.params);
  }
}

/** The text of a tool result's text blocks, joined. */
export function resultText(result: ToolResult): string {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n');
}
