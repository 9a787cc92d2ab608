import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectInProcess, spawnServer, type TestSession } from '@suite/shared/testing';
import { buildServer } from '../src/server.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

describe('@suite/server-__NAME__', () => {
  let session: TestSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it('lists its tools with annotations', async () => {
    session = await connectInProcess(buildServer({ uppercase: false }));
    const { tools } = await session.client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['count_words']);
    expect(tools[0]!.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
  });

  it('counts words, with structured output', async () => {
    session = await connectInProcess(buildServer({ uppercase: false }));
    const out = await session.callTool('count_words', { text: 'one two\nthree' });
    expect(out).toMatchObject({ isError: false, text: '3 words, 2 lines', structured: { words: 3, lines: 2 } });
  });

  it('reports bad input as an isError result', async () => {
    session = await connectInProcess(buildServer({ uppercase: false }));
    const out = await session.callTool('count_words', { text: 42 });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/text/);
  });

  it('runs as a stdio bin with its flags', async () => {
    session = await spawnServer(BIN, ['--uppercase']);
    expect((await session.callTool('count_words', { text: 'a b' })).text).toBe('2 WORDS, 1 LINES');
  });
});
