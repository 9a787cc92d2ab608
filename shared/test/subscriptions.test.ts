import { execFile } from 'node:child_process';
import { appendFile, copyFile, mkdir, readFile, rename, rm, truncate, unlink, writeFile } from 'node:fs/promises';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ChangeHub, Logger, SuiteServer, ToolError, fileSignature, type ChangeContext, type ChangeSource, type LogLevel } from '../src/index.js';
import { connectInProcess, makeTempDir, waitUntil, type TestSession } from '@suite/test-kit';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A tool that announces what it "changed" the way a server's own write does: through ctx.changes. */
function announceTool(server: SuiteServer): void {
  server.tool({
    name: 'announce',
    description: 'Announces a change.',
    input: z.object({ uri: z.string().optional() }),
    annotations: { title: 'Announce', readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: async ({ uri }, ctx) => {
      if (uri) ctx.changes.resourceUpdated(uri);
      else ctx.changes.resourceListChanged();
      return 'announced';
    },
  });
}

function fileServer(dir: string, hub: ChangeHub | undefined, disposed: string[]): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-files', version: '0.0.1', roots: { directories: [dir] }, ...(hub ? { changes: hub } : {}) });
  announceTool(server);
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
    // Five writes back to back, each its own file event: written synchronously, so a loaded machine
    // cannot stretch the burst past the debounce (with awaits between them it once took two windows).
    for (let i = 0; i < 5; i++) writeFileSync(path.join(dir, 'notes.txt'), `burst ${i}`);
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

  it('lets a handler announce its own changes through ctx.changes: updates to subscribers, the list change to every session', async () => {
    const a = await open();
    const b = await open();
    await b.client.subscribeResource({ uri: 'memo://feed' });
    const mark = [a.mark(), b.mark()];
    expect((await a.callTool('announce', { uri: 'memo://feed' })).text).toBe('announced');
    await b.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'memo://feed', { timeoutMs: 2000, after: mark[1] });
    await a.callTool('announce');
    await Promise.all([a, b].map((s, i) => s.waitFor('notifications/resources/list_changed', undefined, { timeoutMs: 2000, after: mark[i] })));
    // a did not subscribe: it hears the list change, not the update.
    expect(a.notifications.slice(mark[0]).map((n) => n.method)).not.toContain('notifications/resources/updated');

    // Without a hub there is nothing to subscribe to, and the only session to tell is the caller's.
    const alone = await connectInProcess(fileServer(dir, undefined, disposed));
    sessions.push(alone);
    await alone.callTool('announce');
    await alone.waitFor('notifications/resources/list_changed', undefined, 2000);
    expect((await alone.callTool('announce', { uri: 'memo://feed' })).isError).toBe(false);
  });

  it('answers a subscription to an unknown resource with a protocol error', async () => {
    const s = await open();
    await expect(s.client.subscribeResource({ uri: 'nope://x' })).rejects.toMatchObject({ code: -32602 });
  });

  it('refuses to watch a path outside the roots', async () => {
    const s = await open();
    await expect(s.client.subscribeResource({ uri: 'file:///etc/hostname' })).rejects.toMatchObject({ code: -32003, message: expect.stringMatching(/^MCP error -32003: Access denied/) });
    expect(hub.watchedPaths).toEqual([]);
  });
});

const runFile = promisify(execFile);

/** A server whose fixed resources follow whatever source each setup returns. */
function probeServer(hub: ChangeHub, sources: Record<string, (change: ChangeContext) => Promise<ChangeSource | undefined>>): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-probe', version: '0.0.1', changes: hub });
  for (const [uri, setup] of Object.entries(sources)) {
    server.resource({ uri, name: uri, read: async () => ({ uri, text: '' }), subscribe: async (_ctx, change) => setup(change) });
  }
  return server;
}

function updatesFor(s: TestSession, uri: string): number {
  return s.received('notifications/resources/updated').filter((n) => n.params?.uri === uri).length;
}

/** Waits until no notification at all has arrived for `ms` (so the next step's count starts clean). */
async function quiet(s: TestSession, ms = 400): Promise<void> {
  for (;;) {
    const seen = s.notifications.length;
    await sleep(ms);
    if (s.notifications.length === seen) return;
  }
}

/** Does `act` and waits (generously) for at least one resources/updated for `uri`, then for quiet. */
async function expectUpdate(s: TestSession, uri: string, what: string, act: () => Promise<unknown>): Promise<void> {
  const before = updatesFor(s, uri);
  await act();
  await waitUntil(() => updatesFor(s, uri) > before, { what: `resources/updated after ${what}`, timeoutMs: 8000 });
  await quiet(s);
}

/** Captures what a hub logs (protocol side) while keeping stderr for real failures. */
function capturingLogger(): { log: Logger; lines: { level: LogLevel; text: string }[] } {
  const lines: { level: LogLevel; text: string }[] = [];
  const log = new Logger('changes');
  log.attach((level, _logger, data) => lines.push({ level, text: typeof data === 'string' ? data : JSON.stringify(data) }));
  return { log, lines };
}

describe('change sources', { timeout: 60_000 }, () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let hub: ChangeHub;
  const sessions: TestSession[] = [];
  const stderrLevel = Logger.getStderrLevel();

  beforeEach(async () => {
    ({ dir, cleanup } = await makeTempDir());
    hub = new ChangeHub({ debounceMs: 100 });
  });
  afterEach(async () => {
    Logger.setStderrLevel(stderrLevel);
    for (const s of sessions.splice(0)) await s.close();
    await hub.close();
    await cleanup();
  });

  async function connect(server: SuiteServer): Promise<TestSession> {
    const s = await connectInProcess(server);
    sessions.push(s);
    return s;
  }

  it("answers resources/subscribe only once a source's own 'armed' has settled, and fails it when armed rejects", async () => {
    let arm: () => void = () => undefined;
    let armedAt = 0;
    const server = new SuiteServer({ name: '@suite/server-probe', version: '0.0.1', changes: hub });
    server.resourceTemplate({
      uriTemplate: 'feed://armed/{name}',
      name: 'armed',
      read: async (uri) => ({ uri, text: '' }),
      subscribe: async (_uri, { name }) => {
        if (name === 'broken') return { armed: Promise.reject(new ToolError('The feed cannot be reached.', 'unavailable')) };
        return { armed: new Promise<void>((resolve) => (arm = () => ((armedAt = Date.now()), resolve()))) };
      },
    });
    const s = await connect(server);
    const subscribed = s.client.subscribeResource({ uri: 'feed://armed/jobs' }).then(() => Date.now());
    await sleep(300);
    arm();
    // The answer came after the source said it was armed, not when setup returned.
    expect(await subscribed).toBeGreaterThanOrEqual(armedAt);
    await expect(s.client.subscribeResource({ uri: 'feed://armed/broken' })).rejects.toThrow(/cannot be reached/);
    expect(hub.activeSubscriptions).toBe(1);
  });

  it('makes a later holder of a listing wait until the listing is armed: a file created right after its watchListing returns is announced', async () => {
    let changes = 0;
    hub.addSession('b', { resourceUpdated: () => undefined, listChanged: () => (changes += 1) });
    void hub.watchListing('a', 'listing', [dir]);
    // The second holder arrives while the first is still arming, and creates a file the moment it returns.
    await hub.watchListing('b', 'listing', [dir]);
    await writeFile(path.join(dir, 'created-right-after.txt'), 'x');
    await waitUntil(() => changes > 0, { what: 'list_changed for a file created right after watchListing returned', timeoutMs: 5000 });
    await hub.removeSession('a');
    await hub.removeSession('b');
  });

  it('hands setup a ChangeContext: a source publishes through it, and a late publish reaches nobody', async () => {
    const contexts: ChangeContext[] = [];
    const server = new SuiteServer({ name: '@suite/server-probe', version: '0.0.1', changes: hub });
    server.resource({
      uri: 'feed://fixed',
      name: 'fixed',
      read: async () => ({ uri: 'feed://fixed', text: '' }),
      subscribe: async (_ctx, change) => {
        contexts.push(change);
        return {};
      },
    });
    server.resourceTemplate({
      uriTemplate: 'feed://channel/{name}',
      name: 'channel',
      read: async (uri) => ({ uri, text: '' }),
      subscribe: async (_uri, _variables, _ctx, change) => {
        contexts.push(change);
        return {};
      },
    });
    const s = await connect(server);
    await s.client.subscribeResource({ uri: 'feed://fixed' });
    await s.client.subscribeResource({ uri: 'feed://channel/jobs' });
    expect(contexts.map((c) => c.uri)).toEqual(['feed://fixed', 'feed://channel/jobs']);

    contexts[1]!.publish();
    contexts[1]!.publish();
    await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'feed://channel/jobs', 5000);
    await quiet(s);
    expect(s.received('notifications/resources/updated').map((n) => n.params?.uri)).toEqual(['feed://channel/jobs']);

    await s.client.unsubscribeResource({ uri: 'feed://channel/jobs' });
    await s.client.subscribeResource({ uri: 'feed://channel/jobs' });
    // The first subscription's context is stale: it must not publish into the second one.
    contexts[1]!.publish();
    await sleep(500);
    expect(s.received('notifications/resources/updated')).toHaveLength(1);
    contexts[2]!.publish();
    await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'feed://channel/jobs' && s.received('notifications/resources/updated').length === 2, 5000);
  });

  it('follows a log file through appends, logrotate create-mode rotation and copytruncate, and keeps following afterwards', async () => {
    const log = path.join(dir, 'app.log');
    await writeFile(log, 'line 1\n');
    const uri = 'log://app';
    const s = await connect(probeServer(hub, { [uri]: async () => ({ path: log }) }));
    await s.client.subscribeResource({ uri });

    await expectUpdate(s, uri, 'an append', () => appendFile(log, 'line 2\n'));
    // logrotate "create": the file is renamed away and a new one created in its place.
    await expectUpdate(s, uri, 'rename and create', async () => {
      await rename(log, `${log}.1`);
      await writeFile(log, '');
    });
    await expectUpdate(s, uri, 'an append after rotation', () => appendFile(log, 'line 3\n'));
    await expectUpdate(s, uri, 'a second append after rotation', () => appendFile(log, 'line 4\n'));

    // The path is followed, not the inode: the rotated file growing is not a change of app.log.
    const before = updatesFor(s, uri);
    await appendFile(`${log}.1`, 'late line from a writer that has not reopened\n');
    await quiet(s, 600);
    expect(updatesFor(s, uri)).toBe(before);

    // A rotation that leaves the path missing for a while: both the removal and the return count.
    await expectUpdate(s, uri, 'rotation leaving no file', () => rename(log, `${log}.2`));
    expect(hub.isWatching(log)).toBe(true);
    await expectUpdate(s, uri, 'the file coming back', () => writeFile(log, 'fresh\n'));
    await expectUpdate(s, uri, 'an append to the new file', () => appendFile(log, 'line 5\n'));

    // logrotate "copytruncate": copied aside, then truncated in place (same inode).
    await expectUpdate(s, uri, 'copy and truncate', async () => {
      await copyFile(log, `${log}.3`);
      await truncate(log, 0);
    });
    await expectUpdate(s, uri, 'an append after copytruncate', () => appendFile(log, 'line 6\n'));
    await expectUpdate(s, uri, 'a second append after copytruncate', () => appendFile(log, 'line 7\n'));
  });

  it("fires for a write anywhere under a real repository's .git/refs tree, and for packed-refs and HEAD as paths of the same source", async () => {
    const repo = path.join(dir, 'repo');
    await mkdir(repo);
    const env = {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 'Suite Test',
      GIT_AUTHOR_EMAIL: 'test@example.com',
      GIT_COMMITTER_NAME: 'Suite Test',
      GIT_COMMITTER_EMAIL: 'test@example.com',
    };
    const git = async (...args: string[]): Promise<void> => {
      await runFile('git', ['-c', 'gc.auto=0', '-c', 'commit.gpgsign=false', ...args], { cwd: repo, env });
    };
    await git('init', '--quiet', '--initial-branch=main');
    await git('commit', '--quiet', '--allow-empty', '-m', 'first');

    const refs = path.join(repo, '.git', 'refs');
    const packedRefs = path.join(repo, '.git', 'packed-refs');
    const head = path.join(repo, '.git', 'HEAD');
    const uri = 'git://repo/refs';
    const s = await connect(probeServer(hub, { [uri]: async () => ({ trees: [refs], paths: [packedRefs, head] }) }));
    await s.client.subscribeResource({ uri });
    expect(hub.watchedTrees).toEqual([refs]);
    expect(hub.watchedPaths.sort()).toEqual([head, packedRefs]);
    expect(hub.isWatching(refs)).toBe(true);
    // packed-refs does not exist yet, and is followed all the same.
    expect(hub.isWatching(packedRefs)).toBe(true);

    await expectUpdate(s, uri, 'a commit (refs/heads/main via lockfile and rename)', () => git('commit', '--quiet', '--allow-empty', '-m', 'second'));
    await expectUpdate(s, uri, 'git branch feature/deep/x (new directories two levels down)', () => git('branch', 'feature/deep/x'));
    await expectUpdate(s, uri, 'git update-ref of the deep branch', () => git('update-ref', 'refs/heads/feature/deep/x', 'HEAD~1'));
    await expectUpdate(s, uri, 'git update-ref refs/tags/v1', () => git('update-ref', 'refs/tags/v1', 'HEAD'));
    // Only .git/HEAD changes here: the paths of the source, not the tree, must report it.
    await expectUpdate(s, uri, 'git symbolic-ref HEAD', () => git('symbolic-ref', 'HEAD', 'refs/heads/feature/deep/x'));
    await expectUpdate(s, uri, 'git pack-refs (packed-refs appears)', () => git('pack-refs', '--all'));
    await expect(readFile(packedRefs, 'utf8')).resolves.toContain('refs/tags/v1');

    await s.client.unsubscribeResource({ uri });
    expect(hub.watchedTrees).toEqual([]);
    expect(hub.watchedPaths).toEqual([]);
  });

  it('reports HEAD alone: a path of a tree source is followed without the tree', async () => {
    // The same repository layout, checked without git: only the HEAD path can report this change.
    const gitDir = path.join(dir, '.git');
    await mkdir(path.join(gitDir, 'refs', 'heads'), { recursive: true });
    await writeFile(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    const uri = 'git://layout/refs';
    const s = await connect(probeServer(hub, { [uri]: async () => ({ trees: [path.join(gitDir, 'refs')], paths: [path.join(gitDir, 'HEAD')] }) }));
    await s.client.subscribeResource({ uri });
    await expectUpdate(s, uri, 'HEAD replaced through HEAD.lock', async () => {
      await writeFile(path.join(gitDir, 'HEAD.lock'), 'ref: refs/heads/other\n');
      await rename(path.join(gitDir, 'HEAD.lock'), path.join(gitDir, 'HEAD'));
    });
    const before = updatesFor(s, uri);
    await writeFile(path.join(gitDir, 'description'), 'not followed\n');
    await quiet(s, 600);
    expect(updatesFor(s, uri)).toBe(before);
  });

  it('polls an HTTP API by its ETag: one notification per change, none while it stays, polling stops with the last subscriber', async () => {
    let version = 1;
    let gone = false;
    let hits = 0;
    const api: Server = createServer((_req, res) => {
      hits++;
      if (gone) {
        res.statusCode = 404;
        res.end();
        return;
      }
      res.setHeader('ETag', `"v${version}"`);
      res.end(`version ${version}`);
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}/status`;
      const uri = 'api://status';
      const s = await connect(
        probeServer(hub, {
          [uri]: async () => ({
            poll: {
              intervalMs: 50,
              signature: async () => {
                const response = await fetch(url, { method: 'HEAD' });
                return response.headers.get('etag') ?? undefined;
              },
            },
          }),
        }),
      );
      await s.client.subscribeResource({ uri });
      // The first signature is taken before subscribe returns.
      expect(hits).toBeGreaterThanOrEqual(1);
      expect(hub.activePollers).toBe(1);

      let seen = hits;
      await waitUntil(() => hits >= seen + 5, { what: 'five more polls' });
      expect(updatesFor(s, uri)).toBe(0);

      version = 2;
      await s.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 8000);
      seen = hits;
      await waitUntil(() => hits >= seen + 5, { what: 'five more polls after the change' });
      await quiet(s);
      expect(updatesFor(s, uri)).toBe(1);

      gone = true;
      await waitUntil(() => updatesFor(s, uri) === 2, { what: 'the resource going away (no ETag)', timeoutMs: 8000 });
      seen = hits;
      await waitUntil(() => hits >= seen + 5, { what: 'five more polls while gone' });
      expect(updatesFor(s, uri)).toBe(2);

      await s.client.unsubscribeResource({ uri });
      expect(hub.activePollers).toBe(0);
      const atUnsubscribe = hits;
      await sleep(600);
      // At most the one request that was already on its way.
      expect(hits).toBeLessThanOrEqual(atUnsubscribe + 1);
    } finally {
      api.closeAllConnections();
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('polls a file with fileSignature: a write, a removal and a re-creation each publish', async () => {
    const file = path.join(dir, 'remote-mount.txt');
    await writeFile(file, 'one');
    const uri = 'nfs://file';
    const s = await connect(probeServer(hub, { [uri]: async () => ({ poll: { intervalMs: 50, signature: () => fileSignature(file) } }) }));
    await s.client.subscribeResource({ uri });
    await expectUpdate(s, uri, 'a same-size write', () => writeFile(file, 'two'));
    await expectUpdate(s, uri, 'a removal', () => unlink(file));
    await expectUpdate(s, uri, 'a re-creation', () => writeFile(file, 'three'));
  });

  it('fileSignature changes with size, time and inode, and is undefined for a missing file', async () => {
    const file = path.join(dir, 'sig.txt');
    await expect(fileSignature(file)).resolves.toBeUndefined();
    await writeFile(file, 'abc');
    const first = await fileSignature(file);
    expect(first).toMatch(/^3:\d+:\d+:\d+$/);
    await expect(fileSignature(file)).resolves.toBe(first);
    await writeFile(file, 'abcd');
    const grown = await fileSignature(file);
    expect(grown).not.toBe(first);
    await writeFile(`${file}.tmp`, 'abcd');
    await rename(`${file}.tmp`, file);
    expect(await fileSignature(file)).not.toBe(grown);
    await unlink(file);
    await expect(fileSignature(file)).resolves.toBeUndefined();
  });

  it('keeps poll timers out of the way: unref\'d, and gone with the last subscriber', async () => {
    const file = path.join(dir, 'polled.txt');
    await writeFile(file, 'x');
    // Timers that keep the event loop alive; an unref'd timer is not among them.
    const refTimers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await waitUntil(() => refTimers() === 0, { what: 'timers of earlier tests to run out' });
    await hub.subscribe('a', 'poll://x', async () => ({ poll: { intervalMs: 20, signature: () => fileSignature(file) } }));
    await hub.subscribe('b', 'poll://x', async () => {
      throw new Error('a second subscriber shares the first one’s source');
    });
    expect(hub.activePollers).toBe(1);
    // The poll timer is pending nearly all the time: a ref'd one would show in these samples.
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      await sleep(15);
      samples.push(refTimers());
    }
    expect(samples).toEqual(new Array(10).fill(0));
    await hub.unsubscribe('a', 'poll://x');
    expect(hub.activePollers).toBe(1);
    await hub.unsubscribe('b', 'poll://x');
    expect(hub.activePollers).toBe(0);
    expect(hub.activeSubscriptions).toBe(0);
  });

  it('refuses a poll source that would spin, and releases a source whose first signature fails', async () => {
    const disposed: string[] = [];
    await expect(hub.subscribe('a', 'poll://fast', async () => ({ poll: { intervalMs: 0, signature: async () => 'x' } }))).rejects.toThrow(/at least 10/);
    await expect(
      hub.subscribe('a', 'poll://down', async () => ({
        path: path.join(dir, 'also-held.txt'),
        poll: {
          intervalMs: 50,
          signature: async () => {
            throw new Error('upstream unavailable');
          },
        },
        dispose: () => void disposed.push('poll://down'),
      })),
    ).rejects.toThrow(/upstream unavailable/);
    expect(disposed).toEqual(['poll://down']);
    expect(hub.activeSubscriptions).toBe(0);
    expect(hub.activePollers).toBe(0);
    expect(hub.watchedPaths).toEqual([]);
  });

  it('keeps delivering when a watched directory is removed and created again (directory path and tree)', async () => {
    const spool = path.join(dir, 'spool');
    const tree = path.join(dir, 'tree');
    await mkdir(spool);
    await mkdir(path.join(tree, 'a'), { recursive: true });
    const s = await connect(probeServer(hub, { 'dir://spool': async () => ({ path: spool }), 'tree://t': async () => ({ trees: [tree] }) }));
    await s.client.subscribeResource({ uri: 'dir://spool' });
    await s.client.subscribeResource({ uri: 'tree://t' });

    await expectUpdate(s, 'dir://spool', 'a child appearing', () => writeFile(path.join(spool, 'job-1'), '1'));
    await expectUpdate(s, 'dir://spool', 'the directory removed', () => rm(spool, { recursive: true }));
    await expectUpdate(s, 'dir://spool', 'the directory created again', () => mkdir(spool));
    await expectUpdate(s, 'dir://spool', 'a child of the new directory', () => writeFile(path.join(spool, 'job-2'), '2'));
    await expectUpdate(s, 'dir://spool', 'a child of the new directory changing', () => appendFile(path.join(spool, 'job-2'), 'more'));

    await expectUpdate(s, 'tree://t', 'a deep write', () => writeFile(path.join(tree, 'a', 'f'), '1'));
    await expectUpdate(s, 'tree://t', 'the tree removed', () => rm(tree, { recursive: true }));
    await expectUpdate(s, 'tree://t', 'the tree created again, deeper', () => mkdir(path.join(tree, 'b', 'c'), { recursive: true }));
    expect(hub.isWatching(tree)).toBe(true);
    await expectUpdate(s, 'tree://t', 'a write deep in the new tree', () => writeFile(path.join(tree, 'b', 'c', 'g'), '1'));
    await expectUpdate(s, 'tree://t', 'a second write deep in the new tree', () => appendFile(path.join(tree, 'b', 'c', 'g'), '2'));
  });

  it("keeps following a file whose directory is removed and created again, and a path whose parents do not exist yet", async () => {
    const logs = path.join(dir, 'logs');
    const file = path.join(logs, 'today.log');
    const later = path.join(dir, 'not', 'yet', 'there.txt');
    await mkdir(logs);
    await writeFile(file, 'a');
    const s = await connect(probeServer(hub, { 'log://today': async () => ({ path: file }), 'file://later': async () => ({ path: later }) }));
    await s.client.subscribeResource({ uri: 'log://today' });
    await s.client.subscribeResource({ uri: 'file://later' });
    expect(hub.isWatching(later)).toBe(true);

    await expectUpdate(s, 'log://today', 'its directory removed', () => rm(logs, { recursive: true }));
    await expectUpdate(s, 'log://today', 'directory and file back', async () => {
      await mkdir(logs);
      await writeFile(file, 'b');
    });
    await expectUpdate(s, 'log://today', 'an append', () => appendFile(file, 'c'));

    await mkdir(path.join(dir, 'not', 'yet'), { recursive: true });
    await expectUpdate(s, 'file://later', 'the file appearing two directories down', () => writeFile(later, 'here'));
    await expectUpdate(s, 'file://later', 'a write to it', () => appendFile(later, ' and more'));
  });

  it('a listing watch keeps announcing files appearing and vanishing after its directory is removed and created again', async () => {
    const root = path.join(dir, 'listed');
    await mkdir(root);
    const server = probeServer(hub, { 'probe://listing': async () => undefined });
    const s = await connect(server);
    await hub.watchListing(server.sessionId, 'listing', [root], { depth: 2 });
    const listChanges = (): number => s.received('notifications/resources/list_changed').length;
    const expectListChange = async (what: string, act: () => Promise<unknown>): Promise<void> => {
      const before = listChanges();
      await act();
      await waitUntil(() => listChanges() > before, { what: `list_changed after ${what}`, timeoutMs: 8000 });
      await quiet(s);
    };
    await expectListChange('a file appearing', () => writeFile(path.join(root, 'a.txt'), '1'));
    await expectListChange('the directory removed', () => rm(root, { recursive: true }));
    await expectListChange('the directory created again with a file in it', async () => {
      await mkdir(root);
      await writeFile(path.join(root, 'b.txt'), '1');
    });
    await expectListChange('a file appearing in the new directory', () => writeFile(path.join(root, 'c.txt'), '1'));
    await expectListChange('a file vanishing from it', () => unlink(path.join(root, 'b.txt')));
    await hub.unwatchListing(server.sessionId, 'listing');
  });

  it('counts a tree once across sessions and releases it with the last one', async () => {
    const tree = path.join(dir, 'shared-tree');
    await mkdir(tree);
    const server = (): SuiteServer => probeServer(hub, { 'tree://shared': async () => ({ trees: [tree] }), 'tree://alias': async () => ({ trees: [`${tree}/`] }) });
    const a = await connect(server());
    const b = await connect(server());
    await a.client.subscribeResource({ uri: 'tree://shared' });
    await b.client.subscribeResource({ uri: 'tree://shared' });
    await b.client.subscribeResource({ uri: 'tree://alias' });
    expect(hub.activeSubscriptions).toBe(2);
    expect(hub.watchedTrees).toEqual([tree]);
    await writeFile(path.join(tree, 'x'), '1');
    await Promise.all([
      a.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'tree://shared', 8000),
      b.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'tree://shared', 8000),
      b.waitFor('notifications/resources/updated', (n) => n.params?.uri === 'tree://alias', 8000),
    ]);
    await a.close();
    sessions.splice(sessions.indexOf(a), 1);
    expect(hub.watchedTrees).toEqual([tree]);
    await b.close();
    sessions.splice(sessions.indexOf(b), 1);
    expect(hub.watchedTrees).toEqual([]);
    expect(hub.activeSubscriptions).toBe(0);
  });

  it('lets a server observe a source for itself: each session\'s handler runs, nothing reaches the client, released with the last', async () => {
    const watched = path.join(dir, 'observed');
    await mkdir(watched);
    const servers = [new SuiteServer({ name: '@suite/server-observe', version: '0.0.1', changes: hub }), new SuiteServer({ name: '@suite/server-observe', version: '0.0.1', changes: hub })];
    const calls = [0, 0];
    let setups = 0;
    // Built before connect: observing starts once the session is connected.
    const pending = servers.map((server, i) =>
      server.observe('listing', async () => {
        setups++;
        return { paths: [watched] };
      }, () => calls[i]!++),
    );
    const [a, b] = [await connect(servers[0]!), await connect(servers[1]!)];
    const [, releaseB] = await Promise.all(pending);
    expect(setups).toBe(1);
    expect(hub.activeObservers).toBe(1);
    expect(hub.activeSubscriptions).toBe(0);
    await writeFile(path.join(watched, 'new-entry'), 'x');
    await waitUntil(() => calls[0] === 1 && calls[1] === 1, { what: 'both handlers to run once', timeoutMs: 8000 });
    expect([...a.notifications, ...b.notifications].filter((n) => n.method.startsWith('notifications/resources'))).toEqual([]);
    // One session leaving keeps the source for the other; the other letting go releases it.
    await a.close();
    sessions.splice(sessions.indexOf(a), 1);
    expect(hub.watchedPaths).toEqual([watched]);
    await releaseB!();
    expect(hub.activeObservers).toBe(0);
    expect(hub.watchedPaths).toEqual([]);
    await writeFile(path.join(watched, 'later'), 'x');
    await sleep(500);
    expect(calls).toEqual([1, 1]);
    // Without a hub, observing is a no-op, not an error.
    const release = await new SuiteServer({ name: '@suite/server-observe', version: '0.0.1' }).observe('x', async () => ({ paths: [watched] }), () => undefined);
    await release();
  });

  describe('when watches run out', () => {
    async function fallbackScenario(faulty: ChangeHub, lines: { level: LogLevel; text: string }[], code: string): Promise<void> {
      const file = path.join(dir, 'watched.txt');
      const other = path.join(dir, 'other.txt');
      const tree = path.join(dir, 'deep');
      await writeFile(file, 'a');
      await writeFile(other, 'a');
      await mkdir(path.join(tree, 'x', 'y'), { recursive: true });
      const s = await connect(
        probeServer(faulty, {
          'file://watched': async () => ({ path: file }),
          'file://other': async () => ({ paths: [other] }),
          'tree://deep': async () => ({ trees: [tree] }),
        }),
      );
      await s.client.subscribeResource({ uri: 'file://watched' });
      await s.client.subscribeResource({ uri: 'file://other' });
      await s.client.subscribeResource({ uri: 'tree://deep' });
      for (const p of [file, other, tree]) {
        expect(faulty.isPolling(p)).toBe(true);
        expect(faulty.isWatching(p)).toBe(false);
      }
      expect(faulty.activePollers).toBe(3);

      await expectUpdate(s, 'file://watched', 'a write to a polled file', () => writeFile(file, 'bb'));
      await expectUpdate(s, 'file://other', 'a write to another polled file', () => appendFile(other, 'b'));
      await expectUpdate(s, 'tree://deep', 'a deep write in a polled tree', () => writeFile(path.join(tree, 'x', 'y', 'z'), '1'));
      await expectUpdate(s, 'file://watched', 'the polled file replaced', async () => {
        await writeFile(`${file}.tmp`, 'cc');
        await rename(`${file}.tmp`, file);
      });

      const warnings = lines.filter((l) => l.level === 'warning');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.text).toContain(code);
      expect(warnings[0]!.text).toMatch(/Polling subscribed files every 50 ms/);
      // The paths stay out of what a client could see.
      expect(warnings[0]!.text).not.toContain(dir);

      for (const uri of ['file://watched', 'file://other', 'tree://deep']) await s.client.unsubscribeResource({ uri });
      expect(faulty.activePollers).toBe(0);
      expect(faulty.watchedPaths).toEqual([]);
    }

    it('falls back to polling on ENOSPC (fault seam: the watchFault option), and says so once', async () => {
      Logger.setStderrLevel('error');
      const { log, lines } = capturingLogger();
      const faulty = new ChangeHub({ debounceMs: 100, fallbackPollMs: 50, watchFault: 'ENOSPC', log });
      try {
        await fallbackScenario(faulty, lines, 'ENOSPC');
      } finally {
        await faulty.close();
      }
    });

    it("falls back on the kernel's own ENOSPC, at the start and mid-life (a user namespace with a 6-watch limit)", async () => {
      // The limit is lowered in a user namespace of a child process: a real ENOSPC from inotify,
      // and the machine's own limit (shared with every other process) untouched.
      const { build } = await import('esbuild');
      const bundle = path.join(dir, 'watch-limit-child.mjs');
      await build({
        entryPoints: [fileURLToPath(new URL('./fixtures/watch-limit-child.ts', import.meta.url))],
        outfile: bundle,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        external: ['chokidar'],
        logLevel: 'warning',
      });
      const work = path.join(dir, 'work');
      await mkdir(work);
      const env = { ...process.env };
      delete env.SUITE_WATCH_FAULT;
      const script = 'echo 6 > /proc/sys/user/max_inotify_watches && exec "$0" "$@"';
      const { stdout } = await runFile('unshare', ['--user', '--map-root-user', 'sh', '-c', script, process.execPath, bundle, work], { env, timeout: 90_000 }).catch(
        (error: unknown) => {
          throw new Error(`This test needs util-linux unshare and user namespaces (it lowers the inotify limit in one): ${String(error)}`);
        },
      );
      const report = JSON.parse(stdout) as Record<string, unknown> & { warnings: string[] };
      expect(report).toMatchObject({
        bigPolledFromStart: true,
        smallWatchedAtFirst: true,
        logWatchedAtFirst: true,
        smallPolledLater: true,
        bigUpdates: true,
        smallUpdates: true,
        logUpdates: true,
        logStillWatched: true,
      });
      expect(report.warnings).toHaveLength(1);
      expect(report.warnings[0]).toMatch(/system limit for file watches was reached \(ENOSPC\)/);
      expect(report.warnings[0]).not.toContain(work);
    });

    it('a listing polls the names under its directories when watches are refused: appearing and vanishing count, writes do not', async () => {
      Logger.setStderrLevel('error');
      const { log, lines } = capturingLogger();
      const faulty = new ChangeHub({ debounceMs: 50, fallbackPollMs: 50, watchFault: 'ENOSPC', log });
      try {
        const root = path.join(dir, 'polled-listing');
        await mkdir(path.join(root, 'sub'), { recursive: true });
        await writeFile(path.join(root, 'sub', 'kept.txt'), '1');
        const server = probeServer(faulty, { 'probe://listing': async () => undefined });
        const s = await connect(server);
        await faulty.watchListing(server.sessionId, 'listing', [root], { depth: 2, ignored: (p) => p.endsWith('.ignored') });
        const listChanges = (): number => s.received('notifications/resources/list_changed').length;
        const expectListChange = async (what: string, act: () => Promise<unknown>): Promise<void> => {
          const before = listChanges();
          await act();
          await waitUntil(() => listChanges() > before, { what: `list_changed after ${what}`, timeoutMs: 8000 });
          await quiet(s);
        };
        await expectListChange('a deep file appearing', () => writeFile(path.join(root, 'sub', 'new.txt'), '1'));
        await expectListChange('a file vanishing', () => unlink(path.join(root, 'sub', 'new.txt')));
        const settled = listChanges();
        await appendFile(path.join(root, 'sub', 'kept.txt'), 'more');
        await writeFile(path.join(root, 'x.ignored'), '1');
        await sleep(500);
        expect(listChanges()).toBe(settled);
        const warnings = lines.filter((l) => l.level === 'warning');
        expect(warnings).toHaveLength(1);
        expect(warnings[0]!.text).toMatch(/system limit for file watches was reached \(ENOSPC\)/);
        expect(warnings[0]!.text).not.toContain(dir);
        expect(faulty.activePollers).toBe(1);
        await faulty.unwatchListing(server.sessionId, 'listing');
        expect(faulty.activePollers).toBe(0);
      } finally {
        await faulty.close();
      }
    });

    it('falls back to polling on EMFILE (fault seam: SUITE_WATCH_FAULT)', async () => {
      Logger.setStderrLevel('error');
      const { log, lines } = capturingLogger();
      const saved = process.env.SUITE_WATCH_FAULT;
      process.env.SUITE_WATCH_FAULT = 'EMFILE';
      let faulty: ChangeHub;
      try {
        faulty = new ChangeHub({ debounceMs: 100, fallbackPollMs: 50, log });
      } finally {
        if (saved === undefined) delete process.env.SUITE_WATCH_FAULT;
        else process.env.SUITE_WATCH_FAULT = saved;
      }
      try {
        await fallbackScenario(faulty, lines, 'EMFILE');
      } finally {
        await faulty.close();
      }
    });
  });
});
