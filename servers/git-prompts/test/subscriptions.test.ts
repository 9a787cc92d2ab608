import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ChangeHub } from '@suite/shared';
import { makeTempDir, protocolError, type TestSession } from '@suite/test-kit';
import { commit, git, makeRepo, open, writeFiles } from './helpers.js';

const WAIT = { timeoutMs: 20_000 };

describe('resource subscriptions (through the shared change hub)', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let hub: ChangeHub;
  let session: TestSession | undefined;
  beforeEach(async () => {
    ({ dir: base, cleanup } = await makeTempDir('git-prompts-subscribe-'));
    repo = makeRepo(path.join(base, 'app'), { 'a.txt': 'a\n' });
    hub = new ChangeHub();
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await hub.close();
    await cleanup();
  });

  const updated = (s: TestSession, uri: string, after: number): Promise<unknown> =>
    s.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, { ...WAIT, after });

  it('announces the staged diff when the index changes, and the log when a commit lands', async () => {
    session = await open([repo], { changes: hub });
    const { capabilities } = { capabilities: session.client.getServerCapabilities() };
    expect(capabilities?.resources).toMatchObject({ subscribe: true });
    await session.client.subscribeResource({ uri: 'git://app/diff/staged' });
    await session.client.subscribeResource({ uri: 'git://app/log' });

    let mark = session.mark();
    writeFiles(repo, { 'a.txt': 'changed\n' });
    git(repo, ['add', 'a.txt']);
    await updated(session, 'git://app/diff/staged', mark);
    expect((await session.readResource('git://app/diff/staged')).text).toMatch(/\+changed/);

    mark = session.mark();
    git(repo, ['commit', '--quiet', '-m', 'Change a']);
    await updated(session, 'git://app/log', mark);
    expect((await session.readResource('git://app/log')).text).toMatch(/Change a/);
  });

  // One change per test, on a fresh subscription: a late notification of an earlier change cannot stand in for it.
  for (const [what, change] of [
    ['a branch in a directory created just now, deep below refs/heads', (r: string) => git(r, ['branch', 'feature/deep/er'])],
    ['packed-refs alone (as a fetch writes it)', (r: string) => {
      const oid = git(r, ['rev-parse', 'HEAD']).trim();
      writeFileSync(path.join(r, '.git', 'packed-refs'), `# pack-refs with: peeled fully-peeled sorted\n${oid} refs/tags/packed-only\n`);
    }],
    ['HEAD alone (switching to another branch)', (r: string) => git(r, ['symbolic-ref', 'HEAD', 'refs/heads/elsewhere'])],
  ] as const) {
    it(`follows ${what}`, async () => {
      session = await open([repo], { changes: hub });
      await session.client.subscribeResource({ uri: 'git://app/status' });
      const mark = session.mark();
      change(repo);
      await updated(session, 'git://app/status', mark);
    });
  }

  it('follows a working-tree file for the file resource, and stops after unsubscribe', async () => {
    session = await open([repo], { changes: hub });
    const uri = 'git://app/file/a.txt';
    await session.client.subscribeResource({ uri });
    const mark = session.mark();
    writeFiles(repo, { 'a.txt': 'edited in the editor\n' });
    await updated(session, uri, mark);
    await session.client.unsubscribeResource({ uri });
    expect(hub.activeSubscriptions).toBe(0);
    const quiet = session.mark();
    commit(repo, { 'a.txt': 'again\n' }, 'Again');
    // A negative: give a stray notification time to arrive (there is no event to await for "nothing").
    await new Promise((r) => setTimeout(r, 800));
    expect(session.notifications.slice(quiet).filter((n) => n.method === 'notifications/resources/updated')).toEqual([]);
  });

  it('refuses to subscribe to a repository outside the roots', async () => {
    const outside = makeRepo(path.join(base, 'outside'));
    session = await open([repo], { changes: hub });
    const error = await protocolError(session.client.subscribeResource({ uri: `git://${encodeURIComponent(outside)}/status` }));
    expect(error.data).toMatchObject({ kind: 'access_denied' });
    expect(hub.activeSubscriptions).toBe(0);
  });

  it('announces prompts/list_changed and resources/list_changed when a repository is cloned into or removed from an allowed directory', async () => {
    session = await open([base], { changes: hub });
    const listed = async (): Promise<string[]> => (await session!.client.listResources()).resources.map((r) => r.uri).filter((u) => u.endsWith('/status'));
    expect(await listed()).toEqual(['git://app/status']);
    const changed = async (after: number): Promise<void> => {
      await session!.waitFor('notifications/prompts/list_changed', undefined, { ...WAIT, after });
      await session!.waitFor('notifications/resources/list_changed', undefined, { ...WAIT, after });
    };

    // Right below the allowed directory (its watch sees it at once), then two levels down (the rescan finds it).
    let mark = session.mark();
    makeRepo(path.join(base, 'other'));
    await changed(mark);
    expect(await listed()).toEqual(['git://app/status', 'git://other/status']);
    // A directory made first (its creation changes no list), the repository inside it later: only the rescan sees that.
    mkdirSync(path.join(base, 'group'));
    await new Promise((r) => setTimeout(r, 400));
    mark = session.mark();
    makeRepo(path.join(base, 'group', 'deep'));
    await changed(mark);
    expect(await listed()).toEqual(['git://app/status', 'git://deep/status', 'git://other/status']);
    expect((await session.getPrompt('review-changes', { repo: 'deep' })).text).toMatch(/in deep/);

    mark = session.mark();
    rmSync(path.join(base, 'other'), { recursive: true, force: true });
    await changed(mark);
    expect(await listed()).toEqual(['git://app/status', 'git://deep/status']);

    // A change that leaves the set of repositories as it was announces nothing (a full rescan period later).
    mark = session.mark();
    writeFiles(base, { 'notes.txt': 'not a repository\n' });
    await new Promise((r) => setTimeout(r, 2500));
    expect(session.notifications.slice(mark).map((n) => n.method)).not.toContain('notifications/prompts/list_changed');

    // The watch and the rescans belong to the session: gone when it closes.
    expect(hub.activeObservers).toBe(1);
    await session.close();
    session = undefined;
    expect(hub.activeObservers).toBe(0);
  });
});
