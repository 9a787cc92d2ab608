import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReadSide, type ReadSideHarness } from './read-side-fixture.js';

// A 1x1 transparent PNG.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');

describe('read_media_file', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide({ limits: { maxMediaBytes: 1024 } });
    await writeFile(path.join(h.dir, 'pixel.png'), PNG);
    await writeFile(path.join(h.dir, 'sound.mp3'), Buffer.from([0xff, 0xfb, 0x90, 0x00, 1, 2, 3]));
    await writeFile(path.join(h.dir, 'data.bin'), Buffer.from([0, 1, 2, 3, 4]));
    await writeFile(path.join(h.dir, 'huge.png'), Buffer.alloc(2048, 7));
  });
  afterAll(async () => h.close());

  it('returns an image block with the MIME type and the exact bytes', async () => {
    const out = await h.session.callTool('read_media_file', { path: 'pixel.png' });
    expect(out.isError).toBe(false);
    expect(out.content).toEqual([{ type: 'image', mimeType: 'image/png', data: PNG.toString('base64') }]);
    expect(out.structured).toEqual({ path: 'pixel.png', mimeType: 'image/png', size: PNG.length, kind: 'image' });
  });

  it('returns audio as audio and anything else as an embedded blob resource', async () => {
    const audio = await h.session.callTool('read_media_file', { path: 'sound.mp3' });
    expect(audio.content[0]).toMatchObject({ type: 'audio', mimeType: 'audio/mpeg' });
    const other = await h.session.callTool('read_media_file', { path: 'data.bin' });
    expect(other.content[0]).toMatchObject({
      type: 'resource',
      resource: { uri: `file://${path.join(h.dir, 'data.bin')}`, mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 2, 3, 4]).toString('base64') },
    });
    expect(other.structured).toMatchObject({ kind: 'resource' });
  });

  it('refuses files over the media limit with the sizes in the message', async () => {
    const out = await h.session.callTool('read_media_file', { path: 'huge.png' });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/huge\.png is 2\.00 KB, over the 1\.00 KB limit/);
  });
});

describe('read_multiple_files', () => {
  let h: ReadSideHarness;
  beforeAll(async () => {
    h = await startReadSide({ limits: { maxReadBytes: 1000 } });
    await writeFile(path.join(h.dir, 'a.txt'), 'alpha\n');
    await writeFile(path.join(h.dir, 'b.txt'), 'beta\n');
    await writeFile(path.join(h.dir, 'long.txt'), `${'x'.repeat(99)}\n`.repeat(30));
    await writeFile(path.join(h.outside, 'secret.txt'), 'secret\n');
  });
  afterAll(async () => h.close());

  it('reads every file and reports per-file errors without failing the call', async () => {
    const out = await h.session.callTool('read_multiple_files', {
      paths: ['a.txt', 'missing.txt', path.join(h.outside, 'secret.txt'), 'b.txt'],
    });
    expect(out.isError).toBe(false);
    expect(out.text).toContain('a.txt:\nalpha\n');
    expect(out.text).toContain('b.txt:\nbeta\n');
    expect(out.text).toContain('missing.txt: Error - Not found: missing.txt');
    expect(out.text).toMatch(/secret\.txt: Error - Access denied/);
    expect(out.text).not.toContain('secret\n');
    expect(out.text.split('\n---\n')).toHaveLength(4);
    const structured = out.structured as { files: { path: string; ok: boolean; content?: string; error?: string }[]; succeeded: number; failed: number };
    expect(structured.succeeded).toBe(2);
    expect(structured.failed).toBe(2);
    expect(structured.files.map((f) => f.ok)).toEqual([true, false, false, true]);
    expect(structured.files[0]).toMatchObject({ path: 'a.txt', content: 'alpha\n', truncated: false });
  });

  it('caps each file and the whole answer', async () => {
    const out = await h.session.callTool('read_multiple_files', { paths: ['long.txt', 'long.txt', 'long.txt', 'long.txt', 'long.txt', 'a.txt'] });
    const structured = out.structured as { files: { ok: boolean; truncated?: boolean; error?: string; content?: string }[] };
    expect(structured.files[0]?.truncated).toBe(true);
    expect(out.text).toContain('[truncated:');
    const returned = structured.files.reduce((n, f) => n + Buffer.byteLength(f.content ?? ''), 0);
    expect(returned).toBeLessThanOrEqual(4000);
    expect(structured.files.some((f) => !f.ok && /combined size limit/.test(f.error ?? ''))).toBe(true);
  });

  it('requires at least one path', async () => {
    const out = await h.session.callTool('read_multiple_files', { paths: [] });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/At least one file path/);
  });
});
