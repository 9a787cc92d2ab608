/**
 * Faults that happen to real users, through the real protocol: a log directory removed and
 * created again (a cleanup job, a container volume remounted), and file watches exhausted (the
 * kernel's inotify limit, reached by editors, IDEs and other watchers on the same machine).
 */
import { appendFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, spawnServer, type SpawnedSession, type TestSession } from '@suite/test-kit';
import { BIN, fixture, isoAgo, lines, type Fixture } from './helpers.js';

const updated = (session: TestSession, uri: string, what: string, action: () => Promise<unknown>, timeoutMs?: number): Promise<unknown> =>
  session.notifiedBy('notifications/resources/updated', action, { uri, what, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
const listChanged = (session: TestSession, what: string, action: () => Promise<unknown>, timeoutMs?: number): Promise<unknown> =>
  session.notifiedBy('notifications/resources/list_changed', action, { what, ...(timeoutMs === undefined ? {} : { timeoutMs }) });

let fx: Fixture | undefined;
let spawned: { session: SpawnedSession; cleanup: () => Promise<void> } | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
  await spawned?.session.close();
  await spawned?.cleanup();
  spawned = undefined;
});

describe('a log directory removed and created again', () => {
  it('a subscribed log, logs://recent and the listing keep being announced', async () => {
    fx = await fixture();
    await mkdir(fx.file('api'));
    const log = await fx.write('api/app.log', lines(`${isoAgo(1)} INFO start`));
    const uri = `logs://file${log}`;
    const session = await fx.connect();
    await session.client.subscribeResource({ uri });
    await session.client.subscribeResource({ uri: 'logs://recent' });
    await session.client.listResources();

    await updated(session, uri, 'an append', () => appendFile(log, lines(`${isoAgo(0)} ERROR before`)));
    await updated(session, uri, 'its directory removed', () => rm(fx!.file('api'), { recursive: true }));
    await updated(session, uri, 'directory and log created again', async () => {
      await mkdir(fx!.file('api'));
      await writeFile(log, lines(`${isoAgo(0)} INFO reborn`));
    });
    await updated(session, uri, 'an append to the new log', () => appendFile(log, lines(`${isoAgo(0)} ERROR after`)));
    const text = (await session.readResource(uri)).text;
    expect(text).toContain('ERROR after');
    expect(text).not.toContain('ERROR before');
    await updated(session, 'logs://recent', 'another append', () => appendFile(log, lines(`${isoAgo(0)} WARN recent`)));
    await listChanged(session, 'a new log in the recreated directory', () => writeFile(fx!.file('api/other.log'), lines('x')));
  });

  it('over stdio of the built bin: the log directory given on the command line removed and recreated', async () => {
    const temp = await makeTempDir('logs-faults-');
    const dir = path.join(temp.dir, 'var-log');
    await mkdir(dir);
    const log = path.join(dir, 'app.log');
    await writeFile(log, lines(`${isoAgo(1)} INFO start`));
    const session = await spawnServer(BIN, [dir]);
    spawned = { session, cleanup: temp.cleanup };
    const uri = `logs://file${log}`;
    await session.client.subscribeResource({ uri });
    await session.client.listResources();

    await updated(session, uri, 'an append', () => appendFile(log, lines(`${isoAgo(0)} ERROR one`)));
    await updated(session, uri, 'the directory removed', () => rm(dir, { recursive: true }));
    await updated(session, uri, 'directory and log created again', async () => {
      await mkdir(dir);
      await writeFile(log, lines(`${isoAgo(0)} INFO two`));
    });
    await updated(session, uri, 'an append to the new log', () => appendFile(log, lines(`${isoAgo(0)} ERROR three`)));
    expect((await session.readResource(uri)).text).toMatch(/INFO two\n.*ERROR three$/);
    await listChanged(session, 'a new log in the recreated directory', () => writeFile(path.join(dir, 'new.log'), lines('x')));
  });
});

describe('file watches exhausted', () => {
  /** Checks a server whose every watch is refused: polling delivers, and the log says so once, without paths. */
  async function pollingDelivers(session: SpawnedSession, dir: string): Promise<void> {
    const log = path.join(dir, 'app.log');
    const uri = `logs://file${log}`;
    await session.client.subscribeResource({ uri });
    await session.client.listResources();
    await updated(session, uri, 'an append (polled)', () => appendFile(log, lines(`${isoAgo(0)} ERROR polled`)), 15_000);
    await updated(session, uri, 'a rotation (polled)', async () => {
      await rm(log);
      await writeFile(log, lines(`${isoAgo(0)} INFO rotated`));
    }, 15_000);
    await listChanged(session, 'a new log (listing polled)', () => writeFile(path.join(dir, 'new.log'), lines('x')), 15_000);
    const warnings = session.stderr().split('\n').filter((l) => /Polling/.test(l));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/system limit for file watches was reached \(ENOSPC\)/);
    expect(warnings[0]).not.toContain(dir);
  }

  it('SUITE_WATCH_FAULT=ENOSPC on the built bin: subscriptions and list_changed fall back to polling, and the log says so once', async () => {
    const temp = await makeTempDir('logs-enospc-');
    await writeFile(path.join(temp.dir, 'app.log'), lines(`${isoAgo(1)} INFO start`));
    const session = await spawnServer(BIN, [temp.dir], { env: { SUITE_WATCH_FAULT: 'ENOSPC', SUITE_LOG_LEVEL: 'warning' } });
    spawned = { session, cleanup: temp.cleanup };
    await pollingDelivers(session, temp.dir);
  });

  it("the kernel's own ENOSPC (a user namespace with max_inotify_watches 0) on the built bin: the same", async () => {
    const temp = await makeTempDir('logs-enospc-real-');
    await writeFile(path.join(temp.dir, 'app.log'), lines(`${isoAgo(1)} INFO start`));
    // The limit is lowered in a user namespace of the server's own: a real ENOSPC from inotify, the machine's limit untouched.
    const session = await spawnServer(BIN, [temp.dir], {
      env: { SUITE_LOG_LEVEL: 'warning', SUITE_WATCH_FAULT: undefined },
      launcher: ['unshare', '--user', '--map-root-user', 'sh', '-c', 'echo 0 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"'],
    }).catch(async (error: unknown) => {
      await temp.cleanup();
      // No skip: CI runs on machines like this one, where unprivileged user namespaces work.
      throw new Error(`This test needs util-linux unshare and unprivileged user namespaces (it lowers the inotify limit in one): ${String(error)}`);
    });
    spawned = { session, cleanup: temp.cleanup };
    await pollingDelivers(session, temp.dir);
  });
});
