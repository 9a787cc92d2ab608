import { appendFile, copyFile, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
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

  it('finds the rotated file by its content once compressed, and says when it is gone', async () => {
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
    // The compressed copy is found by its content: the line written before the rotation is not lost.
    expect(after).toMatchObject({ status: 'rotated', lines: ['lost', 'fresh'] });
    expect(after.notes.join(' ')).toMatch(/now app\.log\.1\.gz\. 1 line written before the rotation came from the end of app\.log\.1\.gz/);
    // Removed altogether: the answer says lines may be missing.
    await appendFile(log, lines('later'));
    await rename(log, `${log}.2`);
    await writeFile(log, lines('newest'));
    await rm(`${log}.2`);
    const gone = await next(session, log, after.cursor);
    expect(gone).toMatchObject({ status: 'rotated', lines: ['newest'] });
    expect(gone.notes.join(' ')).toMatch(/no rotated copy holds the file the cursor was in .* may be missing/);
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
    expect(regrown.notes.join(' ')).toMatch(/copied to app\.log\.1 and truncated \(copytruncate rotation\) since the last call\. Nothing was written to it after the cursor/);
    // Without a copy, the fingerprint still tells.
    await truncate(log, 0);
    await appendFile(log, lines('another line longer than the one before it, past the cursor again'));
    const again = await next(session, log, regrown.cursor);
    expect(again).toMatchObject({ status: 'truncated', lines: ['another line longer than the one before it, past the cursor again'] });
    expect(again.notes.join(' ')).toMatch(/truncated and has grown again/);
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

/** Numbered lines, so that a lost or repeated one shows. */
function numbered(prefix: string, from: number, count: number): string[] {
  return Array.from({ length: count }, (_, i) => `${prefix} ${String(from + i).padStart(5, '0')} ${'x'.repeat(40)}`);
}

/** Every line until `more` is false (a long backlog comes in pieces). */
async function drain(session: TestSession, path: string, cursor: string, maxBytes?: number): Promise<{ lines: string[]; cursor: string; answers: NewLines[] }> {
  const got: string[] = [];
  const answers: NewLines[] = [];
  for (let round = 0; round < 50; round++) {
    const r = await next(session, path, cursor, maxBytes);
    answers.push(r);
    got.push(...r.lines);
    cursor = r.cursor;
    if (!r.more) break;
  }
  return { lines: got, cursor, answers };
}

describe('read_new_lines when the client did not poll before a rotation (in-process)', () => {
  let shared: Fixture;
  let session: TestSession;
  beforeAll(async () => {
    shared = await fixture();
    session = await shared.connect();
  });
  afterAll(async () => {
    await shared.close();
  });

  it('recovers the lines written before a copytruncate from the plain copy, then follows the new file', async () => {
    const log = await shared.write('plain.log', lines('start'));
    const start = await next(session, log);
    const before = numbered('before', 0, 300);
    const after = numbered('after', 0, 200);
    await appendFile(log, lines(...before));
    await copyFile(log, `${log}.1`);
    await truncate(log, 0);
    await appendFile(log, lines(...after));
    const got = await next(session, log, start.cursor, 256 * 1024);
    expect(got.status).toBe('truncated');
    expect(got.lines).toEqual([...before, ...after]);
    expect(got.notes.join(' ')).toMatch(/copied to plain\.log\.1 and truncated .* 300 lines written before the rotation came from the end of plain\.log\.1/);
    // The copy is not taken again: the next call gives the next append only.
    await appendFile(log, lines('later'));
    expect(await next(session, log, got.cursor)).toMatchObject({ status: 'appended', lines: ['later'] });
  });

  it('recovers them from a compressed copy, over several answers when they do not fit in one, without loss or repetition', async () => {
    const log = await shared.write('gz.log', lines(...numbered('old', 0, 50)));
    const start = await next(session, log);
    const before = numbered('before', 0, 2075);
    const after = numbered('after', 0, 400);
    await appendFile(log, lines(...before));
    // logrotate copytruncate + compress: copy, truncate, compress the copy, remove it.
    await copyFile(log, `${log}.1`);
    await truncate(log, 0);
    await appendFile(log, lines(...after));
    await writeFile(`${log}.1.gz`, gzipSync(await readFile(`${log}.1`)));
    await rm(`${log}.1`);
    const got = await drain(session, log, start.cursor, 32 * 1024);
    expect(got.lines).toEqual([...before, ...after]);
    expect(got.answers.length).toBeGreaterThan(3);
    expect(got.answers[0]?.notes.join(' ')).toMatch(/bytes of gz\.log\.1\.gz did not fit in this answer: call again/);
  });

  it('is not fooled by a copytruncate followed by as many identical lines', async () => {
    const same = Array.from({ length: 1000 }, () => 'the same line, again and again');
    const log = await shared.write('same.log', lines(...same));
    const start = await next(session, log);
    await copyFile(log, `${log}.1`);
    await truncate(log, 0);
    const written = Array.from({ length: 1500 }, () => 'the same line, again and again');
    await appendFile(log, lines(...written));
    const got = await next(session, log, start.cursor, 256 * 1024);
    expect(got.status).toBe('truncated');
    expect(got.lines).toHaveLength(1500);
    expect(got.notes.join(' ')).toMatch(/copied to same\.log\.1 and truncated/);
  });

  it('is not fooled by a truncate-and-rewrite to the same size', async () => {
    const content = lines(...Array.from({ length: 1500 }, () => 'rewritten line'));
    const log = await shared.write('rewrite.log', content);
    const start = await next(session, log);
    // File times have the resolution of a clock tick: let one pass.
    await new Promise((r) => setTimeout(r, 30));
    await truncate(log, 0);
    await appendFile(log, content);
    const got = await next(session, log, start.cursor, 256 * 1024);
    expect(got.status).toBe('truncated');
    expect(got.lines).toHaveLength(1500);
    expect(got.notes.join(' ')).toMatch(/rewritten in place/);
  });

  it('says that lines may be missing when the truncated file left no copy', async () => {
    const log = await shared.write('nocopy.log', lines('a', 'b'));
    const start = await next(session, log);
    await appendFile(log, lines('lost'));
    await truncate(log, 0);
    await appendFile(log, lines('fresh'));
    const got = await next(session, log, start.cursor);
    expect(got).toMatchObject({ status: 'truncated', lines: ['fresh'] });
    expect(got.notes.join(' ')).toMatch(/no rotated copy holds the lines after the cursor: lines written between the last call and the truncation may be missing/);
  });

  it('still accepts a cursor issued before the cursor carried fingerprints of the head, size and times', async () => {
    const log = await shared.write('oldcursor.log', lines('a'));
    const start = await next(session, log);
    const envelope = JSON.parse(Buffer.from(start.cursor, 'base64url').toString('utf8')) as { s: Record<string, unknown> };
    for (const key of ['hd', 'sz', 'mt', 'at']) delete envelope.s[key];
    const old = Buffer.from(JSON.stringify(envelope)).toString('base64url');
    await appendFile(log, lines('b'));
    expect(await next(session, log, old)).toMatchObject({ status: 'appended', lines: ['b'] });
  });
});
