import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HOSTILE_NAMES, expectedSchemaView, openAppInBrowser, readSchemaView, startAppServer, type AppBrowser, type AppHost } from '@suite/test-kit/apps';
import { buildServer } from '../src/server.js';
import { SCHEMA_TABLES, schemaDatabase } from './schema-fixture.js';

// Screenshots go to docs/ (for the README) with SUITE_UPDATE_SCREENSHOTS=1, otherwise to a temporary directory.
const SHOTS = process.env.SUITE_UPDATE_SCREENSHOTS === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') : path.join(os.tmpdir(), 'suite-sqlite-screenshots');

describe('the schema view in Chromium: a sandboxed frame on a second origin, the default CSP, the real server', () => {
  let db: Awaited<ReturnType<typeof schemaDatabase>> | undefined;
  let host: AppHost | undefined;
  let browser: AppBrowser | undefined;
  afterEach(async () => {
    await browser?.close();
    await host?.close();
    await db?.close();
    browser = host = db = undefined;
  });

  async function open(theme: 'light' | 'dark', tool: string, args: Record<string, unknown>): Promise<ReturnType<AppBrowser['app']>> {
    db = await schemaDatabase();
    const database = db.database;
    host = await startAppServer(() => buildServer({ database }));
    const html = ((await host.client.readResource({ uri: 'ui://sqlite/schema.html' })).contents[0] as { text: string }).text;
    browser = await openAppInBrowser({ html, client: host.client, theme, width: 1000, height: 640 });
    await browser.showToolResult(args, await host.client.callTool({ name: tool, arguments: args }));
    const app = browser.app();
    await app.waitForSelector('body[data-rendered=true]');
    return app;
  }

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: list_tables' view shows every table, column, key and foreign key the database has; hostile names are text and run nothing`, async () => {
      const app = await open(theme, 'list_tables', {});
      expect(await readSchemaView(app)).toEqual(expectedSchemaView(SCHEMA_TABLES));
      expect(await app.$eval('[role=status]', (e) => e.textContent)).toBe('5 tables, 3 foreign keys');
      for (const name of Object.values(HOSTILE_NAMES)) expect(await app.$eval('main', (e) => e.textContent)).toContain(name);
      expect(await app.evaluate(() => ({ img: document.querySelectorAll('img').length, svg: document.querySelectorAll('svg').length, script: document.querySelectorAll('script').length }))).toEqual({ img: 0, svg: 0, script: 1 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await browser!.incidents()).toEqual([]);
      mkdirSync(SHOTS, { recursive: true });
      await browser!.page.screenshot({ path: path.join(SHOTS, `schema-${theme}.png`) });
    });
  }

  it('a reference leads to the table it names, from the keyboard; the filter narrows the tables; describe_table shows its one table', async () => {
    const app = await open('light', 'list_tables', {});
    await app.focus('.card[aria-label=orders] button.ref');
    await browser!.page.keyboard.press('Enter');
    expect(await app.evaluate(() => document.activeElement?.closest('.card')?.getAttribute('aria-label'))).toBe('customers');
    // Arrow keys move between the tables' headings.
    await browser!.page.keyboard.press('ArrowDown');
    expect(await app.evaluate(() => document.activeElement?.closest('.card')?.getAttribute('aria-label'))).toBe('order_items');
    await app.fill('input[type=search]', 'sku');
    expect(await app.$$eval('.card:not([hidden]) h2 .name', (names) => names.map((n) => n.textContent))).toEqual(['order_items']);
    await browser!.showToolResult({ table_name: 'orders' }, await host!.client.callTool({ name: 'describe_table', arguments: { table_name: 'orders' } }));
    await app.waitForFunction(() => document.querySelectorAll('.card').length === 1);
    expect(await readSchemaView(app)).toEqual(expectedSchemaView([SCHEMA_TABLES[4]!]));
  });
});
