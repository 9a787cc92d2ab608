import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, spawnServer, type SpawnedSession } from '@suite/test-kit';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

describe('stdio smoke test of the built bin (dist/index.js)', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let session: SpawnedSession;
  let readOnly: SpawnedSession;

  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing (npx -y pnpm@10 --filter @suite/server-filesystem build).`);
    ({ dir, cleanup } = await makeTempDir('fs-stdio-'));
    await mkdir(path.join(dir, 'src'));
    await writeFile(path.join(dir, 'src', 'main.ts'), 'export const answer = 42;\n');
    await writeFile(path.join(dir, 'log.txt'), Array.from({ length: 100 }, (_, i) => `row ${i + 1}`).join('\n'));
    const env = { SUITE_LOG_LEVEL: 'emergency' };
    session = await spawnServer(bin, [dir], { env });
    readOnly = await spawnServer(bin, ['--read-only', dir], { env });
  }, 30_000);
  afterAll(async () => {
    await session?.close();
    await readOnly?.close();
    await cleanup?.();
  });

  it('serves the tools over stdio', async () => {
    const names = (await session.client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['read_text_file', 'search_content', 'directory_tree', 'write_file']));
    expect((await session.callTool('list_allowed_directories')).structured).toMatchObject({ directories: [dir] });
    expect((await session.callTool('read_text_file', { path: 'log.txt', tail: 2 })).text).toBe('row 99\nrow 100');
    const grep = await session.callTool('search_content', { path: dir, pattern: 'answer\\s*=' });
    expect(grep.structured).toMatchObject({ matches: [{ path: 'src/main.ts', line: 1, text: 'export const answer = 42;' }] });
    const found = await session.callTool('search_files', { path: dir, pattern: '**/*.ts' });
    expect(found.text).toBe(path.join(dir, 'src', 'main.ts'));
  });

  it('reports bad input as isError without crashing the process', async () => {
    const bad = await session.callTool('read_text_file', { path: '/etc/passwd' });
    expect(bad.isError).toBe(true);
    const worse = await session.callTool('read_text_file', { path: 42 });
    expect(worse.isError).toBe(true);
    expect((await session.callTool('get_file_info', { path: 'log.txt' })).isError).toBe(false);
  });

  it('--read-only registers no write tools', async () => {
    const names = (await readOnly.client.listTools()).tools.map((t) => t.name);
    for (const w of ['write_file', 'edit_file', 'create_directory', 'move_file', 'copy_file', 'delete_file']) expect(names).not.toContain(w);
    expect(names).toContain('read_text_file');
    expect(names).toContain('search_content');
  });
});
