import { mkdirSync } from 'node:fs';
import { appendFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openAppInBrowser, startAppServer, type AppBrowser, type AppHost } from '@suite/test-kit/apps';
import { buildServer } from '../src/server.js';
import { fixture, type Fixture } from './helpers.js';

// Screenshots go to docs/ (for the README) with SUITE_UPDATE_SCREENSHOTS=1, otherwise to a temporary directory.
const SHOTS = process.env.SUITE_UPDATE_SCREENSHOTS === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') : path.join(os.tmpdir(), 'suite-logs-screenshots');

const HOSTILE = [
  `<img src=x onerror="parent.postMessage('pwned-img','*')">`,
  `</script><script>parent.postMessage('pwned-script','*')</script>`,
  `<svg onload="alert('pwned-svg')"></svg>`,
  `<iframe srcdoc="<script>parent.parent.postMessage('pwned-frame','*')</script>"></iframe>`,
];

/** A morning of a service: info lines, warnings, errors with stack traces, and hostile text in messages and frames. */
function sampleLog(): string {
  const lines: string[] = [];
  const start = Date.parse('2026-11-20T09:00:00.000Z');
  for (let i = 0; i < 240; i++) {
    const t = new Date(start + i * 45_000).toISOString();
    if (i % 37 === 5) {
      lines.push(`${t} ERROR payment failed for order ${1000 + i}: upstream timeout after 3000 ms`, '    at charge (billing.js:88:13)', '    at process (queue.js:41:7)');
    } else if (i % 11 === 3) lines.push(`${t} WARN slow query (${200 + i} ms) on orders`);
    else if (i % 5 === 0) lines.push(`${t} DEBUG cache hit ratio 0.${90 + (i % 9)}`);
    else lines.push(`${t} INFO GET /api/orders/${i} 200 ${10 + (i % 40)} ms`);
  }
  const t = new Date(start + 241 * 45_000).toISOString();
  lines.push(`${t} ERROR user input ${HOSTILE[0]} ${HOSTILE[1]}`, `    at render ${HOSTILE[2]}`, `${t} CRITICAL ${HOSTILE[3]}`);
  return lines.join('\n') + '\n';
}

describe('the log viewer in Chromium: a sandboxed frame on a second origin, the default CSP, the real server', () => {
  let fx: Fixture | undefined;
  let host: AppHost | undefined;
  let browser: AppBrowser | undefined;
  afterEach(async () => {
    await browser?.close();
    await host?.close();
    await fx?.close();
    browser = host = fx = undefined;
  });

  async function open(log: string, theme: 'light' | 'dark', lines: number): Promise<{ tail: { lines: string[] }; app: ReturnType<AppBrowser['app']> }> {
    fx = await fixture();
    await fx.write('app.log', log);
    host = await startAppServer(() => buildServer(fx!.config));
    const html = ((await host.client.readResource({ uri: 'ui://logs/viewer.html' })).contents[0] as { text: string }).text;
    browser = await openAppInBrowser({ html, client: host.client, theme });
    const args = { path: 'app.log', lines };
    const result = await host.client.callTool({ name: 'tail_log', arguments: args });
    await browser.showToolResult(args, result);
    const app = browser.app();
    await app.waitForSelector('.bucket');
    return { tail: result.structuredContent as { lines: string[] }, app };
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: lines equal tail_log's, buckets equal log_stats', hostile lines render as text and run nothing`, async () => {
      const { tail, app } = await open(sampleLog(), theme, 200);
      expect(await app.$$eval('.line', (els) => els.map((e) => e.textContent))).toEqual(tail.lines);
      const stats = (await host!.client.callTool({ name: 'log_stats', arguments: { paths: ['app.log'], includeRotated: false, topErrors: 1 } })).structuredContent as { timeline: { start: string; counts: Record<string, number> }[] };
      const bars = await app.$$eval('.bucket', (els) => els.map((e) => [e.getAttribute('data-start'), JSON.parse(e.getAttribute('data-counts')!)]));
      expect(bars).toEqual(stats.timeline.map((b) => [b.start, b.counts]));
      expect(bars.length).toBeGreaterThan(5);
      // Levels and continuation lines as the server reads them.
      expect(await app.$$eval('.line.lvl-error.cont', (els) => els.length)).toBeGreaterThan(0);
      expect(await app.$eval('html', (e) => e.getAttribute('data-theme'))).toBe(theme);
      // Hostile text: shown exactly, no element made from it, nothing ran.
      const text = await app.$eval('.lines', (e) => e.textContent);
      for (const payload of HOSTILE) expect(text).toContain(payload);
      expect(await app.evaluate(() => ({ img: document.querySelectorAll('img').length, svg: document.querySelectorAll('svg').length, iframe: document.querySelectorAll('iframe').length, script: document.querySelectorAll('script').length }))).toEqual({ img: 0, svg: 0, iframe: 0, script: 1 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await browser!.incidents()).toEqual([]);
      mkdirSync(SHOTS, { recursive: true });
      await browser!.page.screenshot({ path: path.join(SHOTS, `viewer-${theme}.png`) });
    });
  }

  it('the histogram is reachable by keyboard; the filters call tail_log again', async () => {
    const { app } = await open(sampleLog(), 'light', 500);
    // One tab stop for the chart; arrow keys move between its bars.
    await app.focus('.bucket');
    await browser!.page.keyboard.press('ArrowRight');
    expect(await app.evaluate(() => [...document.querySelectorAll('.bucket')].indexOf(document.activeElement!))).toBe(1);
    await app.selectOption('select', 'error');
    await app.fill('input[type=search]', 'payment');
    await app.click('button:text("Filter")');
    const expected = ((await host!.client.callTool({ name: 'tail_log', arguments: { path: 'app.log', lines: 5000, level: 'error', grep: 'payment' } })).structuredContent as { lines: string[] }).lines;
    await app.waitForFunction((n) => document.querySelectorAll('.line').length === n, expected.length, { timeout: 5000 }).catch(async (error: Error) => {
      throw new Error(`${error.message}; the viewer says: ${await app.$eval('[role=status]', (e) => e.textContent)}`);
    });
    expect(await app.$$eval('.line', (els) => els.map((e) => e.textContent))).toEqual(expected);
    expect(expected.every((l) => l.includes('payment') || l.startsWith('    at '))).toBe(true);
  });

  it('renders a 5,000-line tail in under 300 ms', async () => {
    const start = Date.parse('2026-11-20T00:00:00.000Z');
    const log = Array.from({ length: 5000 }, (_, i) => `${new Date(start + i * 1000).toISOString()} ${['INFO', 'WARN', 'ERROR', 'DEBUG'][i % 4]} r${i}`).join('\n') + '\n';
    const { tail, app } = await open(log, 'light', 5000);
    expect(tail.lines).toHaveLength(5000);
    expect(await app.$$eval('.line', (els) => els.length)).toBe(5000);
    const ms = Number(await app.$eval('body', (e) => e.getAttribute('data-first-render-ms')));
    console.log(`log viewer: first render of a 5,000-line tail in ${ms.toFixed(1)} ms`);
    expect(ms).toBeGreaterThan(0);
    expect(ms).toBeLessThan(300);
  });

  it('live mode follows the log as lines are appended and across a rotation (rename and a new file), and stops when asked', async () => {
    const { app } = await open(sampleLog(), 'dark', 50);
    const lastLines = (n: number): Promise<string[]> => app.$$eval('.line', (els, n) => els.slice(-n).map((e) => e.textContent ?? ''), n);
    const until = async (expected: string[], what: string): Promise<void> => {
      await app.waitForFunction((expected) => JSON.stringify([...document.querySelectorAll('.line')].slice(-expected.length).map((e) => e.textContent)) === JSON.stringify(expected), expected, { timeout: 8000 }).catch(async (error: Error) => {
        throw new Error(`${what}: ${error.message}; the last lines are ${JSON.stringify(await lastLines(expected.length))}; the viewer says: ${await app.$eval('[role=status]', (e) => e.textContent)}`);
      });
    };
    // From the keyboard: the Follow button takes Enter.
    await app.focus('button:text("Follow")');
    await browser!.page.keyboard.press('Enter');
    await app.waitForSelector('button[aria-pressed=true]:text("Follow")');

    const appended = ['2026-11-20T12:00:00.000Z ERROR live failure', '    at live (worker.js:9:1)', `2026-11-20T12:00:01.000Z WARN live ${HOSTILE[0]}`];
    await appendFile(fx!.file('app.log'), appended.join('\n') + '\n');
    await until(appended, 'the appended lines');
    expect(await app.$$eval('.line', (els) => els.slice(-3).map((e) => e.className))).toEqual(['line lvl-error', 'line lvl-error cont', 'line lvl-warning']);
    // Followed to the bottom: the newest line is in view.
    expect(await app.$eval('.lines', (e) => e.scrollTop + e.clientHeight >= e.scrollHeight - 4)).toBe(true);

    // Rotation: the last line of the old file, then the new file's.
    await appendFile(fx!.file('app.log'), '2026-11-20T12:01:00.000Z INFO before rotation\n');
    await rename(fx!.file('app.log'), fx!.file('app.log.1'));
    await writeFile(fx!.file('app.log'), '2026-11-20T12:02:00.000Z INFO after rotation\n');
    await until(['2026-11-20T12:01:00.000Z INFO before rotation', '2026-11-20T12:02:00.000Z INFO after rotation'], 'the lines around the rotation');
    expect(await app.$eval('[role=status]', (e) => e.textContent)).toMatch(/rotat/);
    await appendFile(fx!.file('app.log'), '2026-11-20T12:03:00.000Z INFO the new file grows\n');
    await until(['2026-11-20T12:02:00.000Z INFO after rotation', '2026-11-20T12:03:00.000Z INFO the new file grows'], 'a line appended to the new file');

    // Stopped: a line written afterwards stays off the page (the viewer polls every second).
    await app.click('button:text("Follow")');
    await app.waitForSelector('button[aria-pressed=false]:text("Follow")');
    await appendFile(fx!.file('app.log'), '2026-11-20T12:04:00.000Z INFO after stopping\n');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(await lastLines(1)).toEqual(['2026-11-20T12:03:00.000Z INFO the new file grows']);
    expect(await app.evaluate(() => document.querySelectorAll('img').length)).toBe(0);
    expect(await browser!.incidents()).toEqual([]);
  });
});
