import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { connectInProcess, spawnServer, toolCatalog, type TestSession } from '@suite/test-kit';
import { buildServer, type TemplateCheckConfig } from '../src/server.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');
const config = (): TemplateCheckConfig => ({ uppercase: false, notes: [] });

describe('@suite/server-template-check', () => {
  let session: TestSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it('lists its tools with annotations (snapshot: a change to the tool surface is a reviewed diff)', async () => {
    session = await connectInProcess(buildServer(config()));
    expect(await session.toolNames()).toEqual(['count_words', 'add_note', 'list_notes']);
    await expect(await toolCatalog(session.client)).toMatchFileSnapshot('./__snapshots__/tools.json');
  });

  it('counts words, with structured output', async () => {
    session = await connectInProcess(buildServer(config()));
    const out = await session.callTool('count_words', { text: 'one two\nthree' });
    expect(out).toMatchObject({ isError: false, text: '3 words, 2 lines', structured: { words: 3, lines: 2 } });
  });

  it('reports bad input as an isError result', async () => {
    session = await connectInProcess(buildServer(config()));
    const out = await session.callTool('count_words', { text: 42 });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/text/);
  });

  it('read-only mode removes the tools that write, and only those', async () => {
    session = await connectInProcess(buildServer(config(), { readOnly: true }));
    expect(await session.toolNames()).toEqual(['count_words', 'list_notes']);
    await expect(session.callTool('add_note', { note: 'x' })).rejects.toThrow(/Unknown tool: add_note/);
  });

  it('exposes only the chosen toolsets', async () => {
    session = await connectInProcess(buildServer(config(), { toolsets: ['text'] }));
    expect(await session.toolNames()).toEqual(['count_words']);
  });

  it('embeds the notes resource in its prompt', async () => {
    const shared = config();
    session = await connectInProcess(buildServer(shared));
    await session.callTool('add_note', { note: 'buy milk' });
    expect((await session.readResource('notes://all')).text).toBe('buy milk');
    const prompt = await session.getPrompt('summarize-notes', { style: 'prose' });
    expect(prompt.resources).toEqual([{ uri: 'notes://all', mimeType: 'text/plain', text: 'buy milk' }]);
    expect(prompt.text).toMatch(/short paragraph/);
    expect((await session.complete({ prompt: 'summarize-notes' }, 'style', 'b')).values).toEqual(['bullets']);
  });

  it('runs as a stdio bin with its flags', async () => {
    session = await spawnServer(BIN, ['--uppercase', '--read-only']);
    expect((await session.callTool('count_words', { text: 'a b' })).text).toBe('2 WORDS, 1 LINES');
    expect(await session.toolNames()).not.toContain('add_note');
  });
});
