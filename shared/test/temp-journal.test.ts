import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTempDir } from '@suite/test-kit';

// A module of its own per test (its journal is per process, made at its first write, under the
// SUITE_STATE_DIR of that moment): loaded after the test has pointed SUITE_STATE_DIR at its folder.
let temp: typeof import('../src/files/temp-files.js');

let dir: string;
let state: string;
const cleanups: (() => Promise<void>)[] = [];
const savedState = process.env.SUITE_STATE_DIR;
beforeEach(async () => {
  const a = await makeTempDir('temp-journal-');
  const b = await makeTempDir('temp-journal-state-');
  dir = a.dir;
  state = b.dir;
  cleanups.push(a.cleanup, b.cleanup);
  process.env.SUITE_STATE_DIR = state;
  vi.resetModules();
  temp = await import('../src/files/temp-files.js');
});
afterEach(async () => {
  if (savedState === undefined) delete process.env.SUITE_STATE_DIR;
  else process.env.SUITE_STATE_DIR = savedState;
  for (const c of cleanups.splice(0)) await c();
});

const journals = (): string => temp.tempJournalDirectories()[0];
const deadPid = (): number => Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);

async function journal(host: string, pid: number, start: number, lines: string): Promise<string> {
  await mkdir(journals(), { recursive: true });
  const file = path.join(journals(), `${host}-${pid}-${start}.dirs`);
  await writeFile(file, lines);
  return file;
}

describe('the temporary-file journal', () => {
  it('is kept under SUITE_STATE_DIR, one line per directory however many writers ask at once, before the entry exists', async () => {
    const entries = await Promise.all(Array.from({ length: 20 }, () => temp.newTempEntry(dir)));
    await temp.journalTempDirectory(path.join(dir, 'other'));
    const file = path.join(journals(), `${temp.HOST_TAG}-${process.pid}-${temp.PROCESS_START}.dirs`);
    expect(await readFile(file, 'utf8')).toBe(`${JSON.stringify(dir)}\n${JSON.stringify(path.join(dir, 'other'))}\n`);
    // Nothing was created: the caller makes the entry after the journal line is durable.
    expect(entries.every((e) => !existsSync(e.path))).toBe(true);
    for (const e of entries) e.untrack();
    // This process's own journal is never swept.
    expect((await temp.sweepJournaledTempFiles()).journals).toBe(0);
    expect(existsSync(file)).toBe(true);
  });

  it("sweeps a dead writer's directories (a line cut by the crash ignored), and another host's journal only once untouched for two hours", async () => {
    const dead = deadPid();
    const leftover = path.join(dir, `.suite-${dead}-${temp.HOST_TAG}-00001111.tmp`);
    await writeFile(leftover, 'partial');
    const deadJournal = await journal(temp.HOST_TAG, dead, 7, `${JSON.stringify(dir)}\n"${dir}/cut-mid-li`);

    const foreignDir = path.join(dir, 'foreign');
    await mkdir(foreignDir);
    const foreignLeftover = path.join(foreignDir, '.suite-4242-ffffffff-00002222.tmp');
    await writeFile(foreignLeftover, 'partial');
    const threeHoursAgo = new Date(Date.now() - 3 * 60 * 60_000);
    await utimes(foreignLeftover, threeHoursAgo, threeHoursAgo);
    const freshForeign = await journal('ffffffff', 4242, 1, `${JSON.stringify(foreignDir)}\n`);

    const first = await temp.sweepJournaledTempFiles();
    expect(first.removed).toEqual([leftover]);
    expect(first).toMatchObject({ journals: 1, directories: 1 });
    expect(existsSync(deadJournal)).toBe(false);
    expect(existsSync(foreignLeftover)).toBe(true);
    expect(existsSync(freshForeign)).toBe(true);

    await utimes(freshForeign, threeHoursAgo, threeHoursAgo);
    const second = await temp.sweepJournaledTempFiles();
    expect(second.removed).toEqual([foreignLeftover]);
    expect(await readdir(journals())).toEqual([]);
  });

  it("keeps another host's journal while its leftovers are under an hour old, and removes it once they are gone", async () => {
    const young = path.join(dir, '.suite-4242-ffffffff-00003333.tmp');
    await writeFile(young, 'partial');
    const foreign = await journal('ffffffff', 4242, 1, `${JSON.stringify(dir)}\n`);
    const threeHoursAgo = new Date(Date.now() - 3 * 60 * 60_000);
    await utimes(foreign, threeHoursAgo, threeHoursAgo);
    expect((await temp.sweepJournaledTempFiles()).removed).toEqual([]);
    expect(existsSync(foreign) && existsSync(young)).toBe(true);
    expect((await temp.sweepJournaledTempFiles({ now: Date.now() + 2 * 60 * 60_000 })).removed).toEqual([young]);
    expect(existsSync(foreign)).toBe(false);
  });
});
