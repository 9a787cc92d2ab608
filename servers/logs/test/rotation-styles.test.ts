import { appendFile, copyFile, readFile, readdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { fixture, type Fixture, type Transport } from './helpers.js';

/**
 * The class of "a log rotates several times between two read_new_lines calls", in every rotation
 * style logrotate (and the runtimes like it) use: a seeded run writes numbered lines, rotates one
 * to four times between reads, and reads with answers of random sizes (so that rotated copies are
 * owed across answers). Every line written must come back exactly once, in order; where the
 * rotation removed a copy before it was read, the answer must say so.
 */

type Style = 'rename' | 'copytruncate' | 'dateext-gzip' | 'delaycompress';
const STYLES: readonly Style[] = ['rename', 'copytruncate', 'dateext-gzip', 'delaycompress'];

interface NewLines {
  status: string;
  lines: string[];
  cursor: string;
  more: boolean;
  notes: string[];
}

/** mulberry32: a small seeded generator, so that a failing run can be replayed. */
function seeded(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

async function exists(file: string): Promise<boolean> {
  return readFile(file).then(
    () => true,
    () => false,
  );
}

async function gzipAway(from: string, to: string): Promise<void> {
  await writeFile(to, gzipSync(await readFile(from)));
  await rm(from);
}

/** Rotates a log the way logrotate does in each style, keeping `keep` copies. */
class Rotator {
  private count = 0;
  constructor(
    private readonly log: string,
    private readonly style: Style,
    private readonly keep: number,
  ) {}

  private numbered(n: number, gz: boolean): string {
    return `${this.log}.${n}${gz ? '.gz' : ''}`;
  }

  /** Shifts app.log.N[.gz] to N+1, dropping the one past `keep`. */
  private async shift(from: number, gz: boolean): Promise<void> {
    await rm(this.numbered(this.keep, gz), { force: true });
    for (let n = this.keep - 1; n >= from; n--) if (await exists(this.numbered(n, gz))) await rename(this.numbered(n, gz), this.numbered(n + 1, gz));
  }

  async rotate(): Promise<void> {
    this.count++;
    switch (this.style) {
      case 'rename':
        await this.shift(1, false);
        await rename(this.log, this.numbered(1, false));
        await writeFile(this.log, '');
        return;
      case 'copytruncate':
        await this.shift(1, false);
        await copyFile(this.log, this.numbered(1, false));
        await truncate(this.log, 0);
        return;
      case 'dateext-gzip': {
        // dateformat -%Y%m%d-%s: one copy per rotation, the newest with the largest suffix.
        const dated = `${this.log}-20261201-${1764547200 + this.count}`;
        await rename(this.log, dated);
        await writeFile(this.log, '');
        await gzipAway(dated, `${dated}.gz`);
        const dir = path.dirname(this.log);
        const copies = (await readdir(dir)).filter((n) => n.startsWith(`${path.basename(this.log)}-`)).sort();
        for (const old of copies.slice(0, Math.max(0, copies.length - this.keep))) await rm(path.join(dir, old));
        return;
      }
      case 'delaycompress':
        // app.log.1 stays plain one rotation longer, then becomes app.log.2.gz.
        await this.shift(2, true);
        if (await exists(this.numbered(1, false))) await gzipAway(this.numbered(1, false), this.numbered(2, true));
        await rename(this.log, this.numbered(1, false));
        await writeFile(this.log, '');
        return;
    }
  }
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function call(session: TestSession, log: string, cursor: string | undefined, maxBytes: number): Promise<NewLines> {
  const out = await session.callTool('read_new_lines', { path: log, ...(cursor ? { cursor } : {}), maxBytes });
  expect(out.isError, out.text).toBe(false);
  return out.structured as unknown as NewLines;
}

/** Reads until nothing more is owed; every answer's lines and notes. */
async function drain(session: TestSession, log: string, cursor: string, maxBytes: number): Promise<{ lines: string[]; notes: string[]; cursor: string }> {
  const lines: string[] = [];
  const notes: string[] = [];
  for (let round = 0; round < 200; round++) {
    const r = await call(session, log, cursor, maxBytes);
    lines.push(...r.lines);
    notes.push(...r.notes);
    cursor = r.cursor;
    if (!r.more) return { lines, notes, cursor };
  }
  throw new Error('read_new_lines kept saying there was more');
}

interface Run {
  written: string[];
  got: string[];
  notes: string[];
  rotations: number;
}

async function run(transport: Transport, style: Style, seed: number, reads: number, keep: number): Promise<Run> {
  const rand = seeded(seed);
  fx = await fixture({ transport });
  const log = await fx.write('app.log', 'before the first read\n');
  const session = await fx.connect();
  const rotator = new Rotator(log, style, keep);
  let cursor = (await call(session, log, undefined, 64 * 1024)).cursor;
  const written: string[] = [];
  const got: string[] = [];
  const notes: string[] = [];
  let rotations = 0;
  const write = async (): Promise<void> => {
    // Sometimes nothing: empty rotated copies and cursors at offset 0 are part of the class.
    const count = rand(4) === 0 ? 0 : 1 + rand(60);
    const batch = Array.from({ length: count }, (_, i) => `line ${String(written.length + i + 1).padStart(6, '0')} ${'x'.repeat(rand(40))}`);
    written.push(...batch);
    if (batch.length > 0) await appendFile(log, `${batch.join('\n')}\n`);
  };
  for (let read = 0; read < reads; read++) {
    const times = 1 + rand(4);
    for (let r = 0; r < times; r++) {
      await write();
      await rotator.rotate();
      rotations++;
    }
    await write();
    const answer = await drain(session, log, cursor, 1024 + rand(12 * 1024));
    got.push(...answer.lines);
    notes.push(...answer.notes);
    cursor = answer.cursor;
  }
  return { written, got, notes, rotations };
}

// Over stdio (the built bin), the two styles that exercise the most paths: compressed copies found by content, and copies of a live file.
describe.each([
  ['in-process', 8, STYLES],
  ['stdio', 3, ['copytruncate', 'delaycompress'] as const],
] as const)('read_new_lines through several rotations between two calls (%s)', (transport, reads, styles) => {
  it.each(styles)('%s: every line exactly once, in order', async (style) => {
    const seed = 0x5eed + STYLES.indexOf(style);
    const { written, got, rotations } = await run(transport, style, seed, reads, 8);
    expect(rotations).toBeGreaterThan(reads);
    expect(written.length).toBeGreaterThan(50);
    // Compared as counts first, so that a failure says "lost" or "duplicated" before the diff.
    expect({ lost: written.filter((l) => !got.includes(l)).length, duplicated: got.length - new Set(got).size }).toEqual({ lost: 0, duplicated: 0 });
    expect(got).toEqual(written);
  });
});

describe('read_new_lines when rotation removed copies before they were read (in-process)', () => {
  it.each(STYLES)('%s: the copies left are read whole, nothing is repeated, and the loss is said', async (style) => {
    // Two copies kept, four rotations between reads: the file the cursor was in, and the one after it, are gone.
    const rand = seeded(7 + STYLES.indexOf(style));
    fx = await fixture();
    const log = await fx.write('app.log', '');
    const session = await fx.connect();
    const rotator = new Rotator(log, style, 2);
    let cursor = (await call(session, log, undefined, 64 * 1024)).cursor;
    let n = 0;
    for (let read = 0; read < 3; read++) {
      const batches: string[][] = [];
      for (let r = 0; r < 4; r++) {
        const batch = Array.from({ length: 5 + rand(20) }, () => `entry ${String(++n).padStart(5, '0')}`);
        batches.push(batch);
        await appendFile(log, `${batch.join('\n')}\n`);
        await rotator.rotate();
      }
      const live = `entry ${String(++n).padStart(5, '0')} live`;
      await appendFile(log, `${live}\n`);
      const answer = await drain(session, log, cursor, 64 * 1024);
      cursor = answer.cursor;
      expect(answer.lines).toEqual([...(batches[2] as string[]), ...(batches[3] as string[]), live]);
      expect(answer.notes.join(' ')).toMatch(/may be missing/);
    }
  });
});
