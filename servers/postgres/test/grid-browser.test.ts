import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { expectWholeGrid, openAppInBrowser, readGridRows, scrollGridToEnd, sortGrid, startAppServer, type AppBrowser, type AppHost } from '@suite/test-kit/apps';
import { buildServer } from '../src/server.js';
import { HOSTILE, gridDatabase } from './grid-fixture.js';

// Screenshots go to docs/ (for the README) with SUITE_UPDATE_SCREENSHOTS=1, otherwise to a temporary directory.
const SHOTS = process.env.SUITE_UPDATE_SCREENSHOTS === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') : path.join(os.tmpdir(), 'suite-postgres-screenshots');

type Rows = { columns: { name: string; type: string }[]; rows: unknown[][] };

describe('the result grid in Chromium (PostgreSQL): a sandboxed frame on a second origin, the default CSP, the real server', () => {
  let fx: Awaited<ReturnType<typeof gridDatabase>> | undefined;
  let host: AppHost | undefined;
  let browser: AppBrowser | undefined;
  afterEach(async () => {
    await browser?.close();
    await host?.close();
    await fx?.close();
    browser = host = fx = undefined;
  });

  async function open(n: number, maxRows: number, sql: string, theme: 'light' | 'dark', tool = 'query'): Promise<{ result: Rows; app: ReturnType<AppBrowser['app']> }> {
    fx = await gridDatabase(n, maxRows);
    const config = fx.config;
    host = await startAppServer(() => buildServer(config));
    const html = ((await host.client.readResource({ uri: 'ui://postgres/grid.html' })).contents[0] as { text: string }).text;
    browser = await openAppInBrowser({ html, client: host.client, theme });
    const args = { sql };
    const result = await host.client.callTool({ name: tool, arguments: args });
    await browser.showToolResult(args, result);
    const app = browser.app();
    await app.waitForSelector('body[data-rendered=true]');
    return { result: result.structuredContent as Rows, app };
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: rows equal the query's, typed cells shown as what they are; hostile cells are text and run nothing`, async () => {
      const sql = 'SELECT id, total, big, paid, tags, meta, photo, at, note FROM orders WHERE id % 7 = 0 OR id % 11 = 0 OR id % 13 = 0 OR id % 50 = 0 OR id > 200 ORDER BY id';
      const { result, app } = await open(200, 1000, sql, theme);
      expect(await app.$$eval('thead th', (ths) => ths.map((th) => th.textContent))).toEqual(result.columns.map((c) => c.name));
      const shown = await readGridRows(app);
      expect(shown).toHaveLength(result.rows.length);
      expect(shown.map((row) => Number(row[0]![1]))).toEqual(result.rows.map((r) => r[0]));
      shown.forEach((row, r) =>
        row.forEach(([kind, text], c) => {
          const value = result.rows[r]![c];
          if (value === null) expect([kind, text]).toEqual(['null', 'NULL']);
          else if (result.columns[c]!.type === 'bytea') expect(kind).toBe('blob');
          else if (typeof value === 'object') expect([kind, text]).toEqual(['json', JSON.stringify(value)]);
          else if (typeof value === 'boolean') expect([kind, text]).toEqual(['bool', String(value)]);
          else if (kind !== 'long') expect(text).toBe(String(value));
        }),
      );
      const text = shown.flat(2).join('\n');
      for (const payload of HOSTILE) expect(text).toContain(payload);
      expect(await app.evaluate(() => ({ img: document.querySelectorAll('img').length, svg: document.querySelectorAll('svg').length, script: document.querySelectorAll('script').length }))).toEqual({ img: 0, svg: 0, script: 1 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await browser!.incidents()).toEqual([]);
      mkdirSync(SHOTS, { recursive: true });
      await browser!.page.screenshot({ path: path.join(SHOTS, `grid-${theme}.png`) });
    });
  }

  it('a plan shows as a tree, with the index each step uses: explain_query, and EXPLAIN (FORMAT JSON) through query', async () => {
    const sql = 'SELECT o.id FROM orders o ORDER BY o.id DESC LIMIT 1';
    const { app } = await open(200, 1000, sql, 'light', 'explain_query');
    const tree = async (): Promise<{ labels: string[]; levels: string[]; indexes: string[]; tableShown: boolean }> =>
      app.evaluate(() => ({
        labels: [...document.querySelectorAll('[role=treeitem] > .step .label')].map((e) => e.textContent ?? ''),
        levels: [...document.querySelectorAll('[role=treeitem]')].map((e) => e.getAttribute('aria-level') ?? ''),
        indexes: [...document.querySelectorAll('[role=treeitem] > .step .index')].map((e) => e.textContent ?? ''),
        tableShown: !(document.querySelector('.scroll:not(.plan)') as HTMLElement).hidden,
      }));
    const shown = await tree();
    expect(shown.labels[0]).toBe('Limit');
    expect(shown.labels[1]).toMatch(/^Index (Only )?Scan( Backward)? using orders_pkey on orders o$/);
    expect(shown.levels).toEqual(['1', '2']);
    expect(shown.indexes).toEqual(['orders_pkey']);
    expect(shown.tableShown).toBe(false);
    // A click folds a step's children away, and unfolds them again.
    await app.click('[role=treeitem][aria-level="1"] > .step');
    expect(await app.getAttribute('[role=treeitem][aria-level="1"]', 'aria-expanded')).toBe('false');
    // The same plan as a query's single JSON cell.
    const args = { sql: `EXPLAIN (FORMAT JSON) ${sql}` };
    await browser!.showToolResult(args, await host!.client.callTool({ name: 'query', arguments: args }));
    await app.waitForFunction(() => document.querySelector('[role=treeitem][aria-level="1"]')?.getAttribute('aria-expanded') === 'true');
    expect((await tree()).labels).toEqual(shown.labels);
    expect(await browser!.incidents()).toEqual([]);
  });

  it('a 10,000-row result is whole within 300 ms of its arrival (scrollable to the last row, sortable), and more rows load through grid_read_page', async () => {
    const { result, app } = await open(10_000, 10_000, 'SELECT id, total, paid, at FROM orders ORDER BY id', 'light');
    expect(result.rows).toHaveLength(10_000);
    // Timed in the page (performance.now()), not across playwright's round trips.
    const { firstMs, bottomMs, sortMs } = await expectWholeGrid(app, 10_000);
    console.log(`postgres result grid: 10,000 rows whole and scrollable ${firstMs.toFixed(1)} ms after the result, to the last row in ${bottomMs.toFixed(1)} ms, sorted twice in ${sortMs.toFixed(1)} ms`);
    // Back in id order, then the rows past the cap.
    await sortGrid(app, 0, 1);
    expect(await app.isVisible('text=Load more rows')).toBe(true);
    await app.click('text=Load more rows');
    await app.waitForFunction(() => document.querySelector('table.grid')!.getAttribute('aria-rowcount') === String(10_000 + 3 + 1));
    expect((await scrollGridToEnd(app)).lastIds).toEqual([10_001, 10_002, 10_003]);
  });
});
