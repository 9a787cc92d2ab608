import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { RESOURCE_MIME_TYPE, EXTENSION_ID } from '@modelcontextprotocol/ext-apps/server';
import { APP_MIME_TYPE, APPS_EXTENSION_ID, Logger, SuiteServer, appResource, serveHttp, type RunningHttp, type ToolSelection } from '../src/index.js';
import { APP_SIZE_LIMIT, buildApp } from '../src/apps/build.js';

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const UI = 'ui://probe/viewer.html';
const APPS_CAPS = { extensions: { [APPS_EXTENSION_ID]: { mimeTypes: [APP_MIME_TYPE] } } };

/** A server with an app: a tool the model sees, an app-only read and an app-only write, and the HTML. */
function appServer(pkgDir: string, selection?: ToolSelection): SuiteServer {
  const server = new SuiteServer({
    name: '@suite/server-apps-probe',
    version: '0.0.1',
    toolsets: [{ name: 'view', description: 'Viewing', default: true }, { name: 'other', description: 'Off by default' }],
    ...(selection ? { selection } : {}),
  });
  server.tool({
    name: 'show',
    toolset: 'view',
    description: 'Shows a thing.',
    input: z.object({}),
    annotations: { title: 'Show', ...readOnly },
    app: { resourceUri: UI },
    handler: async () => 'shown as text',
  });
  server.tool({
    name: 'app_page',
    toolset: 'view',
    description: 'The next page, for the viewer.',
    input: z.object({ page: z.number().int().min(0).max(10) }),
    annotations: { title: 'Page', ...readOnly },
    app: { resourceUri: UI, visibility: ['app'] },
    handler: async ({ page }) => `page ${page}`,
  });
  server.tool({
    name: 'app_write',
    toolset: 'view',
    description: 'Changes a thing, for the viewer.',
    input: z.object({}),
    annotations: { title: 'Write', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    app: { resourceUri: UI, visibility: ['app'] },
    handler: async () => 'written',
  });
  server.tool({
    name: 'app_other',
    toolset: 'other',
    description: 'An app-only tool of a toolset that is off.',
    input: z.object({}),
    annotations: { title: 'Other', ...readOnly },
    app: { resourceUri: UI, visibility: ['app'] },
    handler: async () => 'other',
  });
  server.resource(appResource({ uri: UI, name: 'viewer', title: 'Viewer', from: pathToFileURL(path.join(pkgDir, 'src', 'x.js')).href, file: 'viewer.html' }));
  return server;
}

describe('MCP Apps in both protocol eras', () => {
  let pkg: string;
  let http: RunningHttp | undefined;
  const clients: Client[] = [];

  beforeAll(() => {
    pkg = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'apps-')));
    writeFileSync(path.join(pkg, 'package.json'), '{}');
    mkdirSync(path.join(pkg, 'dist', 'apps'), { recursive: true });
    writeFileSync(path.join(pkg, 'dist', 'apps', 'viewer.html'), '<!doctype html><p>viewer</p>');
    return () => rmSync(pkg, { recursive: true, force: true });
  });
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => undefined);
    await http?.close();
    http = undefined;
  });

  async function connect(era: 'legacy' | 'modern', capabilities: Record<string, unknown>, selection?: ToolSelection): Promise<Client> {
    http ??= await serveHttp(() => appServer(pkg, selection), { port: 0, host: '127.0.0.1', log: new Logger('apps') });
    const client = new Client({ name: 'apps-test', version: '0' }, { capabilities, versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    expect(client.getProtocolEra()).toBe(era);
    return client;
  }

  it('uses the extension\'s own names', () => {
    expect(APP_MIME_TYPE).toBe(RESOURCE_MIME_TYPE);
    expect(APPS_EXTENSION_ID).toBe(EXTENSION_ID);
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`${era}: a client with apps lists the app-only tools, _meta.ui on each, and calls them`, async () => {
      const client = await connect(era, APPS_CAPS);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['app_page', 'app_write', 'show']);
      expect(tools.find((t) => t.name === 'show')?._meta).toEqual({ ui: { resourceUri: UI }, 'ui/resourceUri': UI });
      expect(tools.find((t) => t.name === 'app_page')?._meta).toEqual({ ui: { resourceUri: UI, visibility: ['app'] }, 'ui/resourceUri': UI });
      expect((await client.callTool({ name: 'app_page', arguments: { page: 2 } })).content).toEqual([{ type: 'text', text: 'page 2' }]);
      // The same argument checks as any tool: an isError result the app can show.
      const bad = await client.callTool({ name: 'app_page', arguments: { page: 99 } });
      expect(bad.isError).toBe(true);
      expect(JSON.stringify(bad.content)).toContain('Invalid arguments for app_page: page');
    });

    it(`${era}: a text-only client sees no app-only tool, and calling one is an unknown tool; _meta.ui stays on the others`, async () => {
      const client = await connect(era, {});
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['show']);
      expect(tools[0]?._meta).toMatchObject({ ui: { resourceUri: UI } });
      await expect(client.callTool({ name: 'app_page', arguments: { page: 1 } })).rejects.toThrow(/Unknown tool: app_page/);
      expect((await client.callTool({ name: 'show', arguments: {} })).content).toEqual([{ type: 'text', text: 'shown as text' }]);
      // Its resource list is unchanged too; the UI resource can still be read by its URI.
      expect((await client.listResources()).resources.map((r) => r.uri)).not.toContain(UI);
      expect((await client.readResource({ uri: UI })).contents[0]).toMatchObject({ mimeType: APP_MIME_TYPE });
    });

    it(`${era}: read-only mode and toolsets gate app-only tools like every other`, async () => {
      const client = await connect(era, APPS_CAPS, { readOnly: true });
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual(['app_page', 'show']);
      await expect(client.callTool({ name: 'app_write', arguments: {} })).rejects.toThrow(/Unknown tool: app_write/);
      await expect(client.callTool({ name: 'app_other', arguments: {} })).rejects.toThrow(/Unknown tool: app_other/);
    });

    it(`${era}: the UI resource is listed and read with the MCP Apps MIME type and a CSP of no origin`, async () => {
      const client = await connect(era, APPS_CAPS);
      const listed = (await client.listResources()).resources.find((r) => r.uri === UI);
      const csp = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };
      expect(listed).toMatchObject({ mimeType: RESOURCE_MIME_TYPE, _meta: { ui: { csp } } });
      const { contents } = await client.readResource({ uri: UI });
      expect(contents).toEqual([{ uri: UI, mimeType: RESOURCE_MIME_TYPE, text: '<!doctype html><p>viewer</p>', _meta: { ui: { csp, prefersBorder: true } } }]);
    });
  }

  it('an app that was not built: reading it says how to build it', async () => {
    const empty = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'apps-unbuilt-')));
    writeFileSync(path.join(empty, 'package.json'), '{}');
    try {
      http = await serveHttp(() => appServer(empty), { port: 0, host: '127.0.0.1', log: new Logger('apps') });
      const client = await connect('modern', APPS_CAPS);
      await expect(client.readResource({ uri: UI })).rejects.toThrow(/not built: run the package's build/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

describe('buildApp: one self-contained HTML file', () => {
  it('inlines script and style, admits only them by hash, and stays within the size budget', async () => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'apps-build-')));
    try {
      writeFileSync(path.join(dir, 'entry.ts'), "const s: string = '</script><img src=x onerror=alert(1)>';\ndocument.body.append(s);\n");
      writeFileSync(path.join(dir, 'a.css'), 'body { color: red }\n');
      const out = path.join(dir, 'out', 'app.html');
      const built = await buildApp({ entry: path.join(dir, 'entry.ts'), styles: [path.join(dir, 'a.css'), path.join(import.meta.dirname, '../app-kit/base.css')], outFile: out, title: 'A <b> app' });
      const html = readFileSync(out, 'utf8');
      expect(built.bytes).toBe(Buffer.byteLength(html));
      expect(built.bytes).toBeLessThan(APP_SIZE_LIMIT.bytes);
      expect(built.gzipBytes).toBe(gzipSync(html, { level: 9 }).length);
      const script = /<script>([\s\S]*)<\/script>/.exec(html)![1]!;
      const style = /<style>([\s\S]*)<\/style>/.exec(html)![1]!;
      expect(html.match(/<script/g)).toHaveLength(1);
      expect(script).not.toMatch(/<\/script/i);
      const hash = (t: string): string => `sha256-${createHash('sha256').update(t).digest('base64')}`;
      const csp = /Content-Security-Policy" content="([^"]*)"/.exec(html)![1];
      expect(csp).toBe(`default-src 'none'; script-src '${hash(script)}'; style-src '${hash(style)}'; img-src data:; base-uri 'none'; form-action 'none'`);
      expect(html).toContain('<title>A &#60;b&#62; app</title>');
      // Nothing fetched: no external script, style sheet or other linked asset.
      expect(html).not.toMatch(/<script[^>]+src=|<link\b/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses an app over the budget', async () => {
    const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'apps-build-')));
    try {
      const big = Array.from({ length: 40_000 }, (_, i) => `${i.toString(36)}${createHash('md5').update(String(i)).digest('hex')}`).join(',');
      writeFileSync(path.join(dir, 'entry.ts'), `document.body.append(${JSON.stringify(big)});\n`);
      await expect(buildApp({ entry: path.join(dir, 'entry.ts'), styles: [], outFile: path.join(dir, 'app.html'), title: 'big' })).rejects.toThrow(/over the budget of 153600/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
