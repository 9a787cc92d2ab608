import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, spawnServer, type SpawnedSession } from '@suite/test-kit';

const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

describe('the built bin over stdio under oversized and concurrent messages', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let session: SpawnedSession;

  beforeAll(async () => {
    if (!existsSync(bin)) throw new Error(`Build first: ${bin} is missing (npx -y pnpm@10 --filter @suite/server-filesystem build).`);
    ({ dir, cleanup } = await makeTempDir('fs-stdio-limits-'));
    session = await spawnServer(bin, [dir]);
  }, 30_000);
  afterAll(async () => {
    await session?.close();
    await cleanup?.();
  });

  it('refuses a 50 MB write_file with a JSON-RPC error naming the limit, writes nothing, and keeps serving', async () => {
    const error = await session.callTool('write_file', { path: path.join(dir, 'big.txt'), content: 'x'.repeat(50 * 1024 * 1024) }, { timeout: 60_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32600);
    expect((error as McpError).message).toContain('--max-message-bytes');
    expect(await readdir(dir)).toEqual([]);
    const small = await session.callTool('write_file', { path: path.join(dir, 'small.txt'), content: 'fine\n' });
    expect(small.isError).toBe(false);
    expect((await session.callTool('read_text_file', { path: path.join(dir, 'small.txt') })).text).toBe('fine\n');
  }, 60_000);

  it('answers 1,000 concurrent reads without a warning on stderr', async () => {
    const file = path.join(dir, 'page.txt');
    await session.callTool('write_file', { path: file, content: 'line of text\n'.repeat(400) });
    const answers = await Promise.all(Array.from({ length: 1000 }, () => session.callTool('read_text_file', { path: file })));
    expect(answers.every((a) => !a.isError && a.text.length === 13 * 400)).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(session.stderr()).not.toContain('MaxListenersExceededWarning');
  }, 60_000);
});
