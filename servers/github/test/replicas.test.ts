import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import type { HttpServerProcess } from '@suite/test-kit/abuse';
import { connectModernHttp } from '@suite/test-kit/eras';
import { replicaSuite, requestStateKeyFile, startPrivateRedis, startReplicas, type PrivateRedis } from '@suite/test-kit/replicas';
import { target } from './conformance-target.js';
import { startFakeGithub, type FakeGithub } from './fake-github/index.js';
import { BIN, TOKENS, binEnv, seed, testConfig } from './helpers.js';

// GitHub's resources (repo:// files) announce no changes, so there is no listen stream to share:
// the suite covers requests alternating between replicas and Redis going away and coming back.
replicaSuite(target);

/** The cap the replicas run with: low, so that two replicas alone would exceed it. */
const CAP = 3;
const ISSUE = { owner: 'acme', repo: 'widgets', issue_number: 2 };
const ISSUE_PATH = '/repos/acme/widgets/issues/2';
const LIMITS_DOWN = /Redis is unreachable: upstream limits/g;

interface Replica {
  process: HttpServerProcess;
  alice: Client;
  bob: Client;
}

const textOf = (result: { content: unknown }): string => (result.content as { text: string }[])[0]!.text;

describe('GitHub limits shared by replicas (--redis-url): rate limits learned and requests in flight, per token', () => {
  const closers: (() => Promise<unknown>)[] = [];
  const logs: (() => string)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    // The replicas log at info level, and no line names a token.
    for (const log of logs.splice(0)) for (const token of Object.values(TOKENS)) expect(log()).not.toContain(token);
  });

  async function world(): Promise<{ fake: FakeGithub; redis: PrivateRedis; dir: string }> {
    const fake = await startFakeGithub();
    closers.push(() => fake.close());
    seed(fake);
    const redis = await startPrivateRedis();
    closers.push(() => redis.stop());
    const dir = await mkdtemp(path.join(os.tmpdir(), 'github-replicas-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    return { fake, redis, dir };
  }

  /** Two replicas against the fake, with Redis or without, each with a client per token. */
  async function replicas(fake: FakeGithub, dir: string, redisUrl: string | undefined): Promise<Replica[]> {
    const config = testConfig(fake, { throttle: { ...testConfig(fake).throttle, maxInFlight: CAP, requestTimeoutMs: 20_000 } });
    const shared = redisUrl ? ['--redis-url', redisUrl, '--redis-prefix', `github-test-${process.pid}-${Date.now()}:`] : [];
    const started = await startReplicas(BIN, ['--log-level', 'info', '--request-state-key-file', await requestStateKeyFile(dir), ...shared], 2, binEnv(config, undefined));
    return Promise.all(
      started.map(async (r) => {
        closers.push(() => r.server.stop());
        logs.push(() => r.server.stderr());
        const [alice, bob] = await Promise.all([connectModernHttp(r.url, { token: TOKENS.alice }), connectModernHttp(r.url, { token: TOKENS.bob })]);
        closers.push(() => alice.close(), () => bob.close());
        return { process: r, alice, bob };
      }),
    );
  }

  /** A rate limit met on A, then the same call on B: the requests that reached GitHub, and what B answered. */
  async function limitOnAThenB(fake: FakeGithub, [a, b]: Replica[]): Promise<{ sentByB: number; answer: { isError?: unknown; content: unknown } }> {
    fake.exhaustRateLimit({ token: TOKENS.alice, resetInSeconds: 600 });
    const met = await a!.alice.callTool({ name: 'get_issue', arguments: ISSUE });
    expect(met.isError).toBe(true);
    expect(textOf(met)).toMatch(/rate limit/i);
    // GitHub would answer now: whatever B does not send, it keeps back on its own.
    fake.restoreRateLimit();
    const before = fake.requests.length;
    const answer = await b!.alice.callTool({ name: 'get_issue', arguments: ISSUE });
    return { sentByB: fake.requests.length - before, answer };
  }

  it("a rate limit learned on replica A stops the token's call on replica B before it leaves, with A's own message; other tokens go on", async () => {
    const { fake, redis, dir } = await world();
    const pair = await replicas(fake, dir, redis.url);
    const { sentByB, answer } = await limitOnAThenB(fake, pair);
    expect(sentByB).toBe(0);
    expect(answer.isError).toBe(true);
    expect(textOf(answer)).toMatch(/nothing was sent/);
    // The words a single process says for a limit it already knows, to the second.
    const again = await pair[0]!.alice.callTool({ name: 'get_issue', arguments: ISSUE });
    expect(textOf(answer).replace(/\d+/g, 'N')).toBe(textOf(again).replace(/\d+/g, 'N'));
    // GitHub counts per token: bob's calls on B are not held.
    expect((await pair[1]!.bob.callTool({ name: 'get_issue', arguments: ISSUE })).isError).toBeFalsy();
    // No token is a key in Redis: only keyed hashes of them.
    const keys = await redisKeys(redis.url);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) for (const token of Object.values(TOKENS)) expect(key).not.toContain(token);
  });

  it('without Redis, each replica knows only its own limits (the control)', async () => {
    const { fake, dir } = await world();
    const { sentByB, answer } = await limitOnAThenB(fake, await replicas(fake, dir, undefined));
    expect(sentByB).toBe(1);
    expect(answer.isError).toBeFalsy();
  });

  /** 4 × CAP calls of one token, half through each replica, each held 300 ms by GitHub: the most in flight at GitHub at once. */
  async function mostInFlight(fake: FakeGithub, pair: Replica[]): Promise<number> {
    fake.upstream.fault({ path: ISSUE_PATH, times: 4 * CAP, delayMs: 300 });
    fake.upstream.resetInFlight();
    const calls = Array.from({ length: 4 * CAP }, (_, i) => pair[i % 2]!.alice.callTool({ name: 'get_issue', arguments: ISSUE }));
    const answers = await Promise.all(calls);
    expect(answers.filter((a) => a.isError).map(textOf)).toEqual([]);
    return fake.upstream.inFlight().max;
  }

  it(`holds at most ${CAP} requests of a token in flight across both replicas; alone, each replica holds ${CAP}`, async () => {
    const { fake, redis, dir } = await world();
    expect(await mostInFlight(fake, await replicas(fake, dir, redis.url))).toBe(CAP);
    expect(await mostInFlight(fake, await replicas(fake, dir, undefined))).toBe(2 * CAP);
  }, 30_000);

  it("a replica killed while it holds the token's slots gives them back within a lease (5 s)", async () => {
    const { fake, redis, dir } = await world();
    const [a, b] = await replicas(fake, dir, redis.url);
    fake.upstream.fault({ path: ISSUE_PATH, times: CAP, delayMs: 30_000 });
    for (let i = 0; i < CAP; i++) void a!.alice.callTool({ name: 'get_issue', arguments: ISSUE }).catch(() => undefined);
    await expect.poll(() => fake.upstream.inFlight().now, { timeout: 5_000 }).toBe(CAP);
    a!.process.server.kill('SIGKILL');
    const started = Date.now();
    const answer = await b!.alice.callTool({ name: 'get_issue', arguments: ISSUE });
    const waited = Date.now() - started;
    expect(answer.isError, textOf(answer)).toBeFalsy();
    // It waited for the dead replica's leases to run out, and no longer than one lease and some.
    expect(waited).toBeGreaterThan(1_000);
    expect(waited).toBeLessThan(12_000);
  }, 30_000);

  it('Redis stopped: calls go on with each replica\'s own limits at once, the degradation said once; Redis back: limits shared again', async () => {
    const { fake, redis, dir } = await world();
    const pair = await replicas(fake, dir, redis.url);
    await redis.stop();
    const started = Date.now();
    for (let i = 0; i < 6; i++) expect((await pair[i % 2]!.alice.callTool({ name: 'get_issue', arguments: ISSUE })).isError).toBeFalsy();
    expect(Date.now() - started).toBeLessThan(6 * 1_000);
    // Each replica alone still holds its own cap.
    expect(await mostInFlight(fake, pair)).toBeLessThanOrEqual(2 * CAP);
    await expect.poll(() => pair.every((r) => (r.process.server.stderr().match(LIMITS_DOWN)?.length ?? 0) >= 1), { timeout: 10_000 }).toBe(true);
    for (const r of pair) expect(r.process.server.stderr().match(LIMITS_DOWN)).toHaveLength(1);
    await redis.start();
    await expect.poll(() => pair.every((r) => /Redis is back/.test(r.process.server.stderr())), { timeout: 15_000 }).toBe(true);
    const { sentByB, answer } = await limitOnAThenB(fake, pair);
    expect(sentByB).toBe(0);
    expect(textOf(answer)).toMatch(/nothing was sent/);
    for (const r of pair) expect(r.process.server.stderr()).toMatch(/Redis is back: upstream limits are shared/);
    for (const r of pair) expect(r.process.server.stderr().match(LIMITS_DOWN)).toHaveLength(1);
  }, 60_000);
});

/** Every key in a Redis (the test's own), through redis-cli. */
async function redisKeys(url: string): Promise<string[]> {
  const { execFile } = await import('node:child_process');
  const port = new URL(url).port;
  return new Promise((resolve, reject) =>
    execFile('redis-cli', ['-p', port, '--scan'], (error, stdout) => (error ? reject(error) : resolve(stdout.split('\n').filter(Boolean)))),
  );
}
