import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ChangeHub } from '@suite/shared';
import { connectInProcess } from '@suite/test-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../src/config.js';
import { buildServer } from '../src/server.js';
import { startWriteSide, type WriteSideHarness } from './write-side-fixture.js';

describe('write tools and resources follow the effective roots (client roots narrow the command line)', () => {
  let h: WriteSideHarness;
  let narrowed: string;
  beforeAll(async () => {
    h = await startWriteSide();
    narrowed = path.join(h.dir, 'project');
    await mkdir(narrowed);
    await writeFile(path.join(narrowed, 'in.txt'), 'in');
    await writeFile(path.join(h.dir, 'beside.txt'), 'beside');
  });
  afterAll(async () => h.close());

  it('writes only inside the client root, and lists and reads only its files', async () => {
    const session = await h.connect({ roots: [narrowed] });
    const inside = await session.callTool('write_file', { path: path.join(narrowed, 'new.txt'), content: 'ok' });
    expect(inside.isError).toBe(false);
    const beside = await session.callTool('write_file', { path: path.join(h.dir, 'beside.txt'), content: 'pwned' });
    expect(beside.isError).toBe(true);
    expect(beside.text).toContain('Access denied');
    expect(await readFile(path.join(h.dir, 'beside.txt'), 'utf8')).toBe('beside');
    const del = await session.callTool('delete_file', { path: narrowed, recursive: true });
    expect(del.isError).toBe(true);
    expect(del.text).toContain('never deleted');
    const uris = (await session.client.listResources()).resources.map((r) => r.uri);
    expect(uris.sort()).toEqual([pathToFileURL(path.join(narrowed, 'in.txt')).href, pathToFileURL(path.join(narrowed, 'new.txt')).href]);
    await expect(session.client.readResource({ uri: pathToFileURL(path.join(h.dir, 'beside.txt')).href })).rejects.toThrow(/Access denied/);
  });

  it('with client roots that overlap none of the command-line directories, says the roots leave none (not to start the server with some)', async () => {
    const session = await h.connect({ roots: ['/usr'] }); // a real directory that overlaps none of the server's
    const listed = await session.callTool('list_allowed_directories', {});
    expect(listed.text).toMatch(/^Allowed directories: none\.\nNo directory is allowed: the client's roots leave none of the server's directories/);
    expect((listed.structured as { source: string }).source).toBe('command-line narrowed by client');
    const write = await session.callTool('write_file', { path: path.join(h.dir, 'x.txt'), content: 'x' });
    expect(write.isError).toBe(true);
    expect(write.text).toMatch(/the client's roots leave none of the server's directories/);
    expect(write.text).not.toMatch(/Start the server with/);
  });

  it('with no allowed directory at all, lists no resources and explains how to allow one on writes', async () => {
    const changes = new ChangeHub();
    const server = buildServer({ directories: [], aliases: [], readOnly: false, limits: DEFAULT_LIMITS }, { changes });
    const session = await connectInProcess(server);
    try {
      expect((await session.client.listResources()).resources).toEqual([]);
      const out = await session.callTool('write_file', { path: '/tmp/anything.txt', content: 'x' });
      expect(out.isError).toBe(true);
      expect(out.text).toContain('No directory is allowed');
    } finally {
      await session.close();
      await changes.close();
    }
  });
});
