import { appendFile, copyFile, mkdir, rename, rm, truncate, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

/**
 * Notifications are awaited, never slept for. The hub debounces (150 ms quiet, at most 1 s); the
 * waits allow several seconds so a loaded machine does not fail them. The latency itself is
 * measured by the benchmark.
 */
const WAIT = { timeoutMs: 5000 };

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function expectUpdate(session: TestSession, uri: string, what: string, action: () => Promise<unknown>): Promise<void> {
  const mark = session.mark();
  await action();
  await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { ...WAIT, after: mark }).catch(() => {
    throw new Error(`no notifications/resources/updated for ${uri} after ${what}`);
  });
}

describe.each(TRANSPORTS)('subscriptions (%s)', (transport) => {
  it('a subscribed log that grows is announced, and keeps being announced through rotation and copytruncate', async () => {
    fx = await fixture({ transport });
    const log = await fx.write('app.log', lines(`${isoAgo(1)} INFO start`));
    const uri = `logs://file${log}`;
    const session = await fx.connect();
    await session.client.subscribeResource({ uri });
    await expectUpdate(session, uri, 'an append', () => appendFile(log, lines(`${isoAgo(0)} ERROR first`)));
    expect((await session.readResource(uri)).text).toContain('ERROR first');

    // logrotate "create": renamed away, a new file in its place.
    await expectUpdate(session, uri, 'rename and create', async () => {
      await rename(log, `${log}.1`);
      await writeFile(log, '');
    });
    await expectUpdate(session, uri, 'an append after rotation', () => appendFile(log, lines(`${isoAgo(0)} INFO after rotation`)));
    const rotated = (await session.readResource(uri)).text;
    expect(rotated).toMatch(/INFO after rotation$/);
    expect(rotated).not.toContain('ERROR first');

    // logrotate "copytruncate": copied aside, truncated in place.
    await expectUpdate(session, uri, 'copy and truncate', async () => {
      await copyFile(log, `${log}.2`);
      await truncate(log, 0);
    });
    await expectUpdate(session, uri, 'an append after copytruncate', () => appendFile(log, lines(`${isoAgo(0)} WARN after copytruncate`)));
    expect((await session.readResource(uri)).text).toMatch(/WARN after copytruncate$/);

    // Unsubscribing stops the notifications (and, in process, visibly releases the hub's watch).
    if (transport === 'in-process') expect(fx.changes.activeSubscriptions).toBe(1);
    await session.client.unsubscribeResource({ uri });
    if (transport === 'in-process') expect(fx.changes.activeSubscriptions).toBe(0);
    const mark = session.mark();
    await appendFile(log, lines(`${isoAgo(0)} INFO nobody listens`));
    await new Promise((r) => setTimeout(r, 1000));
    expect(session.notifications.slice(mark).filter((n) => n.method === 'notifications/resources/updated')).toEqual([]);
  });

  it('a filtered view and logs://recent are announced too', async () => {
    fx = await fixture({ transport });
    await mkdir(fx.file('nested/deeper'), { recursive: true });
    const log = await fx.write('nested/deeper/api.log', lines(`${isoAgo(1)} INFO start`));
    const view = `logs://file${log}?level=error`;
    const session = await fx.connect();
    await session.client.subscribeResource({ uri: view });
    await session.client.subscribeResource({ uri: 'logs://recent?timeframe=15m' });
    const mark = session.mark();
    await appendFile(log, lines(`${isoAgo(0)} ERROR nested failure`));
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === view, { ...WAIT, after: mark });
    await session.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'logs://recent?timeframe=15m', { ...WAIT, after: mark });
    expect((await session.readResource('logs://recent?timeframe=15m')).text).toContain('[api.log]');
  });

  it('sends list_changed when log files appear or vanish, not for other files', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines('x'));
    const session = await fx.connect();
    // list_changed follows once the session has listed the resources.
    await session.client.listResources();
    let mark = session.mark();
    await fx.write('new.log', lines('x'));
    await session.waitFor('notifications/resources/list_changed', () => true, { ...WAIT, after: mark });
    expect((await session.client.listResources()).resources.map((r) => r.name)).toContain('new.log');
    mark = session.mark();
    await rm(fx.file('new.log'));
    await session.waitFor('notifications/resources/list_changed', () => true, { ...WAIT, after: mark });
    // A file that is not a log changes nothing in the list: after a quiet while, no notification.
    mark = session.mark();
    await fx.write('notes.txt', 'not a log');
    await new Promise((r) => setTimeout(r, 800));
    expect(session.notifications.slice(mark).filter((n) => n.method === 'notifications/resources/list_changed')).toEqual([]);
    // A rotation adds a log (app.log.1) to the list.
    mark = session.mark();
    await rename(fx.file('app.log'), fx.file('app.log.1'));
    await session.waitFor('notifications/resources/list_changed', () => true, { ...WAIT, after: mark });
  });

  it('a file named on the command line: rotations of it change the list, its neighbours do not', async () => {
    fx = await fixture({ transport, roots: (dir) => ({ files: [`${dir}/app.log`] }) });
    const log = await fx.write('app.log', lines('x'));
    const session = await fx.connect();
    expect((await session.client.listResources()).resources.map((r) => r.name)).toEqual(['recent', 'app.log']);
    let mark = session.mark();
    await fx.write('other.log', lines('x'));
    await new Promise((r) => setTimeout(r, 800));
    expect(session.notifications.slice(mark).filter((n) => n.method === 'notifications/resources/list_changed')).toEqual([]);
    mark = session.mark();
    await rename(log, `${log}.1`);
    await session.waitFor('notifications/resources/list_changed', () => true, { ...WAIT, after: mark });
    // And a subscription to it survives the rotation.
    await writeFile(log, '');
    const uri = `logs://file${log}`;
    await session.client.subscribeResource({ uri });
    await expectUpdate(session, uri, 'an append to the recreated file', () => appendFile(log, lines('y')));
  });
});
