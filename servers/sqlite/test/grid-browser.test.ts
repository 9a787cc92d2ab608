import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { expectWholeGrid, openAppInBrowser, readGridRows, startAppServer, type AppBrowser, type AppHost } from '@suite/test-kit/apps';
import { buildServer } from '../src/server.js';
import { HOSTILE, gridDatabase } from './grid-fixture.js';

// Screenshots go to docs/ (for the README) with SUITE_UPDATE_SCREENSHOTS=1, otherwise to a temporary directory.
const SHOTS = process.env.SUITE_UPDATE_SCREENSHOTS === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') : path.join(os.tmpdir(), 'suite-sqlite-screenshots');

type Rows = { columns: string[]; rows: unknown[][] };

/** A host's theme variables (the MCP Apps standard names), unlike the app kit's own fallbacks. */
const HOST_VARIABLES = {
  light: { '--color-background-primary': 'rgb(255, 250, 240)', '--color-background-secondary': 'rgb(238, 232, 213)', '--color-text-primary': 'rgb(40, 30, 20)' },
  dark: { '--color-background-primary': 'rgb(20, 24, 40)', '--color-background-secondary': 'rgb(34, 40, 64)', '--color-text-primary': 'rgb(230, 225, 200)' },
} as const;

describe('the result grid in Chromium: a sandboxed frame on a second origin, the default CSP, the real server', () => {
  let db: Awaited<ReturnType<typeof gridDatabase>> | undefined;
  let host: AppHost | undefined;
  let browser: AppBrowser | undefined;
  afterEach(async () => {
    await browser?.close();
    await host?.close();
    await db?.close();
    browser = host = db = undefined;
  });

  async function open(n: number, args: Record<string, unknown>, theme: 'light' | 'dark', variables?: Record<string, string>, tool = 'read_query'): Promise<{ result: Rows; app: ReturnType<AppBrowser['app']> }> {
    db = await gridDatabase(n);
    const database = db.database;
    host = await startAppServer(() => buildServer({ database }));
    const html = ((await host.client.readResource({ uri: 'ui://sqlite/grid.html' })).contents[0] as { text: string }).text;
    browser = await openAppInBrowser({ html, client: host.client, theme, ...(variables ? { variables } : {}) });
    const result = await host.client.callTool({ name: tool, arguments: args });
    await browser.showToolResult(args, result);
    const app = browser.app();
    await app.waitForSelector('body[data-rendered=true]');
    return { result: result.structuredContent as Rows, app };
  }

  const cells = async (app: ReturnType<AppBrowser['app']>): Promise<string[][]> => (await readGridRows(app)).map((row) => row.map(([kind, text]) => `${kind}:${text}`));

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: rows equal the query's, each cell shown as what it is; hostile cells are text and run nothing`, async () => {
      const query = `SELECT o.id, c.name AS customer, o.total, o.big, o.note, o.meta, o.photo FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.id % 7 = 0 OR o.id % 11 = 0 OR o.id % 13 = 0 OR o.id % 50 = 0 OR o.id > 200 ORDER BY o.id`;
      const { result, app } = await open(200, { query, maxRows: 100 }, theme);
      expect(await app.$$eval('thead th', (ths) => ths.map((th) => th.textContent))).toEqual(result.columns);
      const shown = await cells(app);
      expect(shown).toHaveLength(result.rows.length);
      // Each cell: the value, or how it reads (NULL, a BLOB's size, long text cut).
      shown.forEach((row, r) =>
        row.forEach((cell, c) => {
          const value = result.rows[r]![c] as string | number | null | { $blob: string };
          const [kind, text] = [cell.slice(0, cell.indexOf(':')), cell.slice(cell.indexOf(':') + 1)];
          if (value === null) expect([kind, text]).toEqual(['null', 'NULL']);
          else if (typeof value === 'object') expect(kind).toBe('blob');
          else if (typeof value === 'number') expect([kind, text]).toEqual(['number', String(value)]);
          else if (kind === 'long' || (kind === 'json' && text.endsWith('…'))) expect(value.startsWith(text.slice(0, -1).split('\n')[0]!)).toBe(true);
          else expect(text).toBe(value);
        }),
      );
      expect(new Set(shown.flat().map((c) => c.slice(0, c.indexOf(':'))))).toEqual(new Set(['number', 'text', 'null', 'blob', 'json', 'long']));
      const text = shown.flat().join('\n');
      for (const payload of HOSTILE.slice(0, 3)) expect(text).toContain(payload);
      expect(await app.evaluate(() => ({ img: document.querySelectorAll('img').length, svg: document.querySelectorAll('svg').length, iframe: document.querySelectorAll('iframe').length, script: document.querySelectorAll('script').length }))).toEqual({ img: 0, svg: 0, iframe: 0, script: 1 });
      expect(shown.at(-1)![4]).toEqual(`json:${HOSTILE[3]}`);
      // Long text opens in place, whole, by click or Enter.
      const long = result.rows.find((row) => typeof row[4] === 'string' && row[4].length > 120)![4];
      await app.click('td.long >> nth=0');
      expect(await app.$eval('td.long.open', (e) => e.textContent)).toBe(long);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await browser!.incidents()).toEqual([]);
      mkdirSync(SHOTS, { recursive: true });
      await browser!.page.screenshot({ path: path.join(SHOTS, `grid-${theme}.png`) });
    });
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: the page takes the host's theme variables (hostContext.styles.variables) over its own colours`, async () => {
      const { app } = await open(3, { query: 'SELECT id, total FROM orders ORDER BY id' }, theme, HOST_VARIABLES[theme]);
      expect(await app.evaluate(() => document.documentElement.dataset.theme)).toBe(theme);
      // The page's background and text and the header's background are the host's values, not the app kit's fallbacks.
      expect(await app.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color, getComputedStyle(document.querySelector('thead th')!).backgroundColor])).toEqual([
        HOST_VARIABLES[theme]['--color-background-primary'],
        HOST_VARIABLES[theme]['--color-text-primary'],
        HOST_VARIABLES[theme]['--color-background-secondary'],
      ]);
    });
  }

  it('a plan shows as a tree, with the index each step uses: explain_query, and EXPLAIN QUERY PLAN through read_query', async () => {
    const query = 'SELECT c.name, o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.total > 5 ORDER BY o.total';
    const { app } = await open(50, { query }, 'dark', undefined, 'explain_query');
    const labels = async (): Promise<string[]> => app.$$eval('[role=treeitem] > .step .label', (els) => els.map((e) => e.textContent ?? ''));
    const shown = await labels();
    expect(shown).toEqual(expect.arrayContaining(['SCAN o', 'SEARCH c USING INTEGER PRIMARY KEY (rowid=?)', 'USE TEMP B-TREE FOR ORDER BY']));
    expect(await app.$eval('.scroll:not(.plan)', (e) => (e as HTMLElement).hidden)).toBe(true);
    const args = { query: `EXPLAIN QUERY PLAN ${query}` };
    await browser!.showToolResult(args, await host!.client.callTool({ name: 'read_query', arguments: args }));
    await app.waitForFunction(() => document.querySelectorAll('[role=treeitem]').length > 0 && document.querySelector('.k-note')?.textContent === 'Query plan');
    expect(await labels()).toEqual(shown);
    expect(await browser!.incidents()).toEqual([]);
  });

  it('sorts by a column, resizes one from the keyboard, and loads more rows through grid_read_page', async () => {
    const { app } = await open(1200, { query: 'SELECT id, total, note FROM orders ORDER BY id' }, 'light');
    expect(await app.$eval('table.grid', (t) => t.getAttribute('aria-rowcount'))).toBe('501');
    await app.click('text=Load more rows');
    await app.waitForFunction(() => document.querySelector('table.grid')!.getAttribute('aria-rowcount') === '1001');
    const all = ((await host!.client.callTool({ name: 'read_query', arguments: { query: 'SELECT id, total, note FROM orders ORDER BY id', maxRows: 1000 } })).structuredContent as Rows).rows;
    expect((await readGridRows(app)).map((row) => Number(row[0]![1]))).toEqual(all.map((r) => r[0]));
    await app.click('thead th >> nth=1 >> button');
    await app.click('thead th >> nth=1 >> button');
    expect(await app.$eval('thead th >> nth=1', (th) => th.getAttribute('aria-sort'))).toBe('descending');
    const totals = (await readGridRows(app)).map((row) => Number(row[1]![1]));
    expect(totals).toHaveLength(1000);
    expect(totals).toEqual([...totals].sort((a, b) => b - a));
    // The rows scroll from the keyboard: End brings the last row into the DOM.
    await app.focus('.scroll');
    await browser!.page.keyboard.press('End');
    await app.waitForSelector('tbody tr[data-index="999"]');
    const before = await app.$eval('thead th >> nth=2', (th) => th.getBoundingClientRect().width);
    await app.focus('thead th >> nth=2 >> .resize');
    await browser!.page.keyboard.press('ArrowRight');
    expect(await app.$eval('thead th >> nth=2', (th) => th.getBoundingClientRect().width)).toBeGreaterThan(before + 10);
  });

  it('a 10,000-row result is whole within 300 ms of its arrival: scrollable to the last row, sortable in under 300 ms, only the rows in view in the DOM', async () => {
    const { result, app } = await open(10_000, { query: 'SELECT id, customer_id, total, big FROM orders WHERE id <= 10000 ORDER BY id', maxRows: 10_000 }, 'light');
    expect(result.rows).toHaveLength(10_000);
    // Timed in the page (performance.now()), not across playwright's round trips.
    const { firstMs, bottomMs, sortMs } = await expectWholeGrid(app, 10_000);
    console.log(`result grid: 10,000 rows whole and scrollable ${firstMs.toFixed(1)} ms after the result, to the last row in ${bottomMs.toFixed(1)} ms, sorted twice in ${sortMs.toFixed(1)} ms`);
  });
});
