import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir } from '@suite/test-kit';
import { connectModernHttp } from '@suite/test-kit/eras';
import { freePort, requestStateKeyFile, startHaproxy, startReplicas } from '@suite/test-kit/replicas';
import { replicaSessionsSuite } from '@suite/test-kit/replica-sessions';
import { target } from './conformance-target.js';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

replicaSessionsSuite(target);

describe('filesystem replicas behind haproxy: the roots round trip (input_required) of a 2026-07-28 request', () => {
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });

  it('completes when the retry with the roots lands on the other replica (the same requestState key), every time', async () => {
    const { dir: temp, cleanup } = await makeTempDir('fs-replica-roots-');
    closers.push(cleanup);
    const dir = await realpath(temp);
    const sub = path.join(dir, 'sub');
    await mkdir(sub);
    await writeFile(path.join(sub, 'inner.txt'), 'inner\n');
    await writeFile(path.join(dir, 'top.txt'), 'top\n');
    const port = await freePort();
    const key = await requestStateKeyFile(dir);
    const replicas = await startReplicas(BIN, [dir, '--request-state-key-file', key, '--allowed-host', `127.0.0.1:${port}`], 2);
    for (const r of replicas) closers.push(() => r.server.stop());
    const lb = await startHaproxy(replicas, dir, port);
    closers.push(() => lb.stop());
    const client = await connectModernHttp(lb.url, { capabilities: { roots: {} } });
    closers.push(() => client.close());
    let asked = 0;
    client.setRequestHandler('roots/list', async () => {
      asked += 1;
      return { roots: [{ uri: pathToFileURL(sub).href, name: 'sub' }] };
    });
    const before = await lb.served();
    // Round robin: each call's first request and its retry land on different replicas.
    for (let i = 0; i < 4; i++) {
      const inside = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(sub, 'inner.txt') } });
      expect(inside.isError, JSON.stringify(inside.content)).toBeFalsy();
      const outside = await client.callTool({ name: 'read_text_file', arguments: { path: path.join(dir, 'top.txt') } });
      expect(outside.isError).toBe(true);
    }
    expect(asked).toBe(8);
    for (const count of (await lb.served()).map((n, i) => n - before[i]!)) expect(count).toBeGreaterThanOrEqual(8);
  });
});
