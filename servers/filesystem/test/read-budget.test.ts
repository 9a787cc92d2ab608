import { existsSync } from 'node:fs';
import { open, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer } from '@suite/test-kit';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const GiB = 1024 * 1024 * 1024;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await fn();
  return { value, ms: performance.now() - started };
}

describe('reads of a 10 GB sparse file', () => {
  let h: ReadSideHarness;
  let sparse: string;
  let textHead: string;
  beforeAll(async () => {
    h = await startReadSide();
    // Sparse: 10 GB of zeros that take no disk.
    sparse = path.join(h.dir, 'sparse.img');
    await writeFile(sparse, '');
    await truncate(sparse, 10 * GiB);
    // 100 KiB of text lines, then zeros to 10 GB: the first chunks look like text.
    textHead = path.join(h.dir, 'text-then-zeros.log');
    await writeFile(textHead, 'a line of a log file that is plain text\n'.repeat(2600));
    await truncate(textHead, 10 * GiB);
    expect((await stat(sparse)).blocks).toBe(0);
  });
  afterAll(async () => h.close());

  it('refuses every kind of text read at once as binary, instead of scanning 10 GB and answering empty content', async () => {
    const reads: Record<string, unknown>[] = [{ offset: 5 }, { offset: 5, limit: 10 }, { head: 3 }, { tail: 3 }, { limit: 2 }, {}];
    for (const args of reads) {
      const { value: out, ms } = await timed(() => h.session.callTool('read_text_file', { path: sparse, ...args }));
      expect(out.isError, JSON.stringify(args)).toBe(true);
      expect(out.text).toBe(`${sparse} looks like a binary file (it contains NUL bytes). Use read_media_file to get it as base64.`);
      expect(ms, JSON.stringify(args)).toBeLessThan(1000);
    }
    const multi = await h.session.callTool('read_multiple_files', { paths: [sparse] });
    expect(multi.structured?.files).toEqual([{ path: sparse, ok: false, error: expect.stringContaining('looks like a binary file') }]);
  }, 30_000);

  it('refuses it when the text stops and the zeros begin, past the lines it skips, or at the end for a tail', async () => {
    const early = await h.session.callTool('read_text_file', { path: textHead, offset: 10, limit: 5 });
    expect(early.isError).toBe(false);
    expect(early.structured).toMatchObject({ startLine: 10, lineCount: 5 });
    for (const args of [{ offset: 1_000_000 }, { offset: 2599, limit: 100_000 }, { tail: 5 }]) {
      const { value: out, ms } = await timed(() => h.session.callTool('read_text_file', { path: textHead, ...args }));
      expect(out.isError, JSON.stringify(args)).toBe(true);
      expect(out.text).toContain('looks like a binary file');
      expect(ms).toBeLessThan(1000);
    }
  }, 30_000);

  it('skips it in search_content even when maxFileBytes lets it in', async () => {
    const { value: out, ms } = await timed(() => h.session.callTool('search_content', { path: h.dir, pattern: 'needle', maxFileBytes: 20 * GiB }));
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ skippedBinary: 2, matches: [] });
    expect(ms).toBeLessThan(1000);
  }, 30_000);

  it('over stdio of the built bin: an offset read of the sparse file answers at once with the binary error', async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing.`);
    const session = await spawnServer(bin, [h.dir]);
    try {
      const { value: out, ms } = await timed(() => session.callTool('read_text_file', { path: sparse, offset: 5 }));
      expect(out.isError).toBe(true);
      expect(out.text).toContain('looks like a binary file');
      expect(ms).toBeLessThan(1000);
    } finally {
      await session.close();
    }
  }, 30_000);
});

describe('the time budget of a read or search call', () => {
  let h: ReadSideHarness;
  let big: string;
  beforeAll(async () => {
    h = await startReadSide({ limits: { readTimeoutMs: 1 } });
    // 48 MiB of text: scanning it for an offset takes far longer than the 1 ms budget.
    big = path.join(h.dir, 'big.txt');
    const handle = await open(big, 'w');
    const block = Buffer.from(`${'x'.repeat(99)}\n`.repeat(10_486));
    for (let i = 0; i < 48; i++) await handle.write(block);
    await handle.close();
  });
  afterAll(async () => h.close());

  it('stops an offset read that would scan too far, with a timeout that says why and what to use instead', async () => {
    const out = await h.session.callTool('read_text_file', { path: big, offset: 10_000_000 });
    expect(out.isError).toBe(true);
    expect(out.text).toBe(
      `Reading ${big} up to line 10000000 was stopped after 1 ms (the time limit of one call, --read-timeout): reaching a line means reading the file from its start. ` +
        'For the end of a huge file use tail; to find a line use search_content.',
    );
    // What fits in the budget still works.
    const head = await h.session.callTool('read_text_file', { path: big, head: 2 });
    expect(head.isError).toBe(false);
    expect(head.structured).toMatchObject({ lineCount: 2 });
  });

  it('stops search_content, saying how far it got', async () => {
    const out = await h.session.callTool('search_content', { path: h.dir, pattern: 'needle', maxFileBytes: GiB });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^search_content was stopped after 1 ms \(the time limit of one call, --read-timeout\), having searched \d+ files; the 0 matches found so far follow\./);
  });
});
