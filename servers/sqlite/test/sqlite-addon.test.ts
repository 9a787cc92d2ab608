import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import Database, { chooseSqliteAddon, sqliteAddonLine } from '../src/sqlite-addon.js';

const LOADER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'sqlite-addon.js');
const run = promisify(execFile);

describe('the better-sqlite3 line', () => {
  it('is 13 where Node-API 10 exists (Node 22.14 and later) and 12 before, where 13 would crash on load', () => {
    expect(chooseSqliteAddon(9)).toEqual({ line: 12, packageName: 'better-sqlite3' });
    expect(chooseSqliteAddon(10)).toEqual({ line: 13, packageName: 'better-sqlite3-13' });
    // The line this Node really loaded: on Node 22 and 24 the optional dependency must have been installed.
    expect(sqliteAddonLine).toBe(Number(process.versions.napi) >= 10 ? 13 : 12);
    const db = new Database(':memory:');
    expect(db.prepare('SELECT 6 * 7 AS answer').get()).toEqual({ answer: 42 });
    db.close();
  });

  it('survives the garbage collector finalizing thousands of statements and connections (better-sqlite3 12 aborts Node 24.21 here)', async () => {
    // The query process's pattern: statements prepared and dropped inside one long synchronous run. On Node 24.21 with
    // better-sqlite3 12 the first scavenge that finalizes one aborts the process ("RemoveEnvironmentCleanupHook:
    // Assertion failed: (env) != nullptr"), within a fraction of a second.
    const script = `
      const { default: Database, sqliteAddonLine } = await import(${JSON.stringify(pathToFileURL(LOADER).href)});
      for (let round = 0; round < 20; round++) {
        const db = new Database(':memory:');
        for (let i = 0; i < 10000; i++) db.prepare('SELECT ' + (i % 5000)).get();
        if (round % 2 === 0) db.close();
      }
      console.log('survived with better-sqlite3 ' + sqliteAddonLine);
    `;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { timeout: 60_000 });
    expect(stdout.trim()).toBe(`survived with better-sqlite3 ${sqliteAddonLine}`);
  }, 90_000);
});
