import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '@suite/test-kit';
import { connectModernStdio, erasSuite, untilListenUpdate } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';
import { BIN, commit, git, makeRepo, writeFiles } from './helpers.js';

erasSuite(target, { follows: true });

describe('git-prompts in the 2026-07-28 era (the built bin over stdio)', () => {
  let base: string;
  let repo: string;
  let other: string;
  let cleanup: () => Promise<void>;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-eras-'));
    repo = makeRepo(path.join(base, 'app'), { 'src/a.ts': 'export const a = 1;\n' });
    other = makeRepo(path.join(base, 'other'), { 'b.txt': 'b\n' });
    writeFiles(repo, { 'src/a.ts': 'export const a = 2;\n' });
    git(repo, ['add', '--all']);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });
  afterAll(async () => {
    await cleanup();
  });

  it('draft_commit_message samples through input_required: roots first, then the model, and the tool runs once', async () => {
    const asked: string[] = [];
    const client = await connectModernStdio(BIN, [repo, other], { capabilities: { sampling: {}, roots: {} } });
    closers.push(() => client.close());
    client.setRequestHandler('roots/list', async () => {
      asked.push('roots');
      return { roots: [{ uri: pathToFileURL(repo).href, name: 'app' }] };
    });
    client.setRequestHandler('sampling/createMessage', async (request) => {
      asked.push('sampling');
      expect((request.params.messages[0]!.content as { text: string }).text).toMatch(/\+export const a = 2;/);
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'Bump a to 2' } };
    });
    const result = await client.callTool({ name: 'draft_commit_message', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ source: 'sampling', message: 'Bump a to 2', model: 'test-model' });
    // The client's one root narrows the two repositories of the command line to one, so no repo_path is needed.
    expect(asked).toEqual(['roots', 'sampling']);
  });

  it('without sampling, answers with the request itself, as in the 2025 era', async () => {
    const client = await connectModernStdio(BIN, [repo]);
    closers.push(() => client.close());
    const result = await client.callTool({ name: 'draft_commit_message', arguments: {} });
    expect(result.structuredContent).toMatchObject({ source: 'prompt', prompt: expect.stringMatching(/^Write a git commit message for the staged changes in app\./) });
  });

  it('a listen stream on the log hears a commit land (the refs change)', async () => {
    const live = makeRepo(path.join(base, `live-${Date.now()}`), { 'x.txt': 'x\n' });
    const client = await connectModernStdio(BIN, [live]);
    closers.push(() => client.close());
    const uri = `git://${path.basename(live)}/log`;
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    await untilListenUpdate(client, uri, (i) => void commit(live, { 'x.txt': `x ${i}\n` }, `change ${i}`));
    await subscription.close();
  });
});
