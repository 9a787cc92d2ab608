import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '@suite/test-kit';
import { connectModernHttp } from '@suite/test-kit/eras';
import { freePort, requestStateKeyFile, startHaproxy, startReplicas } from '@suite/test-kit/replicas';
import { BIN, git, makeRepo, writeFiles } from './helpers.js';

describe('git-prompts replicas behind haproxy (round robin, no affinity), in the 2026-07-28 era', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-replicas-'));
    repo = makeRepo(path.join(base, 'app'), { 'src/a.ts': 'export const a = 1;\n' });
    writeFiles(repo, { 'src/a.ts': 'export const a = 2;\n' });
    git(repo, ['add', '--all']);
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });
  afterAll(async () => {
    await cleanup();
  });

  async function behindHaproxy(keys: string[]): Promise<{ url: string; served: () => Promise<number[]> }> {
    // The load balancer's Host is the one the replicas see: they accept it.
    const port = await freePort();
    const replicas = await Promise.all(keys.map((key) => startReplicas(BIN, [repo, '--request-state-key-file', key, '--allowed-host', `127.0.0.1:${port}`], 1).then((r) => r[0]!)));
    for (const r of replicas) closers.push(() => r.server.stop());
    const lb = await startHaproxy(replicas, base, port);
    closers.push(() => lb.stop());
    return lb;
  }

  it('answers every request from either replica, and finishes an input_required round trip that lands on the other one', async () => {
    const key = await requestStateKeyFile(base);
    const lb = await behindHaproxy([key, key]);
    const client = await connectModernHttp(lb.url, { capabilities: { sampling: {} } });
    closers.push(() => client.close());
    let sampled = 0;
    client.setRequestHandler('sampling/createMessage', async () => {
      sampled += 1;
      return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'Bump a to 2' } };
    });
    for (let i = 0; i < 6; i++) expect((await client.callTool({ name: 'git_status', arguments: {} })).isError).toBeFalsy();
    // Round robin: the first request of the call lands on one replica, its retry on the other.
    const drafted = await client.callTool({ name: 'draft_commit_message', arguments: {} });
    expect(drafted.structuredContent).toEqual({ source: 'sampling', message: 'Bump a to 2', model: 'test-model' });
    expect(sampled).toBe(1);
    const served = await lb.served();
    expect(served).toHaveLength(2);
    for (const count of served) expect(count).toBeGreaterThanOrEqual(4);
  });

  it('refuses the retry when the replicas do not share the requestState key (the reason the flag exists)', async () => {
    const lb = await behindHaproxy([await requestStateKeyFile(base), await requestStateKeyFile(base)]);
    const client = await connectModernHttp(lb.url, { capabilities: { sampling: {} } });
    closers.push(() => client.close());
    client.setRequestHandler('sampling/createMessage', async () => ({ role: 'assistant', model: 'm', content: { type: 'text', text: 'x' } }));
    await expect(client.callTool({ name: 'draft_commit_message', arguments: {} })).rejects.toThrow(/Invalid or expired requestState/);
  });
});
