import { appendFile, rename, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '@suite/test-kit';
import { LogViewerController } from '../app/controller.js';
import { bridgeToApp, startAppServer, type AppHost } from '@suite/test-kit/apps';
import { HostConnection } from '@suite/shared/app-kit/rpc';
import { buildServer } from '../src/server.js';
import { fixture, type Fixture } from './helpers.js';

const HOSTILE = '2026-11-20T10:00:03.000Z ERROR <img src=x onerror=alert(1)></script><script>alert(2)</script>';
const LOG = [
  '2026-11-20T10:00:00.000Z INFO service started',
  '2026-11-20T10:00:01.000Z WARN disk at 91%',
  '2026-11-20T10:00:02.000Z ERROR request failed',
  '    at handler (app.js:10:5)',
  '    at main (app.js:1:1)',
  HOSTILE,
  '2026-11-20T10:07:00.000Z INFO recovered',
  '2026-11-20T10:16:00.000Z DEBUG tick',
].join('\n') + '\n';

describe('the log viewer app against the ext-apps AppBridge and the real server', () => {
  let fx: Fixture | undefined;
  let host: AppHost | undefined;
  afterEach(async () => {
    await host?.close();
    await fx?.close();
    host = fx = undefined;
  });

  async function open(era: 'legacy' | 'modern', name = 'app.log', content = LOG): Promise<{ viewer: LogViewerController; host: AppHost }> {
    fx = await fixture();
    await fx.write(name, content);
    host = await startAppServer(() => buildServer(fx!.config), era);
    const { bridge, port } = await bridgeToApp(host.client);
    const app = new HostConnection(port);
    const viewer = new LogViewerController(app);
    const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
    const context = await app.initialize({ name: 'viewer-test', version: '1' });
    await initialized;
    expect(context.theme).toBe('dark');
    // What a host does after the model called tail_log: the arguments, then the result.
    const args = { path: name, lines: 100 };
    const result = await host.client.callTool({ name: 'tail_log', arguments: args });
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result as never);
    await waitUntil(() => viewer.state.histogram !== undefined || viewer.state.error !== undefined, { what: 'the histogram' });
    return { viewer, host };
  }

  for (const era of ['modern', 'legacy'] as const) {
    it(`${era}: shows the tail with levels and continuation lines, and a histogram equal to log_stats`, async () => {
      const { viewer, host } = await open(era);
      expect(viewer.state.error).toBeUndefined();
      expect(viewer.state.lines.map((l) => l.text)).toEqual(LOG.trimEnd().split('\n'));
      expect(viewer.state.lines.map((l) => [l.level, l.continuation])).toEqual([
        ['info', false], ['warning', false], ['error', false], ['error', true], ['error', true], ['error', false], ['info', false], ['debug', false],
      ]);
      // The hostile line is data: the exact text, nothing else.
      expect(viewer.state.lines[5]!.text).toBe(HOSTILE);
      const stats = (await host.client.callTool({ name: 'log_stats', arguments: { paths: ['app.log'], includeRotated: false, topErrors: 1 } })).structuredContent as { timeline: { start: string; counts: Record<string, number> }[] };
      expect(viewer.state.histogram!.buckets.map((b) => [b.start, b.counts])).toEqual(stats.timeline.map((b) => [b.start, b.counts]));
      expect(viewer.state.histogram!.buckets.reduce((n, b) => n + b.total, 0)).toBe(6);
    });
  }

  it('filters call tail_log again: level and text; an impossible filter is the server\'s own message', async () => {
    const { viewer } = await open('modern');
    await viewer.applyFilters({ level: 'error' });
    expect(viewer.state.lines.map((l) => l.text)).toEqual(LOG.split('\n').slice(2, 6));
    await viewer.applyFilters({ grep: 'recovered' });
    expect(viewer.state.lines.map((l) => l.text)).toEqual(['2026-11-20T10:07:00.000Z INFO recovered']);
    await viewer.applyFilters({ since: 'not a time' });
    expect(viewer.state.error).toMatch(/since/);
  });

  it('live mode follows the log through the app-only tool, across a rotation', async () => {
    const { viewer } = await open('modern');
    await viewer.startFollowing();
    expect(viewer.state.following).toBe(true);
    await appendFile(fx!.file('app.log'), '2026-11-20T10:20:00.000Z ERROR boom\n    at x (y.js:1:1)\n');
    await viewer.poll();
    expect(viewer.state.lines.slice(-2).map((l) => [l.text, l.level, l.continuation])).toEqual([
      ['2026-11-20T10:20:00.000Z ERROR boom', 'error', false],
      ['    at x (y.js:1:1)', 'error', true],
    ]);
    await appendFile(fx!.file('app.log'), '2026-11-20T10:21:00.000Z INFO before rotation\n');
    await rename(fx!.file('app.log'), fx!.file('app.log.1'));
    await writeFile(fx!.file('app.log'), '2026-11-20T10:22:00.000Z INFO after rotation\n');
    await viewer.poll();
    expect(viewer.state.lines.slice(-2).map((l) => l.text)).toEqual(['2026-11-20T10:21:00.000Z INFO before rotation', '2026-11-20T10:22:00.000Z INFO after rotation']);
    expect(viewer.state.notes.join(' ')).toMatch(/rotat/);
  });

  it('shows what search_logs and log_stats gave too: matches with where they are, the histogram and then the tail', async () => {
    fx = await fixture();
    await fx.write('app.log', LOG);
    host = await startAppServer(() => buildServer(fx!.config));
    const { bridge, port } = await bridgeToApp(host.client);
    const app = new HostConnection(port);
    const viewer = new LogViewerController(app);
    await app.initialize({ name: 'viewer-test', version: '1' });
    const search = { pattern: 'ERROR', paths: ['app.log'] };
    await bridge.sendToolInput({ arguments: search });
    await bridge.sendToolResult((await host.client.callTool({ name: 'search_logs', arguments: search })) as never);
    await waitUntil(() => viewer.state.lines.length > 0, { what: 'the matches' });
    expect(viewer.state.lines.map((l) => [l.text, l.level, l.source?.replace(/^.*\//, '')])).toEqual([
      ['2026-11-20T10:00:02.000Z ERROR request failed', 'error', 'app.log:3'],
      [HOSTILE, 'error', 'app.log:6'],
    ]);
    const stats = { paths: ['app.log'] };
    const statsResult = await host.client.callTool({ name: 'log_stats', arguments: stats });
    await bridge.sendToolInput({ arguments: stats });
    await bridge.sendToolResult(statsResult as never);
    await waitUntil(() => viewer.state.path === 'app.log' && viewer.state.lines.length === 8, { what: 'the tail after the statistics' });
    const timeline = (statsResult.structuredContent as { timeline: { start: string; counts: Record<string, number> }[] }).timeline;
    expect(viewer.state.histogram!.buckets.map((b) => [b.start, b.counts])).toEqual(timeline.map((b) => [b.start, b.counts]));
  });

  it('a text-only client does not see the app-only tool, and a client with apps does, with _meta.ui', async () => {
    fx = await fixture();
    host = await startAppServer(() => buildServer(fx!.config));
    const tools = (await host.client.listTools()).tools;
    expect(tools.find((t) => t.name === 'viewer_read_new_lines')?._meta).toMatchObject({ ui: { resourceUri: 'ui://logs/viewer.html', visibility: ['app'] } });
    for (const name of ['tail_log', 'search_logs', 'log_stats']) expect(tools.find((t) => t.name === name)?._meta).toMatchObject({ ui: { resourceUri: 'ui://logs/viewer.html' } });
    const plain = await fx.session();
    expect(await plain.toolNames()).not.toContain('viewer_read_new_lines');
    const { contents } = await host.client.readResource({ uri: 'ui://logs/viewer.html' });
    expect(contents[0]).toMatchObject({ mimeType: 'text/html;profile=mcp-app', _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] } } } });
    expect((contents[0] as { text: string }).text).toMatch(/^<!doctype html>.*Content-Security-Policy/s);
  });
  it('shows the fields of JSON lines as columns, and the format', async () => {
    const json = [
      JSON.stringify({ level: 'info', time: '2026-11-20T10:00:00Z', msg: 'served', service: 'api', status: 200 }),
      JSON.stringify({ level: 'error', time: '2026-11-20T10:00:01Z', msg: 'failed', service: 'billing', status: 503, region: 'eu' }),
    ].join('\n') + '\n';
    const { viewer } = await open('modern', 'app.jsonl', json);
    expect(viewer.state.error).toBeUndefined();
    expect(viewer.state.format).toBe('json');
    // The level, time and message are the line itself; the other fields are columns, in the order they appear.
    expect(viewer.state.columns).toEqual(['service', 'status', 'region']);
    expect(viewer.state.lines.map((l) => [l.level, l.fields])).toEqual([
      ['info', { service: 'api', status: '200' }],
      ['error', { service: 'billing', status: '503', region: 'eu' }],
    ]);
  });
});
