import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '@suite/test-kit';
import { connectModernStdio, erasSuite, untilListenUpdate } from '@suite/test-kit/eras';
import { target } from './conformance-target.js';

const BIN = path.join(import.meta.dirname, '..', 'dist', 'index.js');

erasSuite(target, { follows: true });

describe('filesystem in the 2026-07-28 era (the built bin over stdio)', () => {
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  async function tree(): Promise<{ dir: string; sub: string }> {
    const { dir, cleanup } = await makeTempDir('suite-fs-eras-');
    closers.push(cleanup);
    const sub = path.join(dir, 'sub');
    await mkdir(sub);
    await writeFile(path.join(dir, 'top.txt'), 'top\n');
    await writeFile(path.join(sub, 'inner.txt'), 'inner\n');
    return { dir, sub };
  }

  it('asks a client that offers roots for them (input_required) and narrows the command-line directories', async () => {
    const { dir, sub } = await tree();
    const client = await connectModernStdio(BIN, [dir], { capabilities: { roots: {} } });
    closers.push(() => client.close());
    let asked = 0;
    client.setRequestHandler('roots/list', async () => {
      asked += 1;
      return { roots: [{ uri: pathToFileURL(sub).href, name: 'sub' }] };
    });
    const inside = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(sub, 'inner.txt') } });
    expect(inside.isError).toBeFalsy();
    const outside = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'top.txt') } });
    expect(outside.isError).toBe(true);
    expect((outside.content as { text: string }[])[0]!.text).toMatch(/outside|not allowed|denied/i);
    // Every request that needs the roots asks for them: no session remembers the last answer.
    expect(asked).toBe(2);
  });

  it('uses the command-line directories when the client offers no roots', async () => {
    const { dir } = await tree();
    const client = await connectModernStdio(BIN, [dir]);
    closers.push(() => client.close());
    const top = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'top.txt') } });
    expect(top.isError).toBeFalsy();
  });

  it('a listen stream hears a file change', async () => {
    const { dir } = await tree();
    const file = path.join(dir, 'top.txt');
    const client = await connectModernStdio(BIN, [dir]);
    closers.push(() => client.close());
    const uri = pathToFileURL(file).href;
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uri]);
    await untilListenUpdate(client, uri, (i) => writeFile(file, `changed ${i}\n`));
    await subscription.close();
  });
});
