import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { HOSTILE_NAMES, expectedSchemaView, openAppInBrowser, readSchemaView, startAppServer, type AppBrowser, type AppHost } from '@suite/test-kit/apps';
import { buildServer } from '../src/server.js';
import { SCHEMA_TABLES, schemaDatabase } from './schema-fixture.js';

// Screenshots go to docs/ (for the README) with SUITE_UPDATE_SCREENSHOTS=1, otherwise to a temporary directory.
const SHOTS = process.env.SUITE_UPDATE_SCREENSHOTS === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') : path.join(os.tmpdir(), 'suite-postgres-screenshots');

describe('the schema view in Chromium (PostgreSQL): a sandboxed frame on a second origin, the default CSP, the real server', () => {
  let fx: Awaited<ReturnType<typeof schemaDatabase>> | undefined;
  let host: AppHost | undefined;
  let browser: AppBrowser | undefined;
  afterEach(async () => {
    await browser?.close();
    await host?.close();
    await fx?.close();
    browser = host = fx = undefined;
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: list_tables' view shows every table, column, key and foreign key the database has; hostile names are text and run nothing`, async () => {
      fx = await schemaDatabase();
      const config = fx.config;
      host = await startAppServer(() => buildServer(config));
      const html = ((await host.client.readResource({ uri: 'ui://postgres/schema.html' })).contents[0] as { text: string }).text;
      browser = await openAppInBrowser({ html, client: host.client, theme, width: 1000, height: 640 });
      await browser.showToolResult({}, await host.client.callTool({ name: 'list_tables', arguments: {} }));
      const app = browser.app();
      await app.waitForSelector('body[data-rendered=true]');
      expect(await readSchemaView(app)).toEqual(expectedSchemaView(SCHEMA_TABLES));
      expect(await app.$eval('[role=status]', (e) => e.textContent)).toBe('6 tables, 4 foreign keys');
      for (const name of Object.values(HOSTILE_NAMES)) expect(await app.$eval('main', (e) => e.textContent)).toContain(name);
      expect(await app.evaluate(() => ({ img: document.querySelectorAll('img').length, svg: document.querySelectorAll('svg').length, script: document.querySelectorAll('script').length }))).toEqual({ img: 0, svg: 0, script: 1 });
      // A reference across schemas leads to its table.
      await app.click('.card[aria-label="audit.events"] button.ref');
      expect(await app.evaluate(() => document.activeElement?.closest('.card')?.getAttribute('aria-label'))).toBe('public.orders');
      await app.evaluate(() => window.scrollTo(0, 0));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await browser.incidents()).toEqual([]);
      mkdirSync(SHOTS, { recursive: true });
      await browser.page.screenshot({ path: path.join(SHOTS, `schema-${theme}.png`) });
    });
  }
});
