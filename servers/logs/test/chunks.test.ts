import { closeSync, openSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainSource, type LineChunk } from '../src/chunks.js';

/**
 * plainSource gives a file in chunks of whole lines whatever the length of the partial line each
 * read continues (reads land at the file position's offset modulo 64, so that partial line moves
 * around in the buffer): the chunks put together are the file, each ends on a newline but the
 * last, each says where it starts, and a range read with aligned reads cuts where a scan from the
 * start cuts.
 */

let dir: string;
let file: string;
let text: Buffer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'logs-chunks-'));
  file = path.join(dir, 'mixed.log');
  // Lines of every length from 0 to 300 bytes (so the partial line at a read's end takes every
  // length modulo 64), a line longer than a chunk, multi-byte characters, no newline at the end.
  const lines: string[] = [];
  for (let i = 0; i < 3000; i++) lines.push(`${i} ${'é·x'.repeat((i * 37) % 100)}`.slice(0, (i * 7919) % 301));
  lines.splice(1500, 0, 'long '.repeat(3000));
  text = Buffer.from(`${lines.join('\n')}\ntail without newline`);
  writeFileSync(file, text);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function chunksOf(options: Parameters<typeof plainSource>[1]): Promise<LineChunk[]> {
  const fd = openSync(file, 'r');
  try {
    const out: LineChunk[] = [];
    // The bytes are valid only until the next chunk: copy them.
    for await (const chunk of plainSource(fd, options).lineChunks()) out.push({ bytes: Buffer.from(chunk.bytes), offset: chunk.offset });
    return out;
  } finally {
    closeSync(fd);
  }
}

function expectWholeLines(chunks: LineChunk[], start: number, end: number): void {
  expect(Buffer.concat(chunks.map((c) => c.bytes)).equals(text.subarray(start, end))).toBe(true);
  let offset = start;
  for (const [i, chunk] of chunks.entries()) {
    expect(chunk.offset).toBe(offset);
    if (i < chunks.length - 1) expect(chunk.bytes[chunk.bytes.length - 1]).toBe(0x0a);
    offset += chunk.bytes.length;
  }
}

describe('plainSource', () => {
  for (const sync of [true, false]) {
    for (const chunkBytes of [1000, 4096, 4099, 65536]) {
      it(`gives the file in chunks of whole lines (${sync ? 'sync' : 'async'}, ${chunkBytes}-byte reads)`, async () => {
        expectWholeLines(await chunksOf({ sync, chunkBytes }), 0, text.length);
      });
    }
  }

  it('cuts a part that starts at a cut of the scan from the start where that scan cuts it', async () => {
    const chunkBytes = 4096;
    const whole = await chunksOf({ sync: true, chunkBytes });
    const from = whole[7] as LineChunk;
    const to = whole[20] as LineChunk;
    const part = await chunksOf({ sync: true, chunkBytes, start: from.offset, end: to.offset, alignReads: true });
    expectWholeLines(part, from.offset, to.offset);
    expect(part.map((c) => c.offset)).toEqual(whole.slice(7, 20).map((c) => c.offset));
  });
});
