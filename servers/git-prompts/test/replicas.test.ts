import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectHttp, makeTempDir } from '@suite/test-kit';
import { connectModernHttp } from '@suite/test-kit/eras';
import { freePort, requestStateKeyFile, startHaproxy, startPrivateRedis, startReplicas } from '@suite/test-kit/replicas';
import { BIN, commit, git, makeRepo, writeFiles } from './helpers.js';

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

  async function behindHaproxy(keys: string[], extra: string[] = [], target = repo): Promise<{ url: string; served: () => Promise<number[]> }> {
    // The load balancer's Host is the one the replicas see: they accept it.
    const port = await freePort();
    const replicas = await Promise.all(keys.map((key) => startReplicas(BIN, [target, '--request-state-key-file', key, '--allowed-host', `127.0.0.1:${port}`, ...extra], 1).then((r) => r[0]!)));
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

  it('a 2025 session continues on either replica: calls alternate, sampling is answered to the replica that asked, a subscription is heard on the stream', async () => {
    const redis = await startPrivateRedis();
    closers.push(() => redis.stop());
    const live = makeRepo(path.join(base, `live-${Date.now()}`), { 'x.txt': 'x\n' });
    writeFiles(live, { 'x.txt': 'x staged\n' });
    git(live, ['add', '--all']);
    const key = await requestStateKeyFile(base);
    const lb = await behindHaproxy([key, key], ['--redis-url', redis.url], live);
    let sampled = 0;
    const session = await connectHttp(lb.url, {
      sampling: async () => {
        sampled += 1;
        return { role: 'assistant', model: 'test-model', content: { type: 'text', text: 'Stage x' } };
      },
    });
    closers.push(() => session.close());
    for (let i = 0; i < 8; i++) expect((await session.callTool('git_status')).isError).toBe(false);
    const served = await lb.served();
    for (const count of served) expect(count).toBeGreaterThanOrEqual(3);
    // The sampling request goes out on one replica's response stream; the client posts its answer
    // to whichever replica the balancer picks, and it reaches the one waiting.
    for (let i = 0; i < 3; i++) {
      const drafted = await session.callTool('draft_commit_message');
      expect(drafted.structured).toEqual({ source: 'sampling', message: 'Stage x', model: 'test-model' });
    }
    expect(sampled).toBe(3);
    // Subscribed through one replica; the replica holding the client's GET stream follows it.
    const uri = `git://${path.basename(live)}/log`;
    await session.client.subscribeResource({ uri });
    let heard = false;
    for (let attempt = 0; attempt < 20 && !heard; attempt++) {
      const mark = session.mark();
      commit(live, { [`f${attempt}.txt`]: `${attempt}\n` }, `change ${attempt}`);
      heard = await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { timeoutMs: 1_000, after: mark }).then(
        () => true,
        () => false,
      );
    }
    expect(heard).toBe(true);
  });
});
