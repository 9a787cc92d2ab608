import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/client';
import { connectModernHttp } from '@suite/test-kit/eras';
import { requestStateKeyFile, startPrivateRedis, startReplicas } from '@suite/test-kit/replicas';
import { BIN, makeDatabaseFile } from './helpers.js';

/** Creates tables through `writer` until `listener` hears resources/list_changed, or the time is up. */
async function heardAcross(listener: Client, writer: Client, timeoutMs: number): Promise<boolean> {
  let heard = false;
  listener.setNotificationHandler('notifications/resources/list_changed', () => {
    heard = true;
  });
  await listener.listen({ resourcesListChanged: true });
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; !heard && Date.now() < deadline; attempt++) {
    const made = await writer.callTool({ name: 'create_table', arguments: { query: `CREATE TABLE across_${Date.now()}_${attempt} (x)` } });
    expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
    const wait = Date.now() + 500;
    while (!heard && Date.now() < wait) await new Promise((r) => setTimeout(r, 25));
  }
  return heard;
}

describe('sqlite replicas (the built bin over HTTP, --redis-url)', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function pair(redisUrl: string | undefined): Promise<{ listener: Client; writer: Client; stderr: () => string }> {
    const { dir, file, cleanup } = await makeDatabaseFile();
    closers.push(cleanup);
    const key = await requestStateKeyFile(dir);
    const shared = redisUrl ? ['--redis-url', redisUrl, '--redis-prefix', `suite-test-${process.pid}-${Date.now()}:`] : [];
    const [a, b] = await startReplicas(BIN, ['--allow-write', file, '--request-state-key-file', key, ...shared], 2, { SUITE_LOG_LEVEL: 'warning' });
    closers.push(() => a!.server.stop(), () => b!.server.stop());
    const listener = await connectModernHttp(a!.url);
    const writer = await connectModernHttp(b!.url);
    closers.push(() => listener.close(), () => writer.close());
    return { listener, writer, stderr: () => a!.server.stderr() + b!.server.stderr() };
  }

  it('a listen stream on replica A hears a table created through replica B; without Redis it does not', async () => {
    const redis = await startPrivateRedis();
    closers.push(() => redis.stop());
    const joined = await pair(redis.url);
    expect(await heardAcross(joined.listener, joined.writer, 10_000)).toBe(true);
    // The control: the same two replicas without Redis share nothing (nothing on A follows the file).
    const alone = await pair(undefined);
    expect(await heardAcross(alone.listener, alone.writer, 2_500)).toBe(false);
  });

  it('Redis stopped: both replicas serve on alone and say so once; Redis back: changes flow again by themselves', async () => {
    const redis = await startPrivateRedis();
    closers.push(() => redis.stop());
    const joined = await pair(redis.url);
    expect(await heardAcross(joined.listener, joined.writer, 10_000)).toBe(true);
    await redis.stop();
    // Every request still answers, and none waits on Redis.
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      const read = await joined.writer.callTool({ name: 'read_query', arguments: { query: 'SELECT count(*) AS n FROM people' } });
      expect(read.isError).toBeFalsy();
    }
    const made = await joined.writer.callTool({ name: 'create_table', arguments: { query: 'CREATE TABLE while_redis_is_down (x)' } });
    expect(made.isError).toBeFalsy();
    expect(Date.now() - started).toBeLessThan(5_000);
    await expect.poll(() => joined.stderr().match(/Redis is unreachable/g)?.length ?? 0, { timeout: 10_000 }).toBeGreaterThanOrEqual(1);
    await redis.start();
    await expect.poll(() => (joined.stderr().match(/Redis is back/g)?.length ?? 0) >= 2, { timeout: 15_000 }).toBe(true);
    // Said once per replica and connection state, not once per change.
    expect(joined.stderr().match(/Redis is unreachable/g)!.length).toBeLessThanOrEqual(2);
    const listener2 = joined.listener;
    expect(await heardAcross(listener2, joined.writer, 10_000)).toBe(true);
  });
});
