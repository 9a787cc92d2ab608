import { appendFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '@suite/test-kit';
import { connectModernStdio, erasSuite, untilListenUpdate } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';
import { BIN, isoAgo, lines } from './helpers.js';

erasSuite(target, { follows: true });

describe('logs in the 2026-07-28 era (the built bin over stdio)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it('a listen stream hears a log grow, and keeps hearing it through rotation', async () => {
    const { dir, cleanup } = await makeTempDir('suite-logs-listen-');
    closers.push(cleanup);
    const log = path.join(dir, 'app.log');
    await writeFile(log, lines(`${isoAgo(10)} INFO started`));
    const client = await connectModernStdio(BIN, [dir]);
    closers.push(() => client.close());
    const uri = `logs://file${log}`;
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uri]);
    await untilListenUpdate(client, uri, (i) => appendFile(log, lines(`${isoAgo(0)} ERROR append ${i}`)));
    // logrotate "create": renamed away, a new file in its place.
    await rename(log, `${log}.1`);
    await writeFile(log, lines(`${isoAgo(0)} INFO fresh file`));
    await untilListenUpdate(client, uri, (i) => appendFile(log, lines(`${isoAgo(0)} INFO after rotation ${i}`)));
    expect(((await client.readResource({ uri })).contents[0] as { text: string }).text).toMatch(/INFO after rotation \d+$/);
    // read_new_lines: the cursor travels with the client in both eras.
    const first = await client.callTool({ name: 'read_new_lines', arguments: { path: log } });
    const cursor = (first.structuredContent as { cursor: string }).cursor;
    await appendFile(log, lines(`${isoAgo(0)} WARN next line`));
    const next = await client.callTool({ name: 'read_new_lines', arguments: { path: log, cursor } });
    expect((next.content as { text: string }[])[0]!.text).toMatch(/WARN next line/);
    await subscription.close();
  });
});
