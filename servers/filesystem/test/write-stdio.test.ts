import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, spawnServer, type SpawnedSession } from '@suite/test-kit';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

describe('stdio smoke test of the write side and resources (dist/index.js)', () => {
  let base: string;
  let dir: string;
  let cleanup: () => Promise<void>;
  let session: SpawnedSession;

  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing (npx -y pnpm@10 --filter @suite/server-filesystem build).`);
    ({ dir: base, cleanup } = await makeTempDir('fs-write-stdio-'));
    dir = path.join(base, 'root');
    await mkdir(dir);
    await writeFile(path.join(base, 'outside.txt'), 'outside');
    session = await spawnServer(bin, [dir], { env: { SUITE_LOG_LEVEL: 'emergency' } });
  }, 30_000);
  afterAll(async () => {
    await session?.close();
    await cleanup?.();
  });

  it('writes, edits, copies, moves and deletes over stdio', async () => {
    const file = path.join(dir, 'a.txt');
    expect((await session.callTool('write_file', { path: file, content: 'one\ntwo\n' })).isError).toBe(false);
    const edit = await session.callTool('edit_file', { path: file, edits: [{ oldText: 'two', newText: 'TWO' }] });
    expect(edit.isError).toBe(false);
    expect(edit.text).toContain('-two\n+TWO');
    expect(await readFile(file, 'utf8')).toBe('one\nTWO\n');
    expect((await session.callTool('create_directory', { path: path.join(dir, 'x', 'y') })).isError).toBe(false);
    expect((await session.callTool('copy_file', { source: file, destination: path.join(dir, 'x', 'y', 'b.txt') })).isError).toBe(false);
    expect((await session.callTool('move_file', { source: path.join(dir, 'x', 'y', 'b.txt'), destination: path.join(dir, 'c.txt') })).isError).toBe(false);
    expect(await readFile(path.join(dir, 'c.txt'), 'utf8')).toBe('one\nTWO\n');
    expect((await session.callTool('move_file', { source: file, destination: path.join(dir, 'c.txt') })).isError).toBe(true);
    expect((await session.callTool('delete_file', { path: path.join(dir, 'x'), recursive: true })).isError).toBe(false);
  });

  it('refuses a write through a symlink out of the root, without crashing', async () => {
    await symlink(path.join(base, 'outside.txt'), path.join(dir, 'escape'));
    const out = await session.callTool('write_file', { path: path.join(dir, 'escape'), content: 'pwned' });
    expect(out.isError).toBe(true);
    expect(out.text).toContain('Access denied');
    expect(await readFile(path.join(base, 'outside.txt'), 'utf8')).toBe('outside');
    expect((await session.callTool('write_file', { path: 'C:\\x', content: 'x' })).isError).toBe(true);
  });

  it('lists, reads and subscribes to file resources', async () => {
    const file = path.join(dir, 'res.md');
    await writeFile(file, '# hi\n');
    const uri = pathToFileURL(file).href;
    const { resources } = await session.client.listResources();
    expect(resources.map((r) => r.uri)).toContain(uri);
    expect((await session.client.readResource({ uri })).contents).toEqual([{ uri, mimeType: 'text/markdown', text: '# hi\n' }]);
    await session.client.subscribeResource({ uri });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const updated = session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 5000);
    await writeFile(file, '# changed\n');
    await updated;
    await session.client.unsubscribeResource({ uri });
  });
});
