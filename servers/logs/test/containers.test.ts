import { appendFile, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, type TestSession } from '@suite/test-kit';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

/**
 * Container logs in the runtimes' real formats: Docker's json-file driver and Kubernetes' CRI
 * files, recognised by content wherever they sit under an allowed directory, with stdout and
 * stderr kept apart as the `stream` field, through the kubelet's rotation.
 */

const docker = (log: string, stream: 'stdout' | 'stderr', time: string): string => JSON.stringify({ log: `${log}\n`, stream, time });

const DOCKER = [
  docker('2026-12-01 00:00:00 INFO listening on :8080', 'stdout', '2026-12-01T00:00:00.100000000Z'),
  docker('panic: runtime error: index out of range', 'stderr', '2026-12-01T00:00:01.123456789Z'),
  docker(JSON.stringify({ level: 'error', msg: 'db down', service: 'api', status: 503 }), 'stdout', '2026-12-01T00:00:02.000000000Z'),
];

const CRI = [
  '2026-12-01T00:00:00.000000001Z stdout F starting server',
  '2026-12-01T00:00:01.500000000Z stderr F ERROR connection refused',
  '2026-12-01T00:00:02.000000000Z stdout P a very long line the runtime split ',
  '2026-12-01T00:00:02.000000000Z stdout F and its end',
  `2026-12-01T00:00:03.000000000Z stdout F ${JSON.stringify({ level: 'warn', msg: 'slow', route: '/pay' })}`,
];

interface Match {
  line: number;
  text: string;
  level?: string;
  time?: string;
}

let fx: Fixture | undefined;

/** Writes a file of the fixture, creating the directories the runtimes nest it in. */
async function put(f: Fixture, name: string, text: string | Buffer): Promise<string> {
  await mkdir(path.dirname(f.file(name)), { recursive: true });
  return f.write(name, text);
}
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function matches(session: TestSession, args: Record<string, unknown>): Promise<Match[]> {
  const out = await session.callTool('search_logs', args);
  expect(out.isError, out.text).toBe(false);
  return (out.structured as { matches: Match[] }).matches;
}

describe.each(TRANSPORTS)('container logs (%s)', (transport) => {
  it('Docker json-file: recognised by content; level and time of what the container wrote; stream as a field', async () => {
    fx = await fixture({ transport });
    const id = 'a'.repeat(64);
    const file = await put(fx, `containers/${id}/${id}-json.log`, lines(...DOCKER));
    const session = await fx.connect();
    const list = await session.callTool('list_logs', {});
    expect(list.text).toMatch(new RegExp(`${id}-json\\.log.*json`));
    const all = await matches(session, { paths: [file], pattern: '.' });
    expect(all.map((m) => m.time)).toEqual(['2026-12-01T00:00:00.100Z', '2026-12-01T00:00:01.123Z', '2026-12-01T00:00:02.000Z']);
    expect([all[0]?.level, all[2]?.level]).toEqual(['info', 'error']);
    expect((await matches(session, { paths: [file], fields: { stream: 'stderr' } })).map((m) => m.line)).toEqual([2]);
    // The application's own JSON fields are fields too.
    expect((await matches(session, { paths: [file], fields: { service: 'api', status: '>=500', stream: 'stdout' } })).map((m) => m.line)).toEqual([3]);
    const stats = await session.callTool('log_stats', { paths: [file], group_by: 'stream' });
    expect(stats.structured).toMatchObject({ entries: 3, groups: [{ value: 'stdout', count: 2 }, { value: 'stderr', count: 1 }] });
  });

  it('Kubernetes CRI: recognised by content, nanosecond times, stream and tag as fields, rotated copies (N.log.<timestamp>, .gz) searched', async () => {
    fx = await fixture({ transport });
    const dir = 'pods/shop_checkout-7d9f_1234-abcd/app';
    const live = await put(fx, `${dir}/0.log`, lines(...CRI));
    await put(fx, `${dir}/0.log.20261130-235959`, lines('2026-11-30T23:59:59.000000000Z stderr F FATAL out of memory'));
    await put(fx, `${dir}/0.log.20261130-120000.gz`, gzipSync(lines('2026-11-30T12:00:00.000000000Z stderr F ERROR old crash')));
    const session = await fx.connect();
    const tail = await session.callTool('tail_log', { path: live, lines: 2 });
    expect(tail.structured).toMatchObject({ format: 'cri' });
    const all = await matches(session, { paths: [live], includeRotated: false, pattern: '.' });
    // The runtime's P fragment and its F line are one entry, numbered by the fragment's line.
    expect(all.map((m) => m.level ?? null)).toEqual([null, 'error', null, 'warning']);
    expect(all.map((m) => m.line)).toEqual([1, 2, 3, 5]);
    expect(all[2]?.text).toBe('2026-12-01T00:00:02.000000000Z stdout F a very long line the runtime split and its end');
    expect(all[0]?.time).toBe('2026-12-01T00:00:00.000Z');
    expect((await matches(session, { paths: [live], includeRotated: false, fields: { stream: 'stderr' } })).map((m) => m.line)).toEqual([2]);
    expect((await matches(session, { paths: [live], includeRotated: false, fields: { tag: 'P' } })).map((m) => m.line)).toEqual([]);
    expect((await matches(session, { paths: [live], includeRotated: false, fields: { route: '/pay' } })).map((m) => m.line)).toEqual([5]);
    // Rotated copies, newest first: the kubelet's dated names and their compressed form.
    const errors = await session.callTool('search_logs', { paths: [live], level: 'error' });
    expect((errors.structured as { matches: { file: string }[] }).matches.map((m) => path.basename(m.file))).toEqual(['0.log', '0.log.20261130-235959', '0.log.20261130-120000.gz']);
  });

  it('follows a CRI log through the kubelet rotation (rename to N.log.<timestamp>, reopen, compress the older copy)', async () => {
    fx = await fixture({ transport });
    const live = await put(fx, 'pods/ns_pod_uid/c/0.log', lines(CRI[0] as string));
    const session = await fx.connect();
    const start = (await session.callTool('read_new_lines', { path: live })).structured as { cursor: string };
    const got: string[] = [];
    const written: string[] = [];
    let cursor = start.cursor;
    for (let round = 0; round < 3; round++) {
      for (let r = 0; r < 2; r++) {
        const batch = Array.from({ length: 5 }, (_, i) => `2026-12-01T00:0${round}:0${r}.00000000${i}Z stdout F round ${round} rotation ${r} line ${i}`);
        written.push(...batch);
        await appendFile(live, lines(...batch));
        const stamp = `20261201-00${round}${r}00`;
        await rename(live, `${live}.${stamp}`);
        await writeFile(live, '');
        // The copy before this one is compressed.
        const dir = path.dirname(live);
        for (const name of await readdir(dir)) {
          if (/^0\.log\.\d{8}-\d{6}$/.test(name) && name !== `0.log.${stamp}`) {
            await writeFile(path.join(dir, `${name}.gz`), gzipSync(await readFile(path.join(dir, name))));
            await rm(path.join(dir, name));
          }
        }
      }
      const last = `2026-12-01T00:0${round}:59.000000000Z stdout F round ${round} live`;
      written.push(last);
      await appendFile(live, lines(last));
      for (let k = 0; k < 20; k++) {
        const r = (await session.callTool('read_new_lines', { path: live, cursor })).structured as { lines: string[]; cursor: string; more: boolean };
        got.push(...r.lines);
        cursor = r.cursor;
        if (!r.more) break;
      }
    }
    expect(got).toEqual(written);
  });
});

describe('container logs and the allowed directories (in-process)', () => {
  it('a container log that is a symbolic link out of the allowed directories is refused, by name and in searches', async () => {
    const outside = await makeTempDir('suite-logs-outside-');
    try {
      const secret = path.join(outside.dir, 'secret-json.log');
      await writeFile(secret, lines(docker('SECRET ERROR token=abc', 'stderr', '2026-12-01T00:00:00Z')));
      fx = await fixture();
      const id = 'b'.repeat(64);
      await mkdir(fx.file(`containers/${id}`), { recursive: true });
      const link = fx.file(`containers/${id}/${id}-json.log`);
      await symlink(secret, link);
      const session = await fx.connect();
      const tail = await session.callTool('tail_log', { path: link });
      expect(tail.isError).toBe(true);
      expect(tail.text).not.toMatch(/SECRET|secret-json/);
      const search = await session.callTool('search_logs', { pattern: 'SECRET' });
      expect(search.isError, search.text).toBe(false);
      expect((search.structured as { matches: unknown[] }).matches).toEqual([]);
      const list = await session.callTool('list_logs', {});
      expect(list.text).not.toMatch(/secret/);
    } finally {
      await outside.cleanup();
    }
  });
});

describe('a CRI partial line that never ends (in-process)', () => {
  it('P fragments without an F, then an unterminated line: every tool answers, bounded, and the fragments are counted', async () => {
    fx = await fixture();
    const dir = fx.file('pods/ns_pod_uid/c');
    await mkdir(dir, { recursive: true });
    const live = path.join(dir, '0.log');
    // containerd splits a line at 16 KiB: 128 fragments (2 MiB) that never get their F.
    const fragment = 'y'.repeat(16 * 1024);
    const parts = Array.from({ length: 128 }, (_, i) => `2026-12-01T00:00:${String(i % 60).padStart(2, '0')}.000000000Z stdout P ${fragment}`);
    await writeFile(live, lines('2026-12-01T00:00:00.000000000Z stderr F ERROR before', ...parts));
    const session = await fx.connect();
    const start = (await session.callTool('read_new_lines', { path: live })).structured as { cursor: string };
    // And then a line without its newline, 2 MiB and growing.
    await appendFile(live, `2026-12-01T00:01:00.000000000Z stdout P ${'z'.repeat(2 * 1024 * 1024)}`);

    const stats = await session.callTool('log_stats', { paths: [live], fields: { tag: 'P' }, group_by: 'stream' });
    expect(stats.isError, stats.text).toBe(false);
    expect((stats.structured as { groups: { value: string; count: number }[] }).groups[0]).toMatchObject({ value: 'stdout' });
    const search = await session.callTool('search_logs', { paths: [live], fields: { stream: 'stderr' } });
    expect((search.structured as { matches: { line: number }[] }).matches.map((m) => m.line)).toEqual([1]);
    const tail = await session.callTool('tail_log', { path: live, lines: 3 });
    expect(tail.isError, tail.text).toBe(false);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(300 * 1024);
    // The unterminated line comes in bounded pieces, never all at once and never lost.
    let got = 0;
    let cursor = start.cursor;
    for (let round = 0; round < 100; round++) {
      const r = (await session.callTool('read_new_lines', { path: live, cursor, maxBytes: 256 * 1024 })).structured as { lines: string[]; cursor: string; more: boolean };
      for (const l of r.lines) expect(Buffer.byteLength(l)).toBeLessThanOrEqual(256 * 1024);
      got += r.lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
      cursor = r.cursor;
      if (!r.more) break;
    }
    expect(got).toBeGreaterThan(2 * 1024 * 1024 - 256 * 1024);
  }, 60_000);
});
