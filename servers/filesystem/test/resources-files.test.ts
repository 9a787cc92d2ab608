import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, realpath, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { protocolError, type ProtocolErrorOutcome } from '@suite/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIST_MAX_DEPTH, LIST_PAGE_SIZE } from '../src/resources/files.js';
import { sleep, startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

const uriOf = (p: string): string => pathToFileURL(p).href;

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a0d2b1f80000000049454e44ae426082', 'hex');

describe('file resources: listing and reading', () => {
  let h: WriteSideHarness;
  const fileCount = LIST_PAGE_SIZE * 2 + 57;
  beforeAll(async () => {
    h = await startWriteSide({ limits: { maxMediaBytes: 4096 } });
    await mkdir(path.join(h.dir, 'many'));
    await Promise.all(Array.from({ length: fileCount }, (_, i) => writeFile(path.join(h.dir, 'many', `f${String(i).padStart(4, '0')}.txt`), `file ${i}`)));
    await writeFile(path.join(h.dir, 'notes.md'), '# Notes\n');
    await writeFile(path.join(h.dir, 'pixel.png'), PNG);
    await writeFile(path.join(h.dir, 'blob.bin'), Buffer.from([0, 1, 2, 3, 254, 255]));
    await writeFile(path.join(h.dir, 'noext'), 'plain text without an extension\n');
    await writeFile(path.join(h.dir, 'big.txt'), 'x'.repeat(5000));
    await mkdir(path.join(h.dir, '.git'));
    await writeFile(path.join(h.dir, '.git', 'HEAD'), 'ref: refs/heads/main\n');
    await mkdir(path.join(h.dir, 'node_modules', 'pkg'), { recursive: true });
    await writeFile(path.join(h.dir, 'node_modules', 'pkg', 'index.js'), '');
    const deep = path.join(h.dir, ...Array.from({ length: LIST_MAX_DEPTH + 1 }, (_, i) => `d${i}`));
    await mkdir(deep, { recursive: true });
    await writeFile(path.join(deep, 'too-deep.txt'), 'deep');
    await writeFile(path.join(h.outside, 'secret.txt'), 'secret');
    await symlink(path.join(h.outside, 'secret.txt'), path.join(h.dir, 'escape-link'));
  });
  afterAll(async () => h.close());

  it('lists every file across pages with an opaque cursor, skipping .git, node_modules, symlinks and deep files', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.session.client.listResources(cursor ? { cursor } : {});
      pages++;
      expect(page.resources.length).toBeLessThanOrEqual(LIST_PAGE_SIZE);
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      if (cursor) expect(cursor).not.toMatch(/^\d+$/);
    } while (cursor && pages < 10);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    const many = seen.filter((uri) => uri.includes('/many/'));
    expect(many.length).toBe(fileCount);
    expect(seen).toContain(uriOf(path.join(h.dir, 'notes.md')));
    expect(seen.some((uri) => uri.includes('/.git/') || uri.includes('/node_modules/'))).toBe(false);
    expect(seen.some((uri) => uri.endsWith('too-deep.txt'))).toBe(false);
    expect(seen.some((uri) => uri.endsWith('escape-link'))).toBe(false);
    // Breadth-first: the files at the top come before those in subdirectories.
    expect(seen.indexOf(uriOf(path.join(h.dir, 'notes.md')))).toBeLessThan(seen.indexOf(uriOf(path.join(h.dir, 'many', 'f0000.txt'))));
  });

  it('describes listed files with name, MIME type and size', async () => {
    const page = await h.session.client.listResources();
    const notes = page.resources.find((r) => r.uri === uriOf(path.join(h.dir, 'notes.md')));
    expect(notes).toMatchObject({ name: 'notes.md', mimeType: 'text/markdown', size: 8 });
    const png = page.resources.find((r) => r.uri === uriOf(path.join(h.dir, 'pixel.png')));
    expect(png).toMatchObject({ name: 'pixel.png', mimeType: 'image/png', size: PNG.length });
  });

  it('refuses a cursor it did not issue', async () => {
    const invalid = await protocolError(h.session.client.listResources({ cursor: 'not-a-cursor' }));
    expect(invalid).toMatchObject({ code: -32602, message: 'Invalid cursor: it was not issued by this server.' });
  });

  it('publishes the file:// template', async () => {
    const { resourceTemplates } = await h.session.client.listResourceTemplates();
    expect(resourceTemplates).toEqual([expect.objectContaining({ uriTemplate: 'file://{+path}', name: 'file' })]);
  });

  it('reads a text file as text with its MIME type', async () => {
    const uri = uriOf(path.join(h.dir, 'notes.md'));
    const { contents, text } = await h.session.readResource(uri);
    expect(contents).toEqual([{ uri, mimeType: 'text/markdown', text: '# Notes\n' }]);
    expect(text).toBe('# Notes\n');
    const plain = uriOf(path.join(h.dir, 'noext'));
    expect((await h.session.readResource(plain)).contents).toEqual([{ uri: plain, mimeType: 'text/plain', text: 'plain text without an extension\n' }]);
  });

  it('reads binary files as base64 blobs', async () => {
    const png = uriOf(path.join(h.dir, 'pixel.png'));
    expect((await h.session.readResource(png)).contents).toEqual([{ uri: png, mimeType: 'image/png', blob: PNG.toString('base64') }]);
    const bin = uriOf(path.join(h.dir, 'blob.bin'));
    expect((await h.session.readResource(bin)).contents).toEqual([
      { uri: bin, mimeType: 'application/octet-stream', blob: Buffer.from([0, 1, 2, 3, 254, 255]).toString('base64') },
    ]);
  });

  it('reads any file under the roots through the template, including ones the listing leaves out', async () => {
    const deep = path.join(h.dir, ...Array.from({ length: LIST_MAX_DEPTH + 1 }, (_, i) => `d${i}`), 'too-deep.txt');
    expect((await h.session.readResource(uriOf(deep))).text).toBe('deep');
    const spaced = path.join(h.dir, 'with space #1.txt');
    await writeFile(spaced, 'spaced');
    expect((await h.session.readResource(uriOf(spaced))).text).toBe('spaced');
  });

  it('answers clear errors: too large, missing, a directory, outside the roots, through an escaping link', async () => {
    const error = (file: string): Promise<ProtocolErrorOutcome> => protocolError(h.session.readResource(uriOf(file)));
    const big = await error(path.join(h.dir, 'big.txt'));
    expect(big).toMatchObject({ code: -32602, data: { kind: 'invalid_argument' } });
    expect(big.message).toContain('5000 bytes');
    expect(big.message).toContain('read_text_file');
    const missing = await error(path.join(h.dir, 'missing.txt'));
    expect(missing).toMatchObject({ code: -32602, data: { kind: 'not_found' } });
    const dir = await error(path.join(h.dir, 'many'));
    expect(dir).toMatchObject({ code: -32602, data: { kind: 'invalid_argument' } });
    expect(dir.message).toContain('is a directory');
    const outside = await error(path.join(h.outside, 'secret.txt'));
    expect(outside).toMatchObject({ code: -32003, data: { kind: 'access_denied' } });
    expect(outside.message).toContain('Access denied');
    const link = await error(path.join(h.dir, 'escape-link'));
    expect(link).toMatchObject({ code: -32003, data: { kind: 'access_denied' } });
    expect(link.message).toContain('Access denied');
    expect(link.message).not.toContain(h.outside);
    const sibling = await error(path.join(h.sibling, 'x.txt'));
    expect(sibling).toMatchObject({ code: -32003, data: { kind: 'access_denied' } });
    expect(sibling.message).toContain('Access denied');
    const fifo = path.join(h.dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const pipe = await error(fifo);
    expect(pipe).toMatchObject({ code: -32602, data: { kind: 'invalid_argument' } });
    expect(pipe.message).toContain('not a regular file');
  });

  it('completes paths under the roots from a typed prefix', async () => {
    const complete = async (value: string): Promise<string[]> => (await h.session.complete({ template: 'file://{+path}' }, 'path', value)).values;
    // node_modules and .git are never offered.
    expect(await complete(`${h.dir}/no`)).toEqual([`${h.dir}/noext`, `${h.dir}/notes.md`]);
    expect(await complete(`${h.dir}/.g`)).toEqual([]);
    expect(await complete(`${h.dir}/man`)).toEqual([`${h.dir}/many/`]);
    const inside = await complete(`${h.dir}/many/f000`);
    expect(inside).toEqual(Array.from({ length: 10 }, (_, i) => `${h.dir}/many/f000${i}.txt`));
    const root = await complete(h.dir.slice(0, -2));
    expect(root).toEqual([`${h.dir}/`]);
    expect(await complete(`${h.outside}/sec`)).toEqual([]);
    const many = await h.session.complete({ template: 'file://{+path}' }, 'path', `${h.dir}/many/f`);
    expect(many.values.length).toBe(100);
    expect(many.hasMore).toBe(true);
  });
});

describe('file resources: subscriptions and list changes', () => {
  let h: WriteSideHarness;
  beforeAll(async () => {
    h = await startWriteSide({ debounceMs: 100 });
  });
  afterAll(async () => h.close());

  it('sends exactly one resources/updated per change of a subscribed file, and none after unsubscribe', async () => {
    const file = path.join(h.dir, 'watched.txt');
    await writeFile(file, 'v1');
    const uri = uriOf(file);
    await h.session.client.subscribeResource({ uri });
    await sleep(200);
    const updated = (): number => h.session.received('notifications/resources/updated').filter((n) => n.params?.uri === uri).length;
    expect(updated()).toBe(0);

    const arrived = h.session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 1000);
    await writeFile(file, 'v2');
    await arrived;
    await sleep(400);
    expect(updated()).toBe(1);

    // A change made through our own atomic write_file (temp file + rename) is one change too.
    const second = h.session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 1000);
    const write = await h.session.callTool('write_file', { path: file, content: 'v3' });
    expect(write.isError).toBe(false);
    await second;
    await sleep(400);
    expect(updated()).toBe(2);

    await h.session.client.unsubscribeResource({ uri });
    await writeFile(file, 'v4');
    await sleep(600);
    expect(updated()).toBe(2);
  });

  it('refuses to subscribe outside the roots or to a missing file', async () => {
    await writeFile(path.join(h.outside, 'secret.txt'), 'secret');
    const outside = await protocolError(h.session.client.subscribeResource({ uri: uriOf(path.join(h.outside, 'secret.txt')) }));
    expect(outside).toMatchObject({ code: -32003, message: expect.stringMatching(/^Access denied/), data: { kind: 'access_denied' } });
    const missing = await protocolError(h.session.client.subscribeResource({ uri: uriOf(path.join(h.dir, 'missing.txt')) }));
    expect(missing).toMatchObject({ code: -32602, message: expect.stringMatching(/^Not found/), data: { kind: 'not_found' } });
  });

  it('sends list_changed when files are added or removed under a root, once the session has listed resources', async () => {
    const session = await h.connect();
    await writeFile(path.join(h.dir, 'before-listing.txt'), 'x');
    await sleep(300);
    expect(session.received('notifications/resources/list_changed')).toEqual([]);
    await session.client.listResources();
    await sleep(500);
    const baseline = session.received('notifications/resources/list_changed').length;

    const added = session.waitFor('notifications/resources/list_changed', () => true, 3000);
    await mkdir(path.join(h.dir, 'sub'), { recursive: true });
    await writeFile(path.join(h.dir, 'sub', 'added.txt'), 'new');
    await added;
    await sleep(400);
    const afterAdd = session.received('notifications/resources/list_changed').length;
    expect(afterAdd).toBeGreaterThan(baseline);

    const removed = session.waitFor('notifications/resources/list_changed', () => true, 3000);
    await unlink(path.join(h.dir, 'sub', 'added.txt'));
    await removed;

    // Changes inside node_modules are not part of the listing and do not count.
    await sleep(400);
    const settled = session.received('notifications/resources/list_changed').length;
    await mkdir(path.join(h.dir, 'node_modules'), { recursive: true });
    await sleep(400);
    const afterModulesDir = session.received('notifications/resources/list_changed').length;
    await writeFile(path.join(h.dir, 'node_modules', 'ignored.js'), '');
    await sleep(600);
    expect(session.received('notifications/resources/list_changed').length).toBe(afterModulesDir);
    expect(afterModulesDir).toBeGreaterThanOrEqual(settled);
    await rm(path.join(h.dir, 'node_modules'), { recursive: true });

    // The watch belongs to the session that listed: every session hears of changes while it lasts,
    // and closing that session releases it.
    expect(h.session.received('notifications/resources/list_changed').length).toBeGreaterThan(0);
    await session.close();
    await sleep(200);
    const other = h.session.received('notifications/resources/list_changed').length;
    await writeFile(path.join(h.dir, 'after-close.txt'), 'x');
    await sleep(600);
    expect(h.session.received('notifications/resources/list_changed').length).toBe(other);
  });
});

describe('file resources: a root that lives under a node_modules directory', () => {
  let h: WriteSideHarness;
  let holder: string;
  let root: string;
  beforeAll(async () => {
    holder = await realpath(await mkdtemp(path.join(os.tmpdir(), 'fs-res-nm-')));
    root = path.join(holder, 'node_modules', 'project');
    await mkdir(root, { recursive: true });
    await writeFile(path.join(root, 'index.js'), 'x');
    h = await startWriteSide({ extraRoots: [root] });
  });
  afterAll(async () => {
    await h.close();
    await rm(holder, { recursive: true, force: true });
  });

  it('is listed and watched like any other root (only node_modules below a root is skipped)', async () => {
    const { resources } = await h.session.client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uriOf(path.join(root, 'index.js')));
    expect(resources.find((r) => r.uri === uriOf(path.join(root, 'index.js')))?.name).toBe('project/index.js');
    await sleep(500);
    const changed = h.session.waitFor('notifications/resources/list_changed', () => true, 3000);
    await writeFile(path.join(root, 'added.js'), 'y');
    await changed;
  });
});
