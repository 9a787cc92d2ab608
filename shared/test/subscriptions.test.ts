import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChangeHub, SuiteServer } from '../src/index.js';
import { connectInProcess, makeTempDir, type TestSession } from '../src/testing.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function fileServer(dir: string, hub: ChangeHub, disposed: string[]): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-files', version: '0.0.1', roots: { directories: [dir] }, changes: hub });
  server.resourceTemplate({
    uriTemplate: 'file://{+path}',
    name: 'file',
    read: async (uri) => ({ uri, mimeType: 'text/plain', text: await readFile(fileURLToPath(uri), 'utf8') }),
    subscribe: async (uri, _vars, ctx) => {
      const { real } = await (await ctx.paths()).resolve(fileURLToPath(uri), { mustExist: true });
      return { path: real };
    },
  });
  server.resource({
    uri: 'memo://feed',
    name: 'feed',
    read: async () => ({ uri: 'memo://feed', text: 'feed' }),
    subscribe: async () => ({ dispose: () => void disposed.push('memo://feed') }),
  });
  return server;
}

describe('resource subscriptions', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let hub: ChangeHub;
  let disposed: string[];
  const sessions: TestSession[] = [];

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    hub = new ChangeHub({ debounceMs: 100 });
    disposed = [];
    await writeFile(path.join(dir, 'notes.txt'), 'v1');
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.close();
    await hub.close();
    await cleanup();
  });

  async function open(): Promise<TestSession> {
    const s = await connectInProcess(fileServer(dir, hub, disposed));
    sessions.push(s);
    return s;
  }

  it('sends exactly one updated notification per change, and none after unsubscribe', async () => {
    const s = await open();
    const uri = pathToFileURL(path.join(dir, 'notes.txt')).href;
    await s.client.subscribeResource({ uri });
    await sleep(150); // let the watcher settle
    const started = Date.now();
    const arrived = s.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 1000);
    await writeFile(path.join(dir, 'notes.txt'), 'v2');
    await arrived;
    expect(Date.now() - started).toBeLessThan(1000);
    await sleep(700);
    expect(s.received('notifications/resources/updated')).toHaveLength(1);

    await s.client.unsubscribeResource({ uri });
    await writeFile(path.join(dir, 'notes.txt'), 'v3');
    await sleep(800);
    expect(s.received('notifications/resources/updated')).toHaveLength(1);
    expect(hub.watchedPaths).toEqual([]);
  });

  it('keeps following a file that is replaced by an atomic rename, as editors and write_file do', async () => {
    const s = await open();
    const file = path.join(dir, 'notes.txt');
    const uri = pathToFileURL(file).href;
    await s.client.subscribeResource({ uri });
    await sleep(150);
    for (const version of ['renamed 1', 'renamed 2']) {
      const before = s.received('notifications/resources/updated').length;
      await writeFile(`${file}.tmp`, version);
      await rename(`${file}.tmp`, file);
      await expect.poll(() => s.received('notifications/resources/updated').length, { timeout: 1500, interval: 20 }).toBe(before + 1);
      await sleep(400);
    }
    expect(s.received('notifications/resources/updated')).toHaveLength(2);
  });

  it('is watching by the time subscribe returns: an immediate change is not missed', async () => {
    for (let i = 0; i < 3; i++) {
      const s = await open();
      const file = path.join(dir, `immediate-${i}.txt`);
      await writeFile(file, 'v1');
      const uri = pathToFileURL(file).href;
      await s.client.subscribeResource({ uri });
      expect(hub.isWatching(file)).toBe(true);
      await writeFile(file, 'v2');
      await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 1500);
    }
  });

  it('watches every path of a multi-file source', async () => {
    const server = new SuiteServer({ name: '@suite/server-db', version: '0.0.1', changes: hub });
    const db = path.join(dir, 'app.db');
    await writeFile(db, 'main');
    await writeFile(`${db}-wal`, 'wal');
    server.resource({ uri: 'db://app/schema', name: 'schema', read: async () => ({ uri: 'db://app/schema', text: '' }), subscribe: async () => ({ paths: [db, `${db}-wal`] }) });
    const s = await connectInProcess(server);
    sessions.push(s);
    await s.client.subscribeResource({ uri: 'db://app/schema' });
    expect(hub.watchedPaths.sort()).toEqual([db, `${db}-wal`]);
    await writeFile(`${db}-wal`, 'wal grew');
    await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'db://app/schema', 1500);
    await s.client.unsubscribeResource({ uri: 'db://app/schema' });
    expect(hub.watchedPaths).toEqual([]);
  });

  it('subscribes at once to a path that does not exist yet, and reports when it appears', async () => {
    const server = new SuiteServer({ name: '@suite/server-db', version: '0.0.1', changes: hub });
    const wal = path.join(dir, 'later.db-wal');
    server.resource({ uri: 'db://later', name: 'later', read: async () => ({ uri: 'db://later', text: '' }), subscribe: async () => ({ paths: [wal] }) });
    const s = await connectInProcess(server);
    sessions.push(s);
    const started = Date.now();
    await s.client.subscribeResource({ uri: 'db://later' });
    expect(Date.now() - started).toBeLessThan(1000);
    await sleep(200);
    await writeFile(wal, 'appeared');
    await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'db://later', 2000);
  });

  it('coalesces a burst of writes into one notification', async () => {
    const s = await open();
    const uri = pathToFileURL(path.join(dir, 'notes.txt')).href;
    await s.client.subscribeResource({ uri });
    await sleep(150);
    for (let i = 0; i < 5; i++) {
      await writeFile(path.join(dir, 'notes.txt'), `burst ${i}`);
      await sleep(10);
    }
    await sleep(800);
    expect(s.received('notifications/resources/updated')).toHaveLength(1);
  });

  it('counts subscribers across sessions and releases everything when sessions close', async () => {
    const a = await open();
    const b = await open();
    const uri = pathToFileURL(path.join(dir, 'notes.txt')).href;
    await a.client.subscribeResource({ uri });
    await b.client.subscribeResource({ uri });
    expect(hub.activeSubscriptions).toBe(1);
    expect(hub.watchedPaths).toEqual([path.join(dir, 'notes.txt')]);
    await sleep(150);
    await writeFile(path.join(dir, 'notes.txt'), 'both');
    await Promise.all([a.waitFor('notifications/resources/updated'), b.waitFor('notifications/resources/updated')]);

    await a.close();
    sessions.splice(sessions.indexOf(a), 1);
    expect(hub.watchedPaths).toHaveLength(1);
    await b.close();
    sessions.splice(sessions.indexOf(b), 1);
    expect(hub.activeSubscriptions).toBe(0);
    expect(hub.watchedPaths).toEqual([]);
  });

  it('lets non-file sources publish, and disposes them with the last subscriber', async () => {
    const s = await open();
    await s.client.subscribeResource({ uri: 'memo://feed' });
    hub.publish('memo://feed');
    await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'memo://feed', 1000);
    await s.client.unsubscribeResource({ uri: 'memo://feed' });
    expect(disposed).toEqual(['memo://feed']);
  });

  it('broadcasts list_changed to every session', async () => {
    const a = await open();
    const b = await open();
    hub.publishListChanged();
    await Promise.all([a.waitFor('notifications/resources/list_changed'), b.waitFor('notifications/resources/list_changed')]);
  });

  it('answers a subscription to an unknown resource with a protocol error', async () => {
    const s = await open();
    await expect(s.client.subscribeResource({ uri: 'nope://x' })).rejects.toMatchObject({ code: -32002 });
  });

  it('refuses to watch a path outside the roots', async () => {
    const s = await open();
    await expect(s.client.subscribeResource({ uri: 'file:///etc/hostname' })).rejects.toMatchObject({ code: -32003, message: expect.stringMatching(/^MCP error -32003: Access denied/) });
    expect(hub.watchedPaths).toEqual([]);
  });
});
