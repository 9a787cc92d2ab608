/**
 * MCP Apps in tests (`@suite/test-kit/apps`): the real server behind a host's MCP client that
 * renders apps, the extension's own AppBridge joined to the app kit's connection in the process,
 * and a small host in Debian's Chromium for the browser tests.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { expect } from 'vitest';
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AppBridge } from '@modelcontextprotocol/ext-apps/app-bridge';
import { APP_MIME_TYPE, APPS_EXTENSION_ID, Logger, serveHttp, type RunningHttp, type SuiteServer } from '@suite/shared';

/** A client that renders apps, as a host such as Claude or VS Code declares itself. */
export const APPS_CAPABILITIES = { extensions: { [APPS_EXTENSION_ID]: { mimeTypes: [APP_MIME_TYPE] } } };

export interface AppHost {
  http: RunningHttp;
  client: Client;
  close(): Promise<void>;
}

/** The real server (a session factory) over HTTP and a host's MCP client of it, in the era asked for. */
export async function startAppServer(factory: () => SuiteServer, era: 'legacy' | 'modern' = 'modern'): Promise<AppHost> {
  const http = await serveHttp(factory, { port: 0, host: '127.0.0.1', log: new Logger('app-test') });
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

/** The app's end of a message channel (the shape of the app kit's `Port`). */
export interface AppPort {
  post(message: unknown): void;
  listen(handler: (message: unknown) => void): () => void;
}

/**
 * The extension's own host bridge (`AppBridge`, forwarding the app's tool calls to the real
 * server through `client`) joined to the app kit's connection (give it `port`) by a pair of in-memory ports: the
 * app's side of the postMessage conversation, without a browser. Messages are cloned, as
 * postMessage would.
 */
export async function bridgeToApp(client: Client, theme: 'light' | 'dark' = 'dark'): Promise<{ bridge: AppBridge; port: AppPort }> {
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
  const port: AppPort = {
    post: (message) => {
      const copy = structuredClone(message);
      setImmediate(() => bridgeSide.onmessage?.(copy));
    },
    listen: (handler) => {
      toApp.push(handler);
      return () => toApp.splice(toApp.indexOf(handler), 1);
    },
  };
  const bridge = new AppBridge(client, { name: 'test-host', version: '1' }, { serverTools: {}, serverResources: {} }, { hostContext: { theme } });
  await bridge.connect(bridgeSide as never);
  return { bridge, port };
}


/** What a host does after a tool call that names an app: the call through its client, then the call's arguments and result to the app. */
export async function callToolForApp(client: Client, bridge: AppBridge, name: string, args: Record<string, unknown>): Promise<Awaited<ReturnType<Client['callTool']>>> {
  const result = await client.callTool({ name, arguments: args });
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result as never);
  return result;
}


/**
 * A small MCP Apps host in Debian's Chromium: a host page on one origin that embeds the app, as
 * the real server's resources/read gave it, in a sandboxed frame (`allow-scripts` only) served
 * from a second origin with the extension's default CSP as a response header. The host page runs
 * the extension's own AppBridge; the app's tool calls go to the real server through `client`.
 */

/** The MCP Apps specification's default CSP for a resource that declares no domains. */
export const DEFAULT_APP_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self' data:; connect-src 'none'";

/** Where Debian's chromium package puts the browser (`apt-get install chromium`). */
export const CHROMIUM = process.env.SUITE_CHROMIUM ?? '/usr/bin/chromium';

const HOST_SCRIPT = `
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
const params = new URLSearchParams(location.search);
const frame = document.createElement('iframe');
frame.setAttribute('sandbox', 'allow-scripts');
frame.style.cssText = 'width:100%;height:100%;border:0';
document.body.append(frame);
const variables = params.get('variables');
const hostContext = { theme: params.get('theme'), ...(variables ? { styles: { variables: JSON.parse(variables) } } : {}) };
const bridge = new AppBridge(null, { name: 'suite-test-host', version: '1' }, { serverTools: {} }, { hostContext });
bridge.oncalltool = (request) => window.hostCallTool(request);
bridge.onsizechange = () => {};
window.bridge = bridge;
window.appReady = new Promise((resolve) => (bridge.oninitialized = resolve));
window.messagesFromApp = [];
window.addEventListener('message', (event) => { if (typeof event.data === 'string') window.messagesFromApp.push(event.data); });
await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
frame.src = params.get('app');
`;

export interface AppBrowser {
  page: Page;
  /** The app's frame (second origin). */
  app(): Frame;
  /** What the host tells the app after a tool call: its arguments, then its result. */
  showToolResult(args: Record<string, unknown>, result: unknown): Promise<void>;
  /** Alerts, dialogs and messages the app posted as plain strings: a hostile payload that ran would show here. */
  incidents(): Promise<string[]>;
  close(): Promise<void>;
}

let hostBundle: Promise<string> | undefined;

export interface AppBrowserOptions {
  html: string;
  client: Client;
  theme: 'light' | 'dark';
  /** The host's theme CSS variables (`hostContext.styles.variables`), as a host such as Claude sends them. */
  variables?: Record<string, string>;
  width?: number;
  height?: number;
}

export async function openAppInBrowser(options: AppBrowserOptions): Promise<AppBrowser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is not at ${CHROMIUM}: install Debian's package (apt-get install -y chromium) or set SUITE_CHROMIUM to the browser's executable.`);
  }
  hostBundle ??= build({
    stdin: { contents: HOST_SCRIPT, resolveDir: path.dirname(fileURLToPath(import.meta.url)), loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    write: false,
    logLevel: 'silent',
  }).then((out) => out.outputFiles[0]!.text);
  const script = await hostBundle;
  const servers: Server[] = [];
  const serve = async (handler: Parameters<typeof createServer>[1]): Promise<number> => {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
  };
  const appPort = await serve((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': DEFAULT_APP_CSP });
    res.end(options.html);
  });
  const hostPort = await serve((req, res) => {
    if (req.url?.startsWith('/host.js')) {
      res.writeHead(200, { 'content-type': 'text/javascript' });
      res.end(script);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><html><body style="margin:0;height:100vh"><script type="module" src="/host.js"></script></body></html>');
  });
  let browser: Browser;
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  } catch (error) {
    for (const s of servers) s.close();
    throw new Error(`Chromium at ${CHROMIUM} did not start: ${(error as Error).message}`);
  }
  const page = await browser.newPage({ viewport: { width: options.width ?? 900, height: options.height ?? 560 }, colorScheme: options.theme });
  const incidents: string[] = [];
  page.on('dialog', (dialog) => {
    incidents.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.exposeFunction('hostCallTool', (request: { name: string; arguments?: Record<string, unknown> }) => options.client.callTool(request));
  // Two origins: the host on 127.0.0.1, the app on localhost.
  const appUrl = `http://localhost:${appPort}/app.html`;
  const variables = options.variables ? `&variables=${encodeURIComponent(JSON.stringify(options.variables))}` : '';
  await page.goto(`http://127.0.0.1:${hostPort}/?theme=${options.theme}${variables}&app=${encodeURIComponent(appUrl)}`);
  await page.evaluate(() => (globalThis as unknown as { appReady: Promise<void> }).appReady);
  return {
    page,
    app: () => {
      const frame = page.frames().find((f) => f.url() === appUrl);
      if (!frame) throw new Error('the app frame is not there');
      return frame;
    },
    showToolResult: async (args, result) => {
      await page.evaluate(
        async ({ args, result }) => {
          const bridge = (globalThis as unknown as { bridge: { sendToolInput(p: unknown): Promise<void>; sendToolResult(p: unknown): Promise<void> } }).bridge;
          await bridge.sendToolInput({ arguments: args });
          await bridge.sendToolResult(result);
        },
        { args, result },
      );
    },
    incidents: async () => [...incidents, ...(await page.evaluate(() => (globalThis as unknown as { messagesFromApp: string[] }).messagesFromApp))],
    close: async () => {
      await browser.close();
      for (const s of servers) s.close();
    },
  };
}

/**
 * Table and column names someone else chose: markup and a closing script tag, short enough for
 * PostgreSQL's 63-byte identifiers. Each would call alert() if it ran (a dialog the browser test sees).
 */
export const HOSTILE_NAMES = {
  table: '<img src=x onerror=alert(1)>',
  column: '</script><script>alert(2)</script>',
  reference: '<svg onload=alert(3)>',
} as const;

/** What the schema view shows of a table: its label, kind and each column as [name, type, key, null, references]. */
export interface SchemaViewTable {
  table: string;
  kind: string;
  columns: string[][];
}

/** What the schema view shows, read from its DOM: the cards and the list of foreign keys. */
export async function readSchemaView(app: Frame): Promise<{ tables: SchemaViewTable[]; foreignKeys: string[] }> {
  // The page's code as text: this package is Node code, without the DOM's types.
  return app.evaluate(`({
    tables: [...document.querySelectorAll('.card')].map((card) => ({
      table: card.querySelector('h2 .name').textContent,
      kind: card.querySelector('h2 .kind').textContent,
      columns: [...card.querySelectorAll('tbody tr')].map((tr) =>
        [...tr.children].map((td) => (td.classList.contains('refs') ? [...td.querySelectorAll('button')].map((b) => b.textContent).join(' ') : td.textContent)),
      ),
    })),
    foreignKeys: [...document.querySelectorAll('.fks li')].map((li) => li.textContent),
  })`);
}

interface ExpectedTable {
  schema: string | null;
  name: string;
  kind: string;
  columns: { name: string; type: string; notNull: boolean; primaryKey: number }[];
  foreignKeys: { columns: string[]; schema: string | null; table: string; references: string[] }[];
}

/** What the schema view must show for tables as the database has them (written out by the test). */
export function expectedSchemaView(tables: ExpectedTable[]): { tables: SchemaViewTable[]; foreignKeys: string[] } {
  const label = (schema: string | null, name: string): string => (schema === null ? name : `${schema}.${name}`);
  return {
    tables: tables.map((t) => {
      const compositeKey = t.columns.filter((c) => c.primaryKey > 0).length > 1;
      return {
        table: label(t.schema, t.name),
        kind: t.kind,
        columns: t.columns.map((c) => [
          c.name,
          c.type || 'ANY',
          c.primaryKey > 0 ? (compositeKey ? `PK ${c.primaryKey}` : 'PK') : '',
          c.notNull ? 'NOT NULL' : '',
          t.foreignKeys
            .filter((k) => k.columns.includes(c.name))
            .map((k) => `${label(k.schema, k.table)}.${k.references[k.columns.indexOf(c.name)]}`)
            .join(' '),
        ]),
      };
    }),
    foreignKeys: tables.flatMap((t) => t.foreignKeys.map((k) => `${label(t.schema, t.name)} (${k.columns.join(', ')}) → ${label(k.schema, k.table)} (${k.references.join(', ')})`)),
  };
}

/**
 * Every row of a result grid, as [class, text] per cell, in order: the grid draws only the rows in
 * view, so this scrolls it from top to bottom a view at a time and keeps each row by its index.
 */
export async function readGridRows(app: Frame): Promise<[string, string][][]> {
  // The page's code as text: this package is Node code, without the DOM's types.
  return app.evaluate(`(async () => {
    const scroller = document.querySelector('.scroll');
    const total = Number(document.querySelector('table.grid').getAttribute('aria-rowcount')) - 1;
    const rows = new Map();
    const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
    for (let top = 0; ; top += Math.max(1, scroller.clientHeight - 40)) {
      scroller.scrollTop = top;
      scroller.dispatchEvent(new Event('scroll'));
      await frame();
      for (const tr of document.querySelectorAll('tbody tr[data-index]')) {
        rows.set(Number(tr.dataset.index), [...tr.children].map((td) => [td.className, td.textContent]));
      }
      if (top >= scroller.scrollHeight) break;
    }
    scroller.scrollTop = 0;
    scroller.dispatchEvent(new Event('scroll'));
    await frame();
    if (rows.size !== total) throw new Error('read ' + rows.size + ' rows of ' + total);
    return [...rows.keys()].sort((a, b) => a - b).map((i) => rows.get(i));
  })()`);
}

/**
 * Scrolls a result grid to its end and reads the first cell of the last rows in view, timed in the
 * page (performance.now(), one frame included) rather than across playwright's round trips.
 */
export async function scrollGridToEnd(app: Frame): Promise<{ ms: number; atEnd: boolean; lastIds: number[] }> {
  return app.evaluate(`(async () => {
    const scroller = document.querySelector('.scroll');
    const start = performance.now();
    scroller.scrollTop = scroller.scrollHeight;
    await new Promise((resolve) => requestAnimationFrame(resolve));
    const box = scroller.getBoundingClientRect();
    const seen = [...document.querySelectorAll('tbody tr[data-index]')].filter((tr) => tr.getBoundingClientRect().top < box.bottom && tr.getBoundingClientRect().bottom > box.top);
    return {
      ms: performance.now() - start,
      atEnd: Math.abs(scroller.scrollTop + scroller.clientHeight - scroller.scrollHeight) < 2,
      lastIds: seen.slice(-3).map((tr) => Number(tr.firstElementChild.textContent)),
    };
  })()`);
}

/**
 * Clicks a grid column's sort button `clicks` times (ascending, then descending), timed in the page
 * with layout included; then scrolls to the top and reads the first cells of the first rows.
 */
export async function sortGrid(app: Frame, column: number, clicks: number): Promise<{ ms: number; firstIds: number[] }> {
  return app.evaluate(`(() => {
    const button = document.querySelectorAll('thead th .sort')[${column}];
    const start = performance.now();
    for (let i = 0; i < ${clicks}; i++) button.click();
    void document.querySelector('table.grid').getBoundingClientRect();
    const ms = performance.now() - start;
    const scroller = document.querySelector('.scroll');
    scroller.scrollTop = 0;
    scroller.dispatchEvent(new Event('scroll'));
    return { ms, firstIds: [...document.querySelectorAll('tbody tr[data-index] td:first-child')].slice(0, 3).map((td) => Number(td.textContent)) };
  })()`);
}

/**
 * The result grid's promise for a large result whose first column counts 1..rows in order: whole
 * within 300 ms of its arrival (all rows in the scroll range, only a window of them in the DOM),
 * scrollable to the last row, sortable in under 300 ms. Returns the times, measured in the page.
 */
export async function expectWholeGrid(app: Frame, rows: number): Promise<{ firstMs: number; bottomMs: number; sortMs: number }> {
  const firstMs = Number(await app.evaluate(`document.body.dataset.firstRenderMs`));
  expect(await app.evaluate(`document.querySelector('table.grid').getAttribute('aria-rowcount')`)).toBe(String(rows + 1));
  expect(await app.evaluate(`document.querySelectorAll('tbody tr[data-index]').length`)).toBeLessThan(100);
  const bottom = await scrollGridToEnd(app);
  expect(bottom.atEnd).toBe(true);
  expect(bottom.lastIds).toEqual([rows - 2, rows - 1, rows]);
  const sort = await sortGrid(app, 0, 2);
  expect(sort.firstIds).toEqual([rows, rows - 1, rows - 2]);
  expect(firstMs).toBeGreaterThan(0);
  expect(firstMs).toBeLessThan(300);
  expect(sort.ms).toBeLessThan(300);
  return { firstMs, bottomMs: bottom.ms, sortMs: sort.ms };
}

/** A schema view whose first page the byte budget cut: read to the end, it holds every table once, in order. */
export async function expectSchemaReadToEnd(schema: { state: { tables: unknown[]; more: boolean; error: string | undefined }; loadMore(): Promise<void> }, expected: unknown[]): Promise<void> {
  expect(schema.state.tables.length).toBeLessThan(expected.length);
  expect(schema.state.more).toBe(true);
  while (schema.state.more) await schema.loadMore();
  expect(schema.state.error).toBeUndefined();
  expect(schema.state.tables).toEqual(expected);
}
