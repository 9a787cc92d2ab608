import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import { APP_MIME_TYPE, APPS_EXTENSION_ID, Logger, serveHttp, type RunningHttp } from '@suite/shared';
import { HostConnection, type Port } from '@suite/shared/app-kit/rpc';
import { buildServer, type LogsConfig } from '../src/server.js';

/** A client that renders apps, as a host such as Claude or VS Code declares itself. */
export const APPS_CAPABILITIES = { extensions: { [APPS_EXTENSION_ID]: { mimeTypes: [APP_MIME_TYPE] } } };

export interface AppHost {
  http: RunningHttp;
  client: Client;
  close(): Promise<void>;
}

/** The real server over HTTP and a host's MCP client of it, in the era asked for. */
export async function startAppServer(config: LogsConfig, era: 'legacy' | 'modern' = 'modern'): Promise<AppHost> {
  const http = await serveHttp(() => buildServer(config), { port: 0, host: '127.0.0.1', log: new Logger('viewer-test') });
  const client = new Client({ name: 'apps-host', version: '1' }, { capabilities: APPS_CAPABILITIES, versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
  return {
    http,
    client,
    async close() {
      await client.close().catch(() => undefined);
      await http.close();
    },
  };
}

/**
 * The extension's own host bridge (`AppBridge`, forwarding the app's tool calls to the real
 * server through `client`) joined to the app kit's connection by a pair of in-memory ports: the
 * app's side of the postMessage conversation, without a browser. Messages are cloned, as
 * postMessage would.
 */
export async function bridgeToApp(client: Client): Promise<{ bridge: AppBridge; app: HostConnection }> {
  const toApp: ((message: unknown) => void)[] = [];
  const bridgeSide = {
    onmessage: undefined as ((message: unknown) => void) | undefined,
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((error: Error) => void) | undefined,
    async start() {},
    async send(message: unknown) {
      const copy = structuredClone(message);
      setImmediate(() => toApp.forEach((handler) => handler(copy)));
    },
    async close() {
      bridgeSide.onclose?.();
    },
  };
  const port: Port = {
    post: (message) => {
      const copy = structuredClone(message);
      setImmediate(() => bridgeSide.onmessage?.(copy));
    },
    listen: (handler) => {
      toApp.push(handler);
      return () => toApp.splice(toApp.indexOf(handler), 1);
    },
  };
  const bridge = new AppBridge(client, { name: 'test-host', version: '1' }, { serverTools: {}, serverResources: {} }, { hostContext: { theme: 'dark' } });
  await bridge.connect(bridgeSide as never);
  return { bridge, app: new HostConnection(port) };
}
