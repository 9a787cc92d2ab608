import { appendFile, copyFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/shared/testing';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

interface NewLines {
  status: string;
  lines: string[];
  cursor: string;
  more: boolean;
  notes: string[];
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function next(session: TestSession, path: string, cursor?: string, maxBytes?: number): Promise<NewLines> {
  const out = await session.callTool('read_new_lines', { path, ...(cursor ? { cursor } : {}), ...(maxBytes ? { maxBytes } : {}) });
  expect(out.isError, out.text).toBe(false);
  return out.structured as unknown as NewLines;
}

describe.each(TRANSPORTS)('read_new_lines (%s)', (transport) => {
  it('follows appends from the end, holding back a line still being written', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines('old 1', 'old 2'));
    const session = await fx.connect();
    const start = await next(session, log);
    expect(start).toMatchObject({ status: 'started', lines: [] });
    expect((await next(session, log, start.cursor)).status).toBe('unchanged');
    await appendFile(log, 'new 1\nnew 2\npartial');
    const first = await next(session, log, start.cursor);
    expect(first).toMatchObject({ status: 'appended', lines: ['new 1', 'new 2'], more: false });
    await appendFile(log, ' line\n');
    const second = await next(session, log, first.cursor);
    expect(second.lines).toEqual(['partial line']);
    // The same cursor gives the same answer (nothing is consumed on the server).
    expect((await next(session, log, first.cursor)).lines).toEqual(['partial line']);
  });

  it('returns a long backlog in pieces', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', '');
    const session = await fx.connect();
    let cursor = (await next(session, log)).cursor;
    const all = Array.from({ length: 300 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    await appendFile(log, lines(...all));
    const got: string[] = [];
    for (let round = 0; round < 10; round++) {
      const r = await next(session, log, cursor, 1024);
      got.push(...r.lines);
      cursor = r.cursor;
      if (!r.more) break;
    }
    expect(got).toEqual(all);
  });

  it('after a rename-and-recreate rotation, gives the rest of the old file and then the new one', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines('a'));
    const session = await fx.connect();
    const start = await next(session, log);
    await appendFile(log, lines('b before rotation'));
    await rename(log, `${log}.1`);
    await appendFile(`${log}.1`, lines('c written late to the old file'));
    await writeFile(log, lines('d in the new file'));
    const after = await next(session, log, start.cursor);
    expect(after.status).toBe('rotated');
    expect(after.lines).toEqual(['b before rotation', 'c written late to the old file', 'd in the new file']);
    expect(after.notes.join(' ')).toMatch(/rotated: the file the cursor was in is now app\.log\.1/);
    await appendFile(log, lines('e'));
    expect(await next(session, log, after.cursor)).toMatchObject({ status: 'appended', lines: ['e'] });
  });

  it('says when the rotated file is gone (compressed), and reads the new file from its start', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines('a'));
    const session = await fx.connect();
    const start = await next(session, log);
    await appendFile(log, lines('lost'));
    // logrotate with compress: rename, (the path is missing for a moment), create, gzip the old file, remove it.
    await rename(log, `${log}.1`);
    const missing = await next(session, log, start.cursor);
    expect(missing).toMatchObject({ status: 'missing', lines: [], cursor: start.cursor });
    expect(missing.notes.join(' ')).toMatch(/does not exist right now/);
    await writeFile(log, lines('fresh'));
    await writeFile(`${log}.1.gz`, gzipSync('a\nlost\n'));
    await rm(`${log}.1`);
    const after = await next(session, log, start.cursor);
    expect(after).toMatchObject({ status: 'rotated', lines: ['fresh'] });
    expect(after.notes.join(' ')).toMatch(/previous file is gone .* may be missing/);
  });

  it('tells a new file that reused the old inode from a truncation where the filesystem records birth times', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines('a', 'b', 'c'));
    const session = await fx.connect();
    const start = await next(session, log);
    await rm(log);
    await new Promise((r) => setTimeout(r, 20));
    await writeFile(log, lines('new'));
    const after = await next(session, log, start.cursor);
    expect(after.lines).toEqual(['new']);
    // With a birth time the new file is known for what it is; without one it looks like a truncation.
    const recordsBirth = (await stat(log)).birthtimeMs > 0;
    expect(after.status).toBe(recordsBirth ? 'rotated' : 'truncated');
  });

  it('detects copytruncate, also when the file has grown past the cursor again', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines('one', 'two'));
    const session = await fx.connect();
    const start = await next(session, log);
    await copyFile(log, `${log}.1`);
    await truncate(log, 0);
    await appendFile(log, lines('after truncate'));
    const shorter = await next(session, log, start.cursor);
    expect(shorter).toMatchObject({ status: 'truncated', lines: ['after truncate'] });
    // Truncated and then written past the old offset before anyone looked: the fingerprint tells.
    await copyFile(log, `${log}.1`);
    await truncate(log, 0);
    await appendFile(log, lines('a much longer line that goes past where the cursor was'));
    const regrown = await next(session, log, shorter.cursor);
    expect(regrown).toMatchObject({ status: 'truncated', lines: ['a much longer line that goes past where the cursor was'] });
    expect(regrown.notes.join(' ')).toMatch(/truncated and has grown again/);
  });

  it('refuses a cursor it did not issue, and a compressed file, with actionable messages', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines('a'));
    await fx.writeGz('app.log.1.gz', lines('z'));
    const session = await fx.connect();
    const bad = await session.callTool('read_new_lines', { path: log, cursor: 'not-a-cursor' });
    expect(bad).toMatchObject({ isError: true, text: expect.stringMatching(/^Invalid cursor: use the cursor read_new_lines returned last time/) });
    const gz = await session.callTool('read_new_lines', { path: fx.file('app.log.1.gz') });
    expect(gz).toMatchObject({ isError: true, text: expect.stringMatching(/is compressed and does not grow/) });
  });
});
