import { afterEach, describe, expect, it } from 'vitest';
import { startHttpServer } from '@suite/test-kit/abuse';
import { connectModernHttp, connectModernStdio, erasSuite } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';
import { startFakeGithub } from './fake-github/index.js';
import { BIN, TOKENS, binEnv, seed, testConfig } from './helpers.js';

erasSuite(target);

describe('github in the 2026-07-28 era (the built bin)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it('over HTTP, each request acts with its own bearer token: two users on one server, no session between them', async () => {
    const fake = await startFakeGithub();
    closers.push(() => fake.close());
    seed(fake);
    const http = await startHttpServer(BIN, [], binEnv(testConfig(fake), undefined));
    closers.push(async () => void (await http.server.stop()));
    const alice = await connectModernHttp(http.url, { token: TOKENS.alice });
    closers.push(() => alice.close());
    const bob = await connectModernHttp(http.url, { token: TOKENS.bob });
    closers.push(() => bob.close());
    const me = async (client: typeof alice): Promise<string> => ((await client.callTool({ name: 'get_me', arguments: {} })).content as { text: string }[])[0]!.text;
    expect(await me(alice)).toMatch(/alice/);
    expect(await me(bob)).toMatch(/bob/);
    expect(await me(alice)).toMatch(/alice/);
    // No token, no service, in this era as in the other.
    await expect(connectModernHttp(http.url)).rejects.toThrow();
  });

  it('--dynamic-toolsets: the 2026-07-28 era gets the default toolsets and no meta-tools (a 2025 session keeps dynamic mode)', async () => {
    const fake = await startFakeGithub();
    closers.push(() => fake.close());
    seed(fake);
    const client = await connectModernStdio(BIN, ['--dynamic-toolsets'], { env: binEnv(testConfig(fake), TOKENS.alice) });
    closers.push(() => client.close());
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain('enable_toolset');
    expect(names).toContain('get_me');
    expect(names).toContain('get_issue');
  });
});
