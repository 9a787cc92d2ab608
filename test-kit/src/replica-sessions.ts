import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ConformanceTarget, HttpServerProcess, PreparedTarget } from './conformance.js';
import { connectModernHttp } from './eras.js';
import { freePort, requestStateKeyFile, startHaproxy, startPrivateRedis, startReplicas, type LoadBalancer, type PrivateRedis } from './replicas.js';
import { connectHttp, makeTempDir } from './testing.js';

/** Calls a client makes with a retry, as a client of a load-balanced service should: each attempt bounded. */
async function withRetry<T>(call: (timeoutMs: number) => Promise<T>, tally: { failedAttempts: number }): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call(4_000);
    } catch (error) {
      tally.failedAttempts += 1;
      if (attempt >= 4) throw error;
      await new Promise((r) => setTimeout(r, 250 * attempt));
    }
  }
}

/**
 * Replicas of a server's built bin sharing 2025-era sessions through Redis, behind haproxy with no
 * affinity (round robin): a session opened on one replica is used on the other, and a replica
 * killed with SIGKILL under load costs no request after the client's retry and no session.
 */
export function replicaSessionsSuite(target: ConformanceTarget): void {
  describe(`replicas: ${target.name}, 2025-era sessions on any replica (the built bin, Redis, haproxy)`, () => {
    let prepared: PreparedTarget;
    let redis: PrivateRedis;
    let workDir: { dir: string; cleanup: () => Promise<void> };
    let token: string;
    const closers: (() => Promise<unknown>)[] = [];

    beforeAll(async () => {
      prepared = await target.prepare();
      redis = await startPrivateRedis();
      workDir = await makeTempDir('replica-sessions-');
      const auth = prepared.http ?? { auth: 'gate' as const };
      token = auth.auth === 'gate' ? `replicas-${process.pid}-${Date.now()}` : auth.token;
    }, 120_000);
    afterEach(async () => {
      for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    });
    afterAll(async () => {
      await redis?.stop();
      await workDir?.cleanup();
      await prepared?.cleanup();
    }, 60_000);

    async function behindHaproxy(): Promise<{ lb: LoadBalancer; replicas: HttpServerProcess[] }> {
      const port = await freePort();
      const key = await requestStateKeyFile(workDir.dir);
      const gate = (prepared.http ?? { auth: 'gate' }).auth === 'gate' ? ['--auth-token', token] : [];
      const args = [...prepared.args, ...gate, '--request-state-key-file', key, '--allowed-host', `127.0.0.1:${port}`, '--redis-url', redis.url, '--redis-prefix', `replicas-${Date.now()}:`];
      const replicas = await startReplicas(target.bin, args, 2, prepared.env);
      for (const r of replicas) closers.push(() => r.server.stop());
      const lb = await startHaproxy(replicas, workDir.dir, port);
      closers.push(() => lb.stop());
      return { lb, replicas };
    }

    it('a session opened on one replica goes on on the other, and 2026-07-28 requests alternate too: no sticky sessions', async () => {
      const { lb } = await behindHaproxy();
      const session = await connectHttp(lb.url, { token });
      closers.push(() => session.close());
      const before = await lb.served();
      for (let i = 0; i < 8; i++) {
        const outcome = await session.callTool(prepared.cheapCall.name, prepared.cheapCall.arguments);
        expect(outcome.isError, outcome.text).toBe(false);
      }
      const served = (await lb.served()).map((n, i) => n - before[i]!);
      for (const count of served) expect(count).toBeGreaterThanOrEqual(3);
      // And a 2026-07-28 client, whose requests stand alone, through the same balancer.
      const modern = await connectModernHttp(lb.url, { token });
      closers.push(() => modern.close());
      const between = await lb.served();
      for (let i = 0; i < 8; i++) {
        const result = await modern.callTool({ name: prepared.cheapCall.name, arguments: prepared.cheapCall.arguments });
        expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
      }
      for (const count of (await lb.served()).map((n, i) => n - between[i]!)) expect(count).toBeGreaterThanOrEqual(3);
    });

    it('a replica drained with SIGTERM under load: haproxy takes it out before it closes, and not one call fails (no retry), the 2025 session lives on', async () => {
      const { lb, replicas } = await behindHaproxy();
      const legacy = await connectHttp(lb.url, { token });
      closers.push(() => legacy.close());
      const modern = await connectModernHttp(lb.url, { token });
      closers.push(() => modern.close());
      const sessionId = legacy.sessionId();
      const { name, arguments: args } = prepared.cheapCall;
      const drained = replicas[0]!.server;
      const failures: string[] = [];
      let calls = 0;
      let stop = false;
      // One attempt per call: a failure is counted, never retried.
      const load = async (call: () => Promise<boolean>): Promise<void> => {
        while (!stop) {
          try {
            if (await call()) failures.push('isError');
          } catch (error) {
            failures.push((error as Error).message);
          }
          calls += 1;
        }
      };
      const legacyCall = async (): Promise<boolean> => (await legacy.callTool(name, args, { timeout: 15_000 })).isError;
      const modernCall = async (): Promise<boolean> => (await modern.callTool({ name, arguments: args }, { timeout: 15_000 })).isError === true;
      const running = Promise.all([load(legacyCall), load(legacyCall), load(modernCall), load(modernCall)]);
      try {
        while (calls < 20) await new Promise((r) => setTimeout(r, 10));
        const before = await lb.served();
        const signalledAt = Date.now();
        drained.kill('SIGTERM');
        // haproxy sees /readyz fail and takes the replica out while it still listens (its drain is 5 s).
        await expect.poll(async () => (await lb.states())[0], { timeout: 10_000, interval: 50 }).toMatch(/^DOWN/);
        const outAt = Date.now();
        expect(drained.hasExited).toBe(false);
        const whenOut = await lb.served();
        const exit = await drained.exited;
        const atExit = await lb.served();
        // Load went on through the exit; the last calls all went to the other replica.
        const callsAtExit = calls;
        while (calls < callsAtExit + 20) await new Promise((r) => setTimeout(r, 10));
        stop = true;
        await running;
        expect(exit.code).toBe(0);
        expect(atExit[0]).toBe(whenOut[0]);
        expect(whenOut[0]! - before[0]!, 'haproxy sent the replica work after SIGTERM, before it noticed the drain (and the replica served it)').toBeGreaterThan(0);
        process.stdout.write(`[replicas] ${target.name}: drained replica out of haproxy ${outAt - signalledAt} ms after SIGTERM; ${calls} calls, ${failures.length} failed\n`);
      } finally {
        stop = true;
        await running;
      }
      expect(failures).toEqual([]);
      expect(legacy.sessionId()).toBe(sessionId);
      expect((await legacy.callTool(name, args)).isError).toBe(false);
    });

    it('a replica killed with SIGKILL under load: no request fails after the client retries, and the 2025 session lives on', async () => {
      const { lb, replicas } = await behindHaproxy();
      const legacy = await connectHttp(lb.url, { token });
      closers.push(() => legacy.close());
      const modern = await connectModernHttp(lb.url, { token });
      closers.push(() => modern.close());
      const sessionId = legacy.sessionId();
      const tally = { failedAttempts: 0 };
      const { name, arguments: args } = prepared.cheapCall;
      let done = 0;
      const load = async (call: (timeoutMs: number) => Promise<boolean>): Promise<void> => {
        for (let i = 0; i < 15; i++) {
          expect(await withRetry(call, tally)).toBe(false);
          done += 1;
        }
      };
      const killed = (async () => {
        while (done < 12) await new Promise((r) => setTimeout(r, 10));
        replicas[0]!.server.child.kill('SIGKILL');
      })();
      // Two calls in flight per client at all times, so that the kill lands on some.
      const legacyCall = async (timeout: number): Promise<boolean> => (await legacy.callTool(name, args, { timeout })).isError;
      const modernCall = async (timeout: number): Promise<boolean> => (await modern.callTool({ name, arguments: args }, { timeout })).isError === true;
      await Promise.all([load(legacyCall), load(legacyCall), load(modernCall), load(modernCall), killed]);
      expect(done).toBe(60);
      // The same session, served by the replica that is left.
      expect(legacy.sessionId()).toBe(sessionId);
      expect((await legacy.callTool(name, args)).isError).toBe(false);
      expect(replicas[0]!.server.hasExited).toBe(true);
      // Some attempts may fail (the ones in flight on the killed replica); the retries carried them.
      process.stdout.write(`[replicas] ${target.name}: ${tally.failedAttempts} attempts failed and were retried\n`);
      expect(tally.failedAttempts).toBeLessThanOrEqual(10);
    });
  });
}
