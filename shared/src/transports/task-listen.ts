import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { TASK_STATUS_NOTIFICATION, type TaskFollower } from '../tasks/notifications.js';

/** The SDK's SSE keep-alive period, kept on a stream that carries only task notifications. */
const KEEP_ALIVE_MS = 15_000;

/** A 2026-07-28 HTTP listen stream that follows tasks (`notifications.taskIds`). */
export interface TaskListen {
  id: string | number;
  follower: TaskFollower;
  /** The asked ids that are the principal's tasks: what the acknowledgement names. */
  taskIds: string[];
  /** Where the follower's notifications go once the stream is open. */
  notify?: (params: Record<string, unknown>) => void;
}

/**
 * The SDK's listen stream with task notifications woven in. The SDK's router serves the stream
 * (acknowledgement, its four change kinds, keep-alive, teardown) but drops `taskIds` from the
 * filter and knows no task notification; so its frames are passed through whole, its
 * acknowledgement gets the followed task ids, and `notifications/tasks` frames go between its
 * frames. A stream that asked the SDK for nothing it honours is ended by the SDK at once: this
 * one is kept open here (with its own keep-alive) while the client listens, and ended gracefully
 * through `register`'s handle when the server shuts down.
 */
export function withTaskNotifications(
  response: Response,
  listen: TaskListen,
  subscriptionKey: string,
  register: (end: () => void) => () => void,
): Response {
  const type = response.headers.get('content-type') ?? '';
  if (!response.body || !type.includes('text/event-stream')) {
    listen.follower.close();
    return response;
  }
  const reader = response.body.getReader();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let closed = false;
  /** True once the SDK let go of a stream that lives on for its tasks. */
  let holding = false;
  let keepAlive: NodeJS.Timeout | undefined;
  let unregister: (() => void) | undefined;
  let buffer = '';

  const write = (text: string): void => {
    if (closed) return;
    try {
      controller.enqueue(encoder.encode(text));
    } catch {
      // The client went away meanwhile: cancel() ends the rest.
    }
  };
  const frame = (message: JSONRPCMessage | Record<string, unknown>): void => write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  const finish = (graceful: boolean): void => {
    if (closed) return;
    if (graceful) frame({ jsonrpc: '2.0', id: listen.id, result: { resultType: 'complete', _meta: { [subscriptionKey]: listen.id } } });
    closed = true;
    if (keepAlive) clearInterval(keepAlive);
    unregister?.();
    listen.follower.close();
    try {
      controller.close();
    } catch {
      // Already closed or cancelled.
    }
    void reader.cancel().catch(() => undefined);
  };
  listen.notify = (params) => frame({ jsonrpc: '2.0', method: TASK_STATUS_NOTIFICATION, params: { ...params, _meta: { [subscriptionKey]: listen.id } } });

  const handleFrame = (raw: string): void => {
    const data = /^data: (.*)$/m.exec(raw)?.[1];
    let message: { method?: string; id?: unknown; result?: unknown; params?: { notifications?: Record<string, unknown> } } | undefined;
    try {
      message = data ? (JSON.parse(data) as typeof message) : undefined;
    } catch {
      message = undefined;
    }
    if (message?.method === 'notifications/subscriptions/acknowledged') {
      const honored = message.params?.notifications ?? {};
      frame({ ...message, params: { ...message.params, notifications: { ...honored, taskIds: listen.taskIds } } });
      if (Object.keys(honored).length === 0 && listen.taskIds.length > 0) {
        holding = true;
        keepAlive = setInterval(() => write(': keepalive\n\n'), KEEP_ALIVE_MS);
        keepAlive.unref();
      }
      listen.follower.start();
      return;
    }
    if (message && message.result !== undefined && message.id === listen.id) {
      // The SDK's immediate end of a stream with nothing of its own; this one lives on for its tasks.
      if (holding) return;
      write(raw);
      finish(false);
      return;
    }
    write(raw);
  };

  const pump = async (): Promise<void> => {
    for (;;) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch {
        break;
      }
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
        const raw = buffer.slice(0, cut + 2);
        buffer = buffer.slice(cut + 2);
        handleFrame(raw);
      }
    }
    if (!holding) finish(false);
  };

  const body = new ReadableStream<Uint8Array>({
    start(streamController) {
      controller = streamController;
      unregister = register(() => finish(true));
      void pump();
    },
    cancel() {
      finish(false);
    },
  });
  return new Response(body, { status: response.status, headers: response.headers });
}
