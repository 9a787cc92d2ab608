import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openAppInBrowser, startAppServer, type AppBrowser, type AppHost } from '@suite/test-kit/apps';
import { buildServer } from '../src/server.js';
import { Workspace } from '../src/workspace.js';
import { HOSTILE, HOSTILE_NAME, diffRepo, gitStagedDiff, hunkLines, largeDiffRepo } from './diff-fixture.js';
import { DEFAULT_BUDGET } from '../src/config.js';
import { config, git } from './helpers.js';

// Screenshots go to docs/ (for the README) with SUITE_UPDATE_SCREENSHOTS=1, otherwise to a temporary directory.
const SHOTS = process.env.SUITE_UPDATE_SCREENSHOTS === '1' ? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs') : path.join(os.tmpdir(), 'suite-git-screenshots');

describe('the diff viewer in Chromium: a sandboxed frame on a second origin, the default CSP, the real server', () => {
  let repo: ReturnType<typeof diffRepo> | undefined;
  let host: AppHost | undefined;
  let browser: AppBrowser | undefined;
  afterEach(async () => {
    await browser?.close();
    await host?.close();
    repo?.cleanup();
    browser = host = repo = undefined;
  });

  for (const theme of ['light', 'dark'] as const) {
    it(`${theme}: files and lines equal git's, unified and side by side; hostile lines and names are text and run nothing`, async () => {
      repo = diffRepo();
      const workspace = new Workspace(config([repo.dir]));
      host = await startAppServer(() => buildServer(workspace));
      const html = ((await host.client.readResource({ uri: 'ui://git-prompts/diff.html' })).contents[0] as { text: string }).text;
      browser = await openAppInBrowser({ html, client: host.client, theme, width: 1000, height: 640 });
      const args = { repo_path: repo.dir };
      await browser.showToolResult(args, await host.client.callTool({ name: 'git_diff_staged', arguments: args }));
      const app = browser.app();
      await app.waitForSelector('body[data-rendered=true]');
      const plain = gitStagedDiff(repo.dir);
      const listed = await app.$$eval('button.file', (bs) => bs.map((b) => b.getAttribute('data-path')));
      expect(new Set(listed)).toEqual(new Set(['src/app.ts', 'src/new.ts', 'docs/gone.md', 'src/new-name.ts', 'logo.png', 'big.txt', HOSTILE_NAME]));
      for (const file of ['src/app.ts', 'src/new-name.ts', 'docs/gone.md', HOSTILE_NAME]) {
        const shown = await app.$$eval(`section[aria-label="${file.replace(/"/g, '\\"')}"] .line`, (ls) => ls.map((l) => `${l.querySelector('.sign')!.textContent}${l.querySelector('.text')!.textContent}`));
        expect(shown, file).toEqual(hunkLines(plain, file));
      }
      expect(await app.$eval('button.file[data-path="src/new-name.ts"] .path', (e) => e.textContent)).toBe('src/old-name.ts → src/new-name.ts');
      const body = await app.$eval('main', (e) => e.textContent);
      expect(body).toMatch(/Binary file: /);
      expect(body).toMatch(/more lines of the diff of big.txt left out/);
      for (const payload of HOSTILE) expect(body).toContain(payload);
      expect(await app.evaluate(() => ({ img: document.querySelectorAll('img').length, svg: document.querySelectorAll('svg').length, script: document.querySelectorAll('script').length }))).toEqual({ img: 0, svg: 0, script: 1 });
      await app.click('text=Side by side');
      await app.waitForSelector('body[data-rendered=true]');
      const deleted = hunkLines(plain, 'src/app.ts').filter((l) => l.startsWith('-')).map((l) => l.slice(1));
      expect(await app.$$eval('section[aria-label="src/app.ts"] .half.kd .text', (ts) => ts.map((t) => t.textContent))).toEqual(deleted);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await browser.incidents()).toEqual([]);
      await app.click('text=Unified');
      await app.waitForSelector('body[data-rendered=true]');
      mkdirSync(SHOTS, { recursive: true });
      await browser.page.screenshot({ path: path.join(SHOTS, `diff-${theme}.png`) });
    });
  }

  // A budget that holds the whole diff (2,000 files, about 1.2 MB of text), and the default one that cuts it.
  for (const [what, budget] of [['whole', { ...DEFAULT_BUDGET, totalBytes: 8 * 1024 * 1024 }], ['cut to the default budget', DEFAULT_BUDGET]] as const) {
    it(`a 2,000-file diff (${what}) is shown in under 300 ms; the last file's lines equal git's`, async () => {
      repo = largeDiffRepo(2000);
      const workspace = new Workspace(config([repo.dir], { budget }));
      host = await startAppServer(() => buildServer(workspace));
      const html = ((await host.client.readResource({ uri: 'ui://git-prompts/diff.html' })).contents[0] as { text: string }).text;
      browser = await openAppInBrowser({ html, client: host.client, theme: 'light', width: 1000, height: 640 });
      const args = { repo_path: repo.dir };
      await browser.showToolResult(args, await host.client.callTool({ name: 'git_diff_staged', arguments: args }));
      const app = browser.app();
      await app.waitForFunction(() => document.body.dataset.firstRenderMs !== undefined);
      await app.waitForSelector('body[data-rendered=true]');
      const ms = Number(await app.$eval('body', (e) => e.getAttribute('data-first-render-ms')));
      const listed = await app.$$eval('button.file', (bs) => bs.map((b) => b.getAttribute('data-path')!));
      if (what === 'whole') expect(listed).toHaveLength(2000);
      else {
        // As the text answer: the files within the budget, and a note of the rest.
        const note = (await app.$eval('.notes', (e) => e.textContent))!.match(/Left out of this diff \((\d+) files changed; (\d+) shown above\)/);
        expect(note?.slice(1).map(Number)).toEqual([2000, listed.length]);
        expect(listed.length).toBeGreaterThan(10);
      }
      // The last file shown, opened from the list: its lines equal git's.
      const last = listed.at(-1)!;
      if (what === 'whole') expect(last).toBe('src/m19/f1999.ts');
      await app.click(`button.file[data-path="${last}"]`);
      const shown = await app.$$eval(`section[aria-label="${last}"] .line`, (ls) => ls.map((l) => `${l.querySelector('.sign')!.textContent}${l.querySelector('.text')!.textContent}`));
      expect(shown).toEqual(hunkLines(git(repo.dir, ['-c', 'core.quotePath=false', 'diff', '--cached', '--no-color', '--no-ext-diff', '-M', '--', last]), last));
      const lines = await app.$$eval('.line', (ls) => ls.length);
      const all = Number(await app.$eval('body', (e) => e.getAttribute('data-all-rendered-ms')));
      console.log(`diff viewer: 2,000 files (${what}, ${lines} lines), first render in ${ms.toFixed(1)} ms, the whole list and diff on the page in ${all.toFixed(1)} ms`);
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThan(300);
    });
  }
});
