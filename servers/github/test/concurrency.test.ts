import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_THROTTLE } from '../src/config.js';
import { startWorld, type World } from './helpers.js';

const MAX_CONCURRENT_REQUESTS = DEFAULT_THROTTLE.maxInFlight;

describe('requests in flight to GitHub', () => {
  let world: World;
  beforeAll(async () => {
    world = await startWorld();
  });
  afterAll(async () => world.close());

  it(`holds at most ${MAX_CONCURRENT_REQUESTS} per token, queues the rest in order and answers every call`, async () => {
    const session = await world.connect();
    const path = '/repos/acme/widgets/issues/2';
    const arrived = (): number => world.fake.requests.filter((r) => r.path === path).length;
    // The first requests are held long enough that a request past the limit would arrive meanwhile.
    world.fake.upstream.fault({ path, times: MAX_CONCURRENT_REQUESTS, delayMs: 2000 });
    const calls = Array.from({ length: 4 * MAX_CONCURRENT_REQUESTS }, () => session.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 }));
    await expect.poll(arrived, { timeout: 5000, interval: 20 }).toBe(MAX_CONCURRENT_REQUESTS);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(arrived()).toBe(MAX_CONCURRENT_REQUESTS);

    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o.isError)).toEqual([]);
    expect(outcomes.every((o) => o.text.includes('Add a blue widget'))).toBe(true);
    expect(arrived()).toBe(4 * MAX_CONCURRENT_REQUESTS);
  }, 30_000);

  it('sends no request for a call cancelled while it waits for its turn', async () => {
    const session = await world.connect();
    const count = (path: string): number => world.fake.requests.filter((r) => r.path === path).length;
    const [held, wanted] = ['/repos/acme/widgets/issues/2', '/repos/acme/widgets/issues/1'];
    const [heldBefore, wantedBefore] = [count(held), count(wanted)];
    world.fake.upstream.fault({ path: held, times: MAX_CONCURRENT_REQUESTS, delayMs: 1500 });
    const blockers = Array.from({ length: MAX_CONCURRENT_REQUESTS }, () => session.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 }));
    await expect.poll(() => count(held) - heldBefore, { timeout: 5000, interval: 20 }).toBe(MAX_CONCURRENT_REQUESTS);
    const controller = new AbortController();
    const waiting = session.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 1 }, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort();
    await expect(waiting).rejects.toThrow();
    await Promise.all(blockers);
    expect(count(wanted)).toBe(wantedBefore);
  }, 30_000);
});
