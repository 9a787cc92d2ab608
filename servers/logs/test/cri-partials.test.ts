import { appendFile, mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { searchLines } from '../app/model.js';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

/**
 * Kubernetes' CRI partial lines: containerd and CRI-O cut a line the container wrote at 16 KiB
 * into P fragments and a last F one, per stream (stdout and stderr interleave independently).
 * Every tool sees the joined entry: its fields, its level, a pattern across the cut. Line counts
 * stay the file's (an entry counts as the lines it was written in), through the kubelet's rotation.
 * Container logs are named by container (Docker, from config.v2.json) or namespace/pod/container.
 */

/** containerd's cut. */
const CUT = 16 * 1024;

const t = (s: number): string => `2026-12-01T00:00:${String(s).padStart(2, '0')}.123456789Z`;

/** The CRI lines a runtime writes for one line of the container: P fragments of CUT bytes, then F. */
function criLines(time: string, stream: 'stdout' | 'stderr', text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CUT) out.push(`${time} ${stream} ${i + CUT < text.length ? 'P' : 'F'} ${text.slice(i, i + CUT)}`);
  return out.length > 0 ? out : [`${time} ${stream} F `];
}

// A JSON line of 40 KiB (3 fragments) whose fields are only readable joined, with stderr lines between its fragments.
const BIG = JSON.stringify({ level: 'error', msg: 'payment failed', service: 'pay', pad: 'p'.repeat(40 * 1024), tail: 'END-OF-ENTRY' });
const [b1, b2, b3] = criLines(t(2), 'stdout', BIG) as [string, string, string];
const FILE = [
  `${t(1)} stdout F starting`,
  b1,
  `${t(2)} stderr P WARN disk `,
  b2,
  `${t(3)} stderr F almost full`,
  b3,
  `${t(4)} stdout F done`,
];

interface Match {
  line: number;
  text: string;
  level?: string;
  container?: string;
  file: string;
}

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function put(f: Fixture, name: string, text: string | Buffer): Promise<string> {
  await mkdir(path.dirname(f.file(name)), { recursive: true });
  return f.write(name, text);
}

async function search(session: TestSession, args: Record<string, unknown>): Promise<Match[]> {
  const out = await session.callTool('search_logs', args);
  expect(out.isError, out.text).toBe(false);
  return (out.structured as { matches: Match[] }).matches;
}

describe.each(TRANSPORTS)('CRI partial lines joined (%s)', (transport) => {
  it('search, stats, tail and read_log_range: interleaved streams joined per stream; lines counted exactly', async () => {
    fx = await fixture({ transport });
    const live = await put(fx, 'pods/shop_pay-5f7_0a1b/app/0.log', lines(...FILE));
    const session = await fx.connect();

    // The JSON line's fields exist only joined; the match is numbered by its first fragment.
    const byField = await search(session, { paths: [live], fields: { service: 'pay' } });
    expect(byField.map((m) => [m.line, m.level, m.container])).toEqual([[2, 'error', 'shop/pay-5f7/app']]);
    expect(byField[0]?.text.length).toBeLessThanOrEqual(502);
    // A pattern across the cut between two fragments.
    const across = BIG.slice(CUT - 10, CUT + 10);
    expect((await search(session, { paths: [live], pattern: across, literal: true })).map((m) => m.line)).toEqual([2]);
    expect((await search(session, { paths: [live], pattern: 'disk almost', literal: true })).map((m) => m.line)).toEqual([3]);
    // Context lines are the file's: before the first fragment, after the last.
    const withContext = (await session.callTool('search_logs', { paths: [live], pattern: 'disk almost', literal: true, contextLines: 1 })).structured as { matches: { before: string[]; after: string[] }[] };
    expect(withContext.matches.map((m) => [m.before.map((l) => l.slice(0, 40)), m.after.map((l) => l.slice(0, 40))])).toEqual([[[b1.slice(0, 40)], [b3.slice(0, 40)]]]);
    // Every entry, in line order.
    expect((await search(session, { paths: [live], pattern: '.' })).map((m) => m.line)).toEqual([1, 2, 3, 7]);

    // 4 entries in 7 lines: 3 continuation lines; the file's 7 lines counted.
    const stats = await session.callTool('log_stats', { paths: [live] });
    expect(stats.structured).toMatchObject({ entries: 4, continuationLines: 3, levels: { error: 1, warning: 1 }, files: [{ lines: 7, container: 'shop/pay-5f7/app' }] });

    // The tail gives entries, in the order they finished.
    const tail = await session.callTool('tail_log', { path: live, lines: 3 });
    const tailed = tail.structured as { lines: string[]; entries: number; container: string };
    expect(tailed.entries).toBe(3);
    expect(tailed.container).toBe('shop/pay-5f7/app');
    expect(tailed.lines[0]).toBe(`${t(2)} stderr F WARN disk almost full`);
    expect(tailed.lines[1]).toBe(`${t(2)} stdout F ${BIG}`);
    expect(tailed.lines[2]).toBe(`${t(4)} stdout F done`);
    const errors = await session.callTool('tail_log', { path: live, level: 'error', fields: { service: 'pay' } });
    expect((errors.structured as { lines: string[] }).lines).toEqual([`${t(2)} stdout F ${BIG}`]);

    // The log's resource (what a subscription follows and re-reads) is the same tail.
    expect((await session.readResource(`logs://file${live}`)).text.split('\n').slice(-2)).toEqual([`${t(2)} stdout F ${BIG}`, `${t(4)} stdout F done`]);

    // read_log_range keeps the file's lines, so line numbers stay those of the file.
    const range = await session.callTool('read_log_range', { path: live, startLine: 2, endLine: 4 });
    expect((range.structured as { lines: string[]; firstLine: number }).lines).toEqual([b1, FILE[2], b2]);
  });

  it('read_new_lines holds fragments back until their F line, then gives the entry once, through a kubelet rotation between them', async () => {
    fx = await fixture({ transport });
    const live = await put(fx, 'pods/ns_web-0_ffff/nginx/0.log', lines(`${t(0)} stdout F up`));
    const session = await fx.connect();
    const follow = async (cursor: string): Promise<{ lines: string[]; cursor: string; container?: string }> => {
      const out: string[] = [];
      let c = cursor;
      let container: string | undefined;
      for (let k = 0; k < 20; k++) {
        const r = (await session.callTool('read_new_lines', { path: live, cursor: c })).structured as { lines: string[]; cursor: string; more: boolean; container?: string };
        out.push(...r.lines);
        c = r.cursor;
        container = r.container;
        if (!r.more) break;
      }
      return { lines: out, cursor: c, ...(container !== undefined ? { container } : {}) };
    };
    let { cursor } = (await session.callTool('read_new_lines', { path: live })).structured as { cursor: string };

    await appendFile(live, lines(`${t(1)} stdout P first half, `, `${t(1)} stderr F between`));
    let got = await follow(cursor);
    // The stderr line waits with the fragment before it: given now, it would come again with the joined entry.
    expect(got.lines).toEqual([]);
    expect(got.container).toBe('ns/web-0/nginx');
    await appendFile(live, lines(`${t(1)} stdout F second half`));
    got = await follow(got.cursor);
    expect(got.lines).toEqual([`${t(1)} stdout F first half, second half`, `${t(1)} stderr F between`]);
    cursor = got.cursor;

    // A fragment, then the kubelet rotates (rename to 0.log.<time>, new 0.log), and the F line lands in the new file.
    await appendFile(live, lines(`${t(5)} stdout P cut by `));
    await rename(live, `${live}.20261201-000005`);
    await writeFile(live, lines(`${t(6)} stdout F the rotation`, `${t(7)} stdout F after`));
    got = await follow(cursor);
    // Nothing lost or repeated: the fragment comes once (its F is in the other file: it says it never finished), then the new file.
    expect(got.lines).toEqual([`${t(5)} stdout P cut by `, `${t(6)} stdout F the rotation`, `${t(7)} stdout F after`]);

    // The whole family counted exactly: 4 + 1 + 2 lines in the live file's rotated copy and the new one.
    const stats = await session.callTool('log_stats', { paths: [live] });
    const s = stats.structured as { entries: number; continuationLines: number; files: { lines: number }[] };
    expect(s.files.reduce((n, f) => n + f.lines, 0)).toBe(7);
    expect(s.entries + s.continuationLines).toBe(7);
    expect(s.entries).toBe(6);
  });

  it('names container logs: Docker by its config.v2.json Name (else the short id), Kubernetes by namespace/pod/container; rotations grouped', async () => {
    fx = await fixture({ transport });
    const id = 'c'.repeat(64);
    const other = 'd'.repeat(64);
    const dockerLine = (s: number, text: string): string => JSON.stringify({ log: `${text}\n`, stream: 'stdout', time: `${t(s)}` });
    const named = await put(fx, `containers/${id}/${id}-json.log`, lines(dockerLine(3, 'ERROR live')));
    await put(fx, `containers/${id}/${id}-json.log.1`, lines(dockerLine(1, 'ERROR rotated')));
    await put(fx, `containers/${id}/config.v2.json`, JSON.stringify({ ID: id, Name: '/shop-api', Config: { Env: ['SECRET=hunter2'] } }));
    const unnamed = await put(fx, `containers/${other}/${other}-json.log`, lines(dockerLine(2, 'ERROR unnamed')));
    const pod = await put(fx, 'pods/prod_checkout-7d9f_1234-abcd/app/0.log', lines(`${t(4)} stderr F ERROR pod`));
    await put(fx, 'pods/prod_checkout-7d9f_1234-abcd/app/0.log.20261130-235959.gz', gzipSync(lines(`${t(0)} stderr F ERROR old`)));
    const session = await fx.connect();

    const list = await session.callTool('list_logs', {});
    const logs = (list.structured as { logs: { path: string; container?: string; rotatedFrom?: string }[] }).logs;
    const byPath = new Map(logs.map((l) => [l.path, l]));
    expect(byPath.get(named)).toMatchObject({ container: 'shop-api' });
    expect(byPath.get(`${named}.1`)).toMatchObject({ container: 'shop-api', rotatedFrom: named });
    expect(byPath.get(unnamed)).toMatchObject({ container: 'd'.repeat(12) });
    expect(byPath.get(pod)).toMatchObject({ container: 'prod/checkout-7d9f/app' });
    expect(byPath.get(`${pod}.20261130-235959.gz`)).toMatchObject({ container: 'prod/checkout-7d9f/app', rotatedFrom: pod });
    expect(list.text).toContain('container shop-api');
    // Nothing of the container's config but its name is shown.
    expect(list.text).not.toContain('hunter2');

    const all = await search(session, { pattern: 'ERROR' });
    expect(all.map((m) => `${m.container} ${m.text.split('ERROR ')[1]?.replace(/\\n.*$/, '').replace(/["}].*$/, '')}`).sort()).toEqual(
      ['dddddddddddd unnamed', 'prod/checkout-7d9f/app old', 'prod/checkout-7d9f/app pod', 'shop-api live', 'shop-api rotated'].sort(),
    );
    const out = await session.callTool('search_logs', { paths: [named], pattern: 'ERROR' });
    expect(out.text).toContain(`[shop-api] ${named}:1:`);
    const tail = await session.callTool('tail_log', { path: named });
    expect(tail.structured).toMatchObject({ container: 'shop-api' });
    expect(tail.text).toContain('[container shop-api]');
    const range = await session.callTool('read_log_range', { path: pod, startLine: 1 });
    expect(range.structured).toMatchObject({ container: 'prod/checkout-7d9f/app' });
    // The viewer shows where a match came from by container.
    expect(searchLines((out.structured as { matches: Parameters<typeof searchLines>[0] }).matches).map((l) => l.source)).toEqual([`shop-api ${named}:1`, `shop-api ${named}.1:1`]);
  });

  it('logs://recent prefixes a container log\'s entries with its container, not its file name (every pod\'s is 0.log)', async () => {
    fx = await fixture({ transport });
    const ago = (s: number): string => new Date(Date.now() - s * 1000).toISOString().replace('Z', '123456Z');
    await put(fx, 'pods/prod_cart-1_u1/app/0.log', lines(`${ago(60)} stderr F ERROR cart down`));
    await put(fx, 'pods/prod_web-2_u2/app/0.log', lines(`${ago(30)} stdout P WARN split `, `${ago(30)} stdout F in two`));
    const session = await fx.connect();
    const recent = (await session.readResource('logs://recent?timeframe=1h')).text.split('\n').slice(1);
    expect(recent.map((l) => l.replace(/ \S+Z /, ' '))).toEqual(['[prod/cart-1/app] stderr F ERROR cart down', '[prod/web-2/app] stdout F WARN split in two']);
  });
});

describe('container logs and links inside the allowed directories (in-process)', () => {
  it('/var/log/containers/*.log links into /var/log/pods are read, named by the pod they point to', async () => {
    fx = await fixture();
    const target = await put(fx, 'pods/kube-system_coredns-abc_9f9f/coredns/0.log', lines(`${t(1)} stdout F ERROR plugin/errors: timeout`));
    await mkdir(fx.file('containers'), { recursive: true });
    const link = fx.file('containers/coredns-abc_kube-system_coredns-0123.log');
    await symlink(path.relative(path.dirname(link), target), link);
    const session = await fx.connect();
    const tail = await session.callTool('tail_log', { path: link });
    expect(tail.isError, tail.text).toBe(false);
    expect(tail.structured).toMatchObject({ container: 'kube-system/coredns-abc/coredns', lines: [`${t(1)} stdout F ERROR plugin/errors: timeout`] });
    const matches = await search(session, { paths: [link], level: 'error' });
    expect(matches.map((m) => [m.line, m.container])).toEqual([[1, 'kube-system/coredns-abc/coredns']]);
  });
});

describe('a CRI partial line that never ends, joined (in-process)', () => {
  it('the joined entry is cut at 1 MiB and says so; every fragment still counts as a line', async () => {
    fx = await fixture();
    const live = await put(fx, 'pods/ns_pod_uid/c/0.log', '');
    // 200 fragments of 16 KiB (3.2 MiB) that never get their F, with stderr entries between them.
    const body: string[] = [];
    for (let i = 0; i < 200; i++) {
      body.push(`${t(i % 60)} stdout P ${String(i % 10).repeat(CUT)}`);
      if (i % 50 === 0) body.push(`${t(i % 60)} stderr F ERROR side ${i}`);
    }
    await writeFile(live, lines(...body));
    const session = await fx.connect();
    const stats = await session.callTool('log_stats', { paths: [live] });
    // 4 stderr entries and 1 unfinished stdout entry of 200 fragments.
    expect(stats.structured).toMatchObject({ entries: 5, continuationLines: 199, files: [{ lines: 204 }] });
    const found = await search(session, { paths: [live], pattern: '^\\S+ stdout P 0{100}' });
    expect(found.map((m) => m.line)).toEqual([1]);
    expect(found[0]?.text).toMatch(/…$/);
    const cut = await search(session, { paths: [live], pattern: 'cut at 1048576 bytes of 200 fragments', literal: true });
    expect(cut.map((m) => m.line)).toEqual([1]);
    const tail = await session.callTool('tail_log', { path: live, lines: 2 });
    expect(tail.isError, tail.text).toBe(false);
    expect(Buffer.byteLength(tail.text)).toBeLessThanOrEqual(300 * 1024);
    // Read backwards, the entry keeps its first MiB and says it was cut (the answer keeps the end of that).
    expect((tail.structured as { lines: string[] }).lines.at(-1)).toMatch(/ \[cut: the entry's end did not fit in 1048576 bytes\]$/);
  }, 60_000);

  it('multi-byte text is cut at the start of a character, never inside one', async () => {
    fx = await fixture();
    const live = await put(fx, 'pods/ns_pod_uid/c/0.log', '');
    // 3-byte characters, 100 fragments of 16 KiB of text each: the 1 MiB cut falls inside a character.
    const fragment = '語'.repeat(5461) + 'a';
    await writeFile(live, lines(...Array.from({ length: 100 }, (_, i) => `${t(i % 60)} stdout ${i === 99 ? 'F' : 'P'} ${fragment}`)));
    const session = await fx.connect();
    const found = await search(session, { paths: [live], pattern: 'cut at \\d+ bytes of 100 fragments' });
    expect(found.map((m) => m.line)).toEqual([1]);
    const bytes = Number(/cut at (\d+) bytes/.exec(found[0]?.text ?? '')?.[1]);
    expect(bytes).toBeGreaterThan(1024 * 1024 - 3);
    expect(bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(found[0]?.text).not.toContain('\uFFFD');
    const stats = await session.callTool('log_stats', { paths: [live] });
    expect(stats.structured).toMatchObject({ entries: 1, continuationLines: 99, files: [{ lines: 100 }] });
  }, 60_000);

  it('a tail reading backwards through fragments that go on past its scan limit stops there and says where the entry starts', async () => {
    fx = await fixture({ limits: { maxTailScanBytes: 1024 * 1024 } });
    const live = await put(fx, 'pods/ns_pod_uid/c/0.log', '');
    const body = [`${t(0)} stdout F ERROR first`, ...Array.from({ length: 4000 }, (_, i) => `${t(1)} stdout P ${String(i).padStart(1000, '.')}`), `${t(2)} stdout F end`, `${t(3)} stderr F ERROR last`];
    await writeFile(live, lines(...body));
    const session = await fx.connect();
    const last = await session.callTool('tail_log', { path: live, lines: 2 });
    // The newest entry fits; the 1 MiB one before it does not (the answer's cap).
    expect(last.structured).toMatchObject({ lines: [`${t(3)} stderr F ERROR last`], cutByBytes: true });
    const tail = await session.callTool('tail_log', { path: live, lines: 1, fields: { stream: 'stdout' } });
    expect(tail.isError, tail.text).toBe(false);
    const s = tail.structured as { lines: string[]; stoppedEarly?: string; reachedStart: boolean };
    expect(s).toMatchObject({ stoppedEarly: 'scan-limit', reachedStart: false });
    expect(s.lines).toHaveLength(1);
    expect(s.lines[0]).toMatch(/ \[cut: the entry's end did not fit in 1048576 bytes; its start is before the part read\]$/);
    // The whole file, forwards: 3 entries in 4003 lines.
    const stats = await session.callTool('log_stats', { paths: [live] });
    expect(stats.structured).toMatchObject({ entries: 3, continuationLines: 4000, files: [{ lines: 4003 }] });
    // A search counts the lines of chunks it only looks into for fragments (8 chunks of 512 KiB) exactly.
    expect((await search(session, { paths: [live], pattern: 'ERROR last', literal: true })).map((m) => m.line)).toEqual([4003]);
    expect((await search(session, { paths: [live], pattern: '\\.{999}3999end', literal: false })).map((m) => m.line)).toEqual([]);
    expect((await search(session, { paths: [live], level: 'error' })).map((m) => m.line)).toEqual([1, 4003]);
  }, 60_000);
});
