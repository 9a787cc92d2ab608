import { randomUUID } from 'node:crypto';
import { realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ChangeHub, Logger } from '@suite/shared';
import { RedisChangeRelay, RedisLink } from '@suite/shared/replicas';
import { connectInProcess, makeTempDir } from '@suite/test-kit';
import { DEFAULT_LIMITS } from '../src/config.js';
import { buildServer } from '../src/server.js';

const REDIS = 'redis://127.0.0.1:6379';

/**
 * Replicas on hosts that share a network volume: a watch on one host does not see another host's
 * writes. Replica A here is such a host (every native watch fails, and its polling fallback is too
 * slow to matter); what it hears of a write made through replica B, it hears through Redis.
 */
describe('filesystem replicas: what the write tools change is announced through Redis', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function pair(shared: boolean): Promise<{ heard: () => Promise<boolean>; write: () => Promise<void> }> {
    const { dir: temp, cleanup } = await makeTempDir('fs-announce-');
    closers.push(cleanup);
    const dir = await realpath(temp);
    const file = path.join(dir, 'notes.txt');
    await writeFile(file, 'first\n');
    const prefix = `suite-test-announce-${randomUUID()}:`;
    const relays = shared
      ? [0, 1].map((i) => {
          const link = new RedisLink(REDIS, new Logger(`replica-${i}`), { prefix });
          closers.push(() => link.close());
          return new RedisChangeRelay(link);
        })
      : [undefined, undefined];
    const blind = new ChangeHub({ watchFault: 'ENOSPC', fallbackPollMs: 60_000, ...(relays[0] ? { relay: relays[0] } : {}) });
    const seeing = new ChangeHub(relays[1] ? { relay: relays[1] } : {});
    closers.push(() => blind.close(), () => seeing.close());
    const config = { directories: [dir], aliases: [dir], readOnly: false, limits: DEFAULT_LIMITS };
    const a = await connectInProcess(buildServer(config, { changes: blind }));
    const b = await connectInProcess(buildServer(config, { changes: seeing }));
    closers.push(() => a.close(), () => b.close());
    const uri = pathToFileURL(file).href;
    await a.client.subscribeResource({ uri });
    await new Promise((r) => setTimeout(r, 200));
    return {
      write: async () => {
        const written = await b.callTool('write_file', { path: file, content: 'second\n' });
        expect(written.isError, written.text).toBe(false);
      },
      heard: () => a.waitFor('notifications/resources/updated', (n) => n.params?.uri === uri, 3_000).then(() => true, () => false),
    };
  }

  it('a subscriber on replica A hears write_file through replica B, which A cannot see itself; without Redis it does not', async () => {
    const joined = await pair(true);
    await joined.write();
    expect(await joined.heard()).toBe(true);
    const alone = await pair(false);
    await alone.write();
    expect(await alone.heard()).toBe(false);
  });
});
