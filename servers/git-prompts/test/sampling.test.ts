import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { git, makeRepo, open, writeFiles } from './helpers.js';

describe('draft_commit_message', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-sampling-'));
    repo = makeRepo(path.join(base, 'app'), { 'src/a.ts': 'export const a = 1;\n' });
    writeFiles(repo, { 'src/a.ts': 'export const a = 2;\n' });
    git(repo, ['add', '--all']);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });
  afterAll(async () => {
    await cleanup();
  });

  it('asks the client\'s model with the git-commit text, a token limit and model preferences', async () => {
    const requests: Record<string, unknown>[] = [];
    session = await open([repo], {
      sampling: async (params) => {
        requests.push(params);
        return { role: 'assistant', model: 'test-model', content: { type: 'text', text: '```\nBump a to 2\n```' }, stopReason: 'endTurn' };
      },
    });
    const out = await session.callTool('draft_commit_message', {});
    expect(out.isError).toBe(false);
    expect(out.structured).toEqual({ source: 'sampling', message: 'Bump a to 2', model: 'test-model' });
    expect(out.text).toBe('Bump a to 2');
    expect(requests).toHaveLength(1);
    const request = requests[0] as { messages: { content: { text: string } }[]; maxTokens: number; modelPreferences: Record<string, number>; systemPrompt: string };
    expect(request.maxTokens).toBe(400);
    expect(request.modelPreferences).toEqual({ speedPriority: 0.8, costPriority: 0.6, intelligencePriority: 0.4 });
    expect(request.systemPrompt).toMatch(/commit messages/);
    const text = request.messages[0]!.content.text;
    // The same instructions as the git-commit prompt, with the staged diff inline (sampling has no resources).
    const prompt = await session.getPrompt('git-commit');
    expect(text.startsWith((prompt.messages[0]!.content as { text: string }).text.replace(' (their diff is attached)', ''))).toBe(true);
    expect(text).toMatch(/The staged diff:\n\ndiff --git a\/src\/a\.ts b\/src\/a\.ts[\s\S]*\+export const a = 2;/);
  });

  it('answers with the request itself when the client has no sampling', async () => {
    session = await open([repo]);
    const out = await session.callTool('draft_commit_message', {});
    expect(out.isError).toBe(false);
    expect(out.structured).toMatchObject({ source: 'prompt', prompt: expect.stringMatching(/^Write a git commit message for the staged changes in app\./) });
    expect(out.text).toMatch(/^This client cannot run sampling, so here is the request; answer it with the commit message:\n\nWrite a git commit message/);
  });

  it('falls back to the request when the user declines, and stops when the call is cancelled', async () => {
    session = await open([repo], {
      sampling: async () => {
        throw new Error('User rejected the request');
      },
    });
    const declined = await session.callTool('draft_commit_message', {});
    expect(declined.isError).toBe(false);
    expect(declined.structured).toMatchObject({ source: 'prompt' });
    expect(declined.text).toMatch(/^The client did not write the message \(The client refused the sampling request: User rejected the request\) Write it yourself/);
    await session.close();

    let aborted = false;
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    let calls = 0;
    session = await open([repo], {
      sampling: (_params, { signal }) => {
        if (calls++ === 0) return Promise.resolve({ role: 'assistant', model: 'm', content: { type: 'text', text: 'Warm up' } });
        return new Promise((_resolve, reject) => {
          asked();
          signal.addEventListener('abort', () => {
            aborted = true;
            reject(new Error('aborted'));
          });
        });
      },
    });
    // The SDK's client ignores a cancellation of request id 0: the request under test must not be the first.
    expect((await session.callTool('draft_commit_message', {})).text).toBe('Warm up');
    const controller = new AbortController();
    const call = session.callTool('draft_commit_message', {}, { signal: controller.signal });
    await wasAsked;
    controller.abort();
    await expect(call).rejects.toThrow();
    await expect.poll(() => aborted, { timeout: 10_000 }).toBe(true);
  });

  it('describes given changes without a repository, and refuses when nothing is staged', async () => {
    session = await open([]);
    const given = await session.callTool('draft_commit_message', { changes: 'Fixed the login timeout' });
    expect(given.structured).toMatchObject({ source: 'prompt', prompt: expect.stringMatching(/The changes:\n\nFixed the login timeout$/) });
    await session.close();
    const clean = makeRepo(path.join(base, 'clean'));
    session = await open([clean]);
    const nothing = await session.callTool('draft_commit_message', {});
    expect(nothing.isError).toBe(true);
    expect(nothing.text).toMatch(/^Nothing is staged in clean, so there is nothing to describe yet\./);
  });
});
