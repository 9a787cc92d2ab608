import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

const lines = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`);

describe('read_text_file', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide({ limits: { maxReadBytes: 4096 } });
    await writeFile(path.join(h.dir, 'ten.txt'), `${lines(1, 10).join('\n')}\n`);
    await writeFile(path.join(h.dir, 'no-final-newline.txt'), 'a\nb\nc');
    await writeFile(path.join(h.dir, 'crlf.txt'), 'one\r\ntwo\r\nthree\r\n');
    await writeFile(path.join(h.dir, 'empty.txt'), '');
    await writeFile(path.join(h.dir, 'unicode.txt'), 'héllo wörld ✓\nsecond 🚀\n');
    await writeFile(path.join(h.dir, 'big.txt'), `${lines(1, 2000).join('\n')}\n`);
    await writeFile(path.join(h.dir, 'binary.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]));
    await writeFile(path.join(h.dir, 'big-binary.bin'), Buffer.alloc(100_000, 0));
  });
  afterAll(async () => h.close());

  it('returns a small file exactly, with structured metadata', async () => {
    const out = await h.session.callTool('read_text_file', { path: path.join(h.dir, 'ten.txt') });
    expect(out.isError).toBe(false);
    expect(out.text).toBe(`${lines(1, 10).join('\n')}\n`);
    expect(out.structured).toMatchObject({ content: out.text, size: out.text.length, truncated: false, startLine: 1, lineCount: 10, totalLines: 10 });
  });

  it('accepts a path relative to the first allowed directory', async () => {
    const out = await h.session.callTool('read_text_file', { path: 'no-final-newline.txt' });
    expect(out.text).toBe('a\nb\nc');
    expect(out.structured).toMatchObject({ lineCount: 3, totalLines: 3 });
  });

  it('reads the first N lines with head and the last N with tail', async () => {
    const head = await h.session.callTool('read_text_file', { path: 'ten.txt', head: 3 });
    expect(head.text).toBe('line 1\nline 2\nline 3');
    const tail = await h.session.callTool('read_text_file', { path: 'ten.txt', tail: 3 });
    expect(tail.text).toBe('line 8\nline 9\nline 10');
    const tailNoNewline = await h.session.callTool('read_text_file', { path: 'no-final-newline.txt', tail: 2 });
    expect(tailNoNewline.text).toBe('b\nc');
    const tailAll = await h.session.callTool('read_text_file', { path: 'ten.txt', tail: 50 });
    expect(tailAll.text).toBe(lines(1, 10).join('\n'));
    expect(tailAll.structured).toMatchObject({ startLine: 1, lineCount: 10 });
  });

  it('normalizes CRLF in line reads and keeps multi-byte characters intact', async () => {
    expect((await h.session.callTool('read_text_file', { path: 'crlf.txt', tail: 2 })).text).toBe('two\nthree');
    expect((await h.session.callTool('read_text_file', { path: 'crlf.txt', head: 2 })).text).toBe('one\ntwo');
    expect((await h.session.callTool('read_text_file', { path: 'unicode.txt', tail: 1 })).text).toBe('second 🚀');
    expect((await h.session.callTool('read_text_file', { path: 'unicode.txt' })).text).toBe('héllo wörld ✓\nsecond 🚀\n');
  });

  it('pages with offset and limit (lines, 1-based)', async () => {
    const out = await h.session.callTool('read_text_file', { path: 'ten.txt', offset: 4, limit: 3 });
    expect(out.text).toBe('line 4\nline 5\nline 6');
    expect(out.structured).toMatchObject({ startLine: 4, lineCount: 3, truncated: false });
    const rest = await h.session.callTool('read_text_file', { path: 'ten.txt', offset: 9 });
    expect(rest.text).toBe('line 9\nline 10');
    expect(rest.structured).toMatchObject({ totalLines: 10 });
    const beyond = await h.session.callTool('read_text_file', { path: 'ten.txt', offset: 50 });
    expect(beyond.isError).toBe(false);
    expect(beyond.text).toBe('');
    expect(beyond.structured).toMatchObject({ lineCount: 0, totalLines: 10 });
  });

  it('cuts at the byte cap with an explicit marker and a way to continue', async () => {
    const out = await h.session.callTool('read_text_file', { path: 'big.txt' });
    expect(out.isError).toBe(false);
    const structured = out.structured as { content: string; truncated: boolean; nextOffset: number; lineCount: number };
    expect(structured.truncated).toBe(true);
    expect(Buffer.byteLength(structured.content)).toBeLessThanOrEqual(4096);
    // Whole lines only: the content ends at a line boundary.
    expect(structured.content.endsWith('\n')).toBe(true);
    expect(structured.content.split('\n').slice(0, -1).at(-1)).toBe(`line ${structured.lineCount}`);
    expect(out.text).toMatch(/\[truncated: \d+ more bytes not shown .*continue with offset=\d+/);
    expect(structured.nextOffset).toBe(structured.lineCount + 1);
    const next = await h.session.callTool('read_text_file', { path: 'big.txt', offset: structured.nextOffset, limit: 2 });
    expect(next.text).toBe(`line ${structured.nextOffset}\nline ${structured.nextOffset + 1}`);
  });

  it('caps head and tail too, keeping whole lines', async () => {
    const head = await h.session.callTool('read_text_file', { path: 'big.txt', head: 1500 });
    expect(head.structured).toMatchObject({ truncated: true, startLine: 1 });
    expect(head.text).toContain('[truncated:');
    const tail = await h.session.callTool('read_text_file', { path: 'big.txt', tail: 1500 });
    const content = (tail.structured as { content: string }).content;
    expect(content.endsWith('line 2000')).toBe(true);
    expect(content.split('\n')[0]).toMatch(/^line \d+$/);
    expect(tail.text).toContain('[truncated: the last 1500 lines exceed');
  });

  it('treats head or tail 0 as not given, like the official server', async () => {
    const out = await h.session.callTool('read_text_file', { path: 'ten.txt', head: 0 });
    expect(out.text).toBe(`${lines(1, 10).join('\n')}\n`);
  });

  it('reads an empty file', async () => {
    const out = await h.session.callTool('read_text_file', { path: 'empty.txt' });
    expect(out.isError).toBe(false);
    expect(out.text).toBe('');
    expect((await h.session.callTool('read_text_file', { path: 'empty.txt', tail: 5 })).text).toBe('');
  });

  it('rejects contradictory arguments with actionable messages', async () => {
    const both = await h.session.callTool('read_text_file', { path: 'ten.txt', head: 1, tail: 1 });
    expect(both.isError).toBe(true);
    expect(both.text).toMatch(/both head and tail/);
    const mixed = await h.session.callTool('read_text_file', { path: 'ten.txt', tail: 1, offset: 2 });
    expect(mixed.isError).toBe(true);
    const negative = await h.session.callTool('read_text_file', { path: 'ten.txt', head: -1 });
    expect(negative.isError).toBe(true);
    expect(negative.text).toMatch(/head/);
  });

  it('refuses directories, missing files and binary files clearly', async () => {
    const dir = await h.session.callTool('read_text_file', { path: h.dir });
    expect(dir.isError).toBe(true);
    expect(dir.text).toMatch(/is a directory/);
    const missing = await h.session.callTool('read_text_file', { path: 'nope.txt' });
    expect(missing.isError).toBe(true);
    expect(missing.text).toBe('Not found: nope.txt');
    const binary = await h.session.callTool('read_text_file', { path: 'binary.bin' });
    expect(binary.isError).toBe(true);
    expect(binary.text).toMatch(/binary.*read_media_file/);
    // Larger than the small-file path, and through head/tail too.
    for (const args of [{}, { head: 3 }, { tail: 3 }, { offset: 1, limit: 2 }]) {
      const big = await h.session.callTool('read_text_file', { path: 'big-binary.bin', ...args });
      expect(big.isError, JSON.stringify(args)).toBe(true);
      expect(big.text).toMatch(/binary.*read_media_file/);
    }
  });

  it('read_file is the same reader (deprecated alias)', async () => {
    const out = await h.session.callTool('read_file', { path: 'ten.txt', tail: 1 });
    expect(out.text).toBe('line 10');
    const { tools } = await h.session.client.listTools();
    const readFile = tools.find((t) => t.name === 'read_file');
    expect(readFile?.description).toMatch(/DEPRECATED.*read_text_file/);
    expect(Object.keys(readFile?.inputSchema.properties ?? {})).toEqual(['path', 'head', 'tail', 'offset', 'limit']);
  });
});

describe('head and tail on a large file', () => {
  let h: ReadSideHarness;
  const file = 'large.log';
  const lineCount = 400_000;
  beforeAll(async () => {
    h = await startReadSide();
    // ~11 MB, written in chunks: big enough that reading it whole would show in the returned sizes.
    const handle = await open(path.join(h.dir, file), 'w');
    const batch = 10_000;
    for (let start = 1; start <= lineCount; start += batch) {
      await handle.write(`${Array.from({ length: batch }, (_, i) => `entry ${String(start + i).padStart(7, '0')} ok`).join('\n')}\n`);
    }
    await handle.close();
  });
  afterAll(async () => h.close());

  it('returns exactly the first and last lines', async () => {
    const head = await h.session.callTool('read_text_file', { path: file, head: 2 });
    expect(head.text).toBe('entry 0000001 ok\nentry 0000002 ok');
    const tail = await h.session.callTool('read_text_file', { path: file, tail: 2 });
    expect(tail.text).toBe(`entry 0${lineCount - 1} ok\nentry 0${lineCount} ok`);
    const middle = await h.session.callTool('read_text_file', { path: file, offset: 250_000, limit: 1 });
    expect(middle.text).toBe('entry 0250000 ok');
  });

  it('a full read is capped instead of returning megabytes', async () => {
    const out = await h.session.callTool('read_text_file', { path: file });
    expect(out.structured).toMatchObject({ truncated: true });
    expect(Buffer.byteLength(out.text)).toBeLessThan(300 * 1024);
    expect(out.text).toMatch(/\[truncated: \d+ more bytes not shown/);
  });
});
