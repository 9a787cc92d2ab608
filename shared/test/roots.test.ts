import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connectInProcess, makeTempDir, type TestSession } from '@suite/test-kit';
import { probeServer } from './fixtures/probe-server.js';

describe('roots policy', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;
  let allowed: string;
  let outside: string;

  beforeEach(async () => {
    ({ dir: base, cleanup } = await makeTempDir());
    allowed = path.join(base, 'allowed');
    outside = path.join(base, 'outside');
    await mkdir(path.join(allowed, 'sub', 'deeper'), { recursive: true });
    await mkdir(path.join(allowed, 'other'), { recursive: true });
    await mkdir(outside);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await cleanup();
  });

  async function effective(s: TestSession): Promise<{ directories: string[]; source: string; clientRoots: string[] }> {
    const out = await s.callTool('allowed_directories');
    expect(out.isError, out.text).toBe(false);
    return out.structured as { directories: string[]; source: string; clientRoots: string[] };
  }

  it('uses the command-line directories when the client has no roots capability', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }));
    expect(await effective(session)).toMatchObject({ directories: [allowed], source: 'command-line' });
  });

  it('lets a client root inside the command-line directories narrow access', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [path.join(allowed, 'sub')] });
    expect((await effective(session)).directories).toEqual([path.join(allowed, 'sub')]);
    const denied = await session.callTool('resolve', { path: path.join(allowed, 'other', 'x.txt') });
    expect(denied.isError).toBe(true);
    expect(denied.text).toMatch(/outside the allowed directories/);
    const ok = await session.callTool('resolve', { path: path.join(allowed, 'sub', 'deeper') });
    expect(ok.isError).toBe(false);
  });

  it('gives no access through a client root outside the command-line directories', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [outside] });
    const out = await session.callTool('resolve', { path: path.join(outside, 'x') });
    expect(out.isError).toBe(true);
    // The server was started with a directory: the client's roots are what leaves none.
    expect(out.text).toMatch(/^No directory is allowed: the client's roots leave none of the server's directories/);
    expect(out.text).not.toMatch(/Start the server with/);
  });

  it('never widens: a client root of file:/// still leaves only the command-line directories', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [{ uri: 'file:///' }] });
    expect((await effective(session)).directories).toEqual([allowed]);
    expect((await session.callTool('resolve', { path: path.join(outside, 'x') })).isError).toBe(true);
  });

  it('lets client roots define access when no directory was given on the command line', async () => {
    session = await connectInProcess(probeServer(), { roots: [outside] });
    expect(await effective(session)).toMatchObject({ directories: [outside], source: 'client' });
  });

  it('answers with how to configure access when nothing is allowed', async () => {
    session = await connectInProcess(probeServer());
    const out = await session.callTool('allowed_directories');
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/No directory is allowed\. Start the server with one or more directories/);
  });

  it('re-reads roots on roots/list_changed', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [path.join(allowed, 'sub')] });
    expect((await effective(session)).directories).toEqual([path.join(allowed, 'sub')]);
    await session.setRoots([path.join(allowed, 'other')]);
    await expect.poll(async () => (await effective(session!)).directories).toEqual([path.join(allowed, 'other')]);
  });

  it('tells the server when a client answer changes the effective roots, and only then', async () => {
    const server = probeServer({ directories: [allowed] });
    const seen: string[][] = [];
    server.onRootsChanged((snapshot) => seen.push(snapshot.directories));
    session = await connectInProcess(server, { roots: [path.join(allowed, 'sub')] });
    await expect.poll(() => seen).toEqual([[path.join(allowed, 'sub')]]);
    await session.setRoots([path.join(allowed, 'other')]);
    await expect.poll(() => seen.length).toBe(2);
    expect(seen[1]).toEqual([path.join(allowed, 'other')]);
    // The same roots again: the effective directories do not change, so nothing is reported.
    const before = session.rootsRequests;
    await session.setRoots([path.join(allowed, 'other')]);
    await expect.poll(() => session!.rootsRequests).toBe(before + 1);
    expect((await effective(session)).directories).toEqual([path.join(allowed, 'other')]);
    // A negative: give the unchanged answer time to be applied (no event to await for "nothing").
    await new Promise((r) => setTimeout(r, 300));
    expect(seen.length).toBe(2);
  });

  it('discards a stale roots/list answer that arrives after a newer one', async () => {
    // The first answer (sub) is slow; the second (other) is sent later but lands first.
    session = await connectInProcess(probeServer({ directories: [allowed] }), {
      roots: [path.join(allowed, 'sub')],
      rootsDelayMs: (i) => (i === 0 ? 600 : 0),
    });
    await session.setRoots([path.join(allowed, 'other')]);
    await new Promise((r) => setTimeout(r, 900));
    expect(session.rootsRequests).toBe(2);
    expect((await effective(session)).directories).toEqual([path.join(allowed, 'other')]);
  });

  it('makes tool calls wait for the first roots answer', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [path.join(allowed, 'sub')], rootsDelayMs: 300 });
    // Called at once: without the wait it would see the command-line directory.
    expect((await effective(session)).directories).toEqual([path.join(allowed, 'sub')]);
  });

  it('keeps non-file roots for servers that want them, without letting them grant file access', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [{ uri: 'https://github.com/acme/app', name: 'app' }] });
    const out = await effective(session);
    expect(out.directories).toEqual([allowed]);
    expect(out.clientRoots).toEqual(['https://github.com/acme/app']);
  });

  it('ignores client roots that do not exist', async () => {
    session = await connectInProcess(probeServer({ directories: [allowed] }), { roots: [{ uri: pathToFileURL(path.join(allowed, 'missing')).href }] });
    const out = await session.callTool('allowed_directories');
    expect(out.isError).toBe(true);
  });
});
