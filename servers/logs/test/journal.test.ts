import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, waitUntil } from '@suite/test-kit';
import { bridgeToApp, startAppServer } from '@suite/test-kit/apps';
import { HostConnection } from '@suite/shared/app-kit/rpc';
import { LogViewerController } from '../app/controller.js';
import { buildServer } from '../src/server.js';
import { bootId, writeJournal, type JournalTestEntry } from '@suite/test-kit/journal';
import { connectModernStdio, untilListenUpdate } from '@suite/test-kit/eras';
import { BIN, TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

/**
 * The systemd journal as a source, on real journal files: systemd-journal-remote writes them from
 * the export format (and appends to them), journalctl reads them, through every tool, the
 * resources and a subscription that follows new entries by journal cursor.
 */

const BOOT_1 = bootId();
const BOOT_2 = bootId();
const BOOT_3 = bootId();
const START = (Date.now() - 3_600_000) * 1000;
const at = (seconds: number): number => START + seconds * 1_000_000;

/** Two boots; units a (info, warning) and b (errors), and a kernel-ish entry without a unit. */
const ENTRIES: JournalTestEntry[] = [
  { micros: at(0), boot: BOOT_1, unit: 'a.service', priority: 6, message: 'a started', pid: 100 },
  { micros: at(1), boot: BOOT_1, unit: 'b.service', priority: 3, message: 'boom 1 in b', pid: 200 },
  { micros: at(2), boot: BOOT_1, priority: 5, identifier: 'kernel', message: 'a kernel notice' },
  { micros: at(60), boot: BOOT_2, unit: 'a.service', priority: 4, message: 'a warns after the reboot', pid: 101 },
  { micros: at(61), boot: BOOT_2, unit: 'b.service', priority: 3, message: 'boom 2 in b', pid: 201 },
  { micros: at(62), boot: BOOT_2, unit: 'b.service', priority: 2, message: 'b critical\nsecond line of it', pid: 201 },
];

interface Journal {
  fx: Fixture;
  file: string;
}

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of open.splice(0).reverse()) await close().catch(() => undefined);
});

async function journalFixture(transport: (typeof TRANSPORTS)[number], entries = ENTRIES): Promise<Journal> {
  const { dir, cleanup } = await makeTempDir('suite-logs-journal-');
  open.push(cleanup);
  const file = path.join(dir, 'remote.journal');
  await writeJournal(file, entries);
  const fx = await fixture({ transport, config: { journals: [{ kind: 'directory', directory: dir }] } });
  open.push(() => fx.close());
  return { fx, file };
}

/** Every string in a structured value. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object') return Object.values(value).flatMap(strings);
  return [];
}

function parsed(lines: unknown): Record<string, unknown>[] {
  return (lines as string[]).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe.each(TRANSPORTS)('the journal as a source (%s)', (transport) => {
  it('lists the journal and its units, tails them with filters, and reads time ranges', async () => {
    const { fx } = await journalFixture(transport);
    await fx.write('app.log', lines(`${isoAgo(1)} INFO a file beside the journal`));
    const session = await fx.session();

    const listed = await session.callTool('list_logs');
    expect(listed.isError).toBe(false);
    const rows = (listed.structured as { logs: { path: string; format: string; source?: string }[] }).logs;
    expect(rows.filter((r) => r.format === 'journal').map((r) => r.path)).toEqual(['logs://journal', 'logs://journal/a.service', 'logs://journal/b.service']);
    expect(rows.find((r) => r.path === 'logs://journal')?.source).toMatch(/^journal files in /);
    const journalRow = rows.find((r) => r.path === 'logs://journal') as unknown as { size: number; modified: string };
    expect(journalRow.size).toBeGreaterThan(0);
    expect(Date.parse(journalRow.modified)).toBeGreaterThan(Date.now() - 600_000);
    expect(rows.some((r) => r.path.endsWith('app.log'))).toBe(true);

    const all = await session.callTool('tail_log', { path: 'logs://journal', lines: 100 });
    expect(all.isError).toBe(false);
    const entries = parsed(all.structured?.lines);
    expect(entries.map((e) => e.message)).toEqual(ENTRIES.map((e) => e.message));
    expect(entries.map((e) => e.level)).toEqual(['info', 'error', 'notice', 'warning', 'error', 'critical']);
    expect(entries[0]).toMatchObject({ _SYSTEMD_UNIT: 'a.service', SYSLOG_IDENTIFIER: 'a', _PID: '100', _BOOT_ID: BOOT_1, PRIORITY: '6' });
    expect(entries[0]?.time).toBe(new Date(START / 1000).toISOString().replace('Z', '000Z'));
    expect(all.structured).toMatchObject({ path: 'logs://journal', format: 'json', reachedStart: true });

    const unit = await session.callTool('tail_log', { path: 'logs://journal/b.service', lines: 1 });
    expect(parsed(unit.structured?.lines).map((e) => e.message)).toEqual(['b critical\nsecond line of it']);
    const errors = await session.callTool('tail_log', { path: 'logs://journal', level: 'error', lines: 10, group_by: '_SYSTEMD_UNIT' });
    expect(parsed(errors.structured?.lines).map((e) => e.message)).toEqual(['boom 1 in b', 'boom 2 in b', 'b critical\nsecond line of it']);
    expect(errors.structured?.groups).toEqual([{ value: 'b.service', count: 3 }]);
    const boot = await session.callTool('tail_log', { path: 'logs://journal', fields: { _BOOT_ID: BOOT_2, _PID: '>=200' } });
    expect(parsed(boot.structured?.lines).map((e) => e.message)).toEqual(['boom 2 in b', 'b critical\nsecond line of it']);
    const grep = await session.callTool('tail_log', { path: 'logs://journal', grep: 'REBOOT' });
    expect(parsed(grep.structured?.lines).map((e) => e.message)).toEqual(['a warns after the reboot']);

    const range = await session.callTool('read_log_range', { path: 'logs://journal', since: new Date(at(30) / 1000).toISOString(), until: new Date(at(61) / 1000).toISOString() });
    expect(parsed(range.structured?.lines).map((e) => e.message)).toEqual(['a warns after the reboot', 'boom 2 in b']);
    const byLine = await session.callTool('read_log_range', { path: 'logs://journal', startLine: 1 });
    expect(byLine.isError).toBe(true);
    expect(byLine.text).toMatch(/no line numbers: give since\/until/);

    const badUnit = await session.callTool('tail_log', { path: 'logs://journal/*.service' });
    expect(badUnit.isError).toBe(true);
    expect(badUnit.text).toMatch(/without wildcards/);
  });

  it('searches and counts the journal with field filters and group_by, beside files', async () => {
    const { fx } = await journalFixture(transport);
    await fx.write('app.log', lines(`${isoAgo(1)} ERROR boom in a file`));
    const session = await fx.session();

    const search = await session.callTool('search_logs', { pattern: 'boom', paths: ['logs://journal'] });
    expect(search.isError).toBe(false);
    const matches = search.structured?.matches as { file: string; level: string; time: string; text: string }[];
    expect(matches.map((m) => [m.file, m.level, (JSON.parse(m.text) as { message: string }).message])).toEqual([
      ['logs://journal', 'error', 'boom 1 in b'],
      ['logs://journal', 'error', 'boom 2 in b'],
    ]);
    expect(matches[0]?.time).toBe(new Date(Math.floor(at(1) / 1000)).toISOString());

    // Without paths: every file and the journal.
    const everywhere = await session.callTool('search_logs', { pattern: 'boom', literal: true });
    expect((everywhere.structured?.matches as unknown[]).length).toBe(3);
    const fields = await session.callTool('search_logs', { fields: { _SYSTEMD_UNIT: 'b.service', PRIORITY: '<=2' }, paths: ['logs://journal'] });
    expect((fields.structured?.matches as { text: string }[]).map((m) => (JSON.parse(m.text) as { message: string }).message)).toEqual(['b critical\nsecond line of it']);
    const unit = await session.callTool('search_logs', { level: 'warning', paths: ['logs://journal/a.service'], group_by: '_BOOT_ID' });
    expect(unit.structured?.groups).toEqual([{ value: BOOT_2, count: 1 }]);

    const stats = await session.callTool('log_stats', { paths: ['logs://journal'], group_by: '_BOOT_ID' });
    expect(stats.isError).toBe(false);
    expect(stats.structured).toMatchObject({ entries: 6, levels: { info: 1, error: 2, notice: 1, warning: 1, critical: 1 }, complete: true });
    expect(stats.structured?.groups).toEqual([
      { value: BOOT_1, count: 3, errors: 1 },
      { value: BOOT_2, count: 3, errors: 2 },
    ].sort((x, y) => (x.value < y.value ? -1 : 1)));
    expect((stats.structured?.topErrors as { pattern: string; count: number }[])[0]).toMatchObject({ pattern: 'boom <n> in b', count: 2 });
    // Files and the journal together: the file's error counts too.
    const both = await session.callTool('log_stats', { fields: { _SYSTEMD_UNIT: 'b.service' } });
    expect(both.structured).toMatchObject({ entries: 3 });
    const mixed = await session.callTool('log_stats', {});
    expect(mixed.structured).toMatchObject({ entries: 7 });
    expect((mixed.structured?.files as { file: string }[]).map((f) => f.file)).toContain('logs://journal');
  });

  it('is a resource per unit, and a subscription follows appended entries by cursor: each exactly once, across a boot change', async () => {
    const { fx, file } = await journalFixture(transport);
    const session = await fx.session();
    const listed = await session.client.listResources();
    expect(listed.resources.map((r) => r.uri)).toEqual(expect.arrayContaining(['logs://journal', 'logs://journal/a.service', 'logs://journal/b.service']));
    const read = await session.readResource('logs://journal/a.service');
    expect(read.text.split('\n').map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['a started', 'a warns after the reboot']);

    const uri = 'logs://journal/b.service';
    await session.client.subscribeResource({ uri });
    const start = await session.callTool('read_new_lines', { path: uri });
    expect(start.structured?.status).toBe('started');
    let cursor = start.structured?.cursor as string;
    const seen: string[] = [];
    const drain = async (): Promise<void> => {
      for (;;) {
        const next = await session.callTool('read_new_lines', { path: uri, cursor, maxBytes: 2048 });
        expect(next.isError).toBe(false);
        seen.push(...parsed(next.structured?.lines).map((e) => e.message as string));
        cursor = next.structured?.cursor as string;
        if (!next.structured?.more) return;
      }
    };
    const BATCHES = 4;
    const PER_BATCH = 9;
    let t = 120;
    for (let batch = 0; batch < BATCHES; batch++) {
      // The third batch comes after a reboot.
      const boot = batch < 2 ? BOOT_2 : BOOT_3;
      const appended: JournalTestEntry[] = [];
      for (let i = 0; i < PER_BATCH; i++) {
        appended.push({ micros: at(t++), boot, unit: 'b.service', priority: 6, message: `b entry ${batch}.${i}` }, { micros: at(t++), boot, unit: 'a.service', priority: 6, message: `a noise ${batch}.${i}` });
      }
      await session.notifiedBy('notifications/resources/updated', () => writeJournal(file, appended), { uri, what: `batch ${batch} appended`, timeoutMs: 15_000 });
      await drain();
    }
    await drain();
    const expected = Array.from({ length: BATCHES * PER_BATCH }, (_, k) => `b entry ${Math.floor(k / PER_BATCH)}.${k % PER_BATCH}`);
    expect(seen).toEqual(expected);
    const quiet = await session.callTool('read_new_lines', { path: uri, cursor });
    expect(quiet.structured).toMatchObject({ status: 'unchanged', lines: [] });
  }, 90_000);

  it('the prompts read the journal: analyze-logs over a timeframe, debug-error for the entries holding an error', async () => {
    const recent: JournalTestEntry[] = [
      { micros: (Date.now() - 7_200_000) * 1000, boot: BOOT_1, unit: 'b.service', priority: 3, message: 'old failure: disk full' },
      { micros: (Date.now() - 60_000) * 1000, boot: BOOT_2, unit: 'b.service', priority: 3, message: 'recent failure: disk full' },
      { micros: (Date.now() - 30_000) * 1000, boot: BOOT_2, unit: 'a.service', priority: 6, message: 'all is well' },
    ];
    const { fx } = await journalFixture(transport, recent);
    const session = await fx.session();
    const analysis = await session.getPrompt('analyze-logs', { timeframe: '1h', file: 'logs://journal/b.service' });
    expect(analysis.text).toContain('recent failure: disk full');
    expect(analysis.text).not.toContain('old failure');
    expect(analysis.text).not.toContain('all is well');
    const debug = await session.getPrompt('debug-error', { error: 'DISK FULL', file: 'logs://journal' });
    expect(debug.text).toMatch(/old failure: disk full[\s\S]*recent failure: disk full/);
    expect(debug.text).not.toContain('all is well');
  });

  it('hostile input: terminal escapes in a journal field and message are shown as escapes, never sent raw', async () => {
    const ESC = '\u001b';
    const hostile: JournalTestEntry[] = [
      {
        micros: at(0),
        boot: BOOT_1,
        unit: 'evil.service',
        priority: 3,
        message: `owned ${ESC}]8;;http://evil.example${ESC}\\link${ESC}]8;;${ESC}\\ ${ESC}[2J\u0007 done`,
        fields: { EVIL_FIELD: `${ESC}[31mred${ESC}[0m\r` },
      },
    ];
    const { fx } = await journalFixture(transport, hostile);
    const session = await fx.session();
    const raw = (s: string): boolean => [ESC, '\u0007', '\r'].some((c) => s.includes(c));
    const answers = [
      await session.callTool('tail_log', { path: 'logs://journal/evil.service', group_by: 'EVIL_FIELD' }),
      await session.callTool('search_logs', { pattern: 'owned', paths: ['logs://journal'], group_by: 'EVIL_FIELD' }),
      await session.callTool('log_stats', { paths: ['logs://journal'], group_by: 'EVIL_FIELD' }),
      await session.callTool('list_logs'),
    ];
    for (const answer of answers) {
      expect(answer.isError).toBe(false);
      expect(raw(answer.text)).toBe(false);
      expect(strings(answer.structured).filter(raw)).toEqual([]);
    }
    const stats = answers[2]!.structured as { topErrors: { example: string }[]; groups: { value: string }[] };
    expect(stats.topErrors[0]?.example).toContain('\\x1b]8;;http://evil.example');
    expect(stats.groups[0]?.value).toContain('\\x1b[31mred');
    const resource = await session.readResource('logs://journal/evil.service');
    expect(raw(resource.text)).toBe(false);
    expect(resource.text).toContain('owned');
  });
});

describe('the journal flags', () => {
  it('a server without journals says how to read one', async () => {
    const fx = await fixture();
    open.push(() => fx.close());
    const session = await fx.session();
    const tail = await session.callTool('tail_log', { path: 'logs://journal' });
    expect(tail.isError).toBe(true);
    expect(tail.text).toMatch(/start it with --journal .* or --journal-dir/);
  });

  it('--journal reads the system journal through journalctl; a --journal-dir that does not exist stops the start', async () => {
    const fx = await fixture({ transport: 'stdio', roots: () => ({ directories: [] }), config: { journals: [{ kind: 'system' }] } });
    open.push(() => fx.close());
    const session = await fx.session();
    const listed = await session.callTool('list_logs');
    expect(listed.isError).toBe(false);
    expect((listed.structured as { logs: { path: string; source?: string }[] }).logs[0]).toMatchObject({ path: 'logs://journal', source: 'system journal' });
    const tail = await session.callTool('tail_log', { path: 'logs://journal', lines: 5 });
    // Whatever this machine's journal holds (nothing, in a container): an answer, not an error.
    expect(tail.isError).toBe(false);
    expect(tail.structured).toMatchObject({ path: 'logs://journal', format: 'json' });
    const started = spawnSync(process.execPath, [BIN, '--journal-dir', '/nonexistent/journal'], { encoding: 'utf8', timeout: 20_000 });
    expect(started.status).not.toBe(0);
    expect(started.stderr).toMatch(/--journal-dir: not found: \/nonexistent\/journal/);
  });
});

describe('the journal in the 2026-07-28 era (the built bin over stdio)', () => {
  it('a listen stream hears new entries of a unit; read_new_lines then gives each exactly once', async () => {
    const { dir, cleanup } = await makeTempDir('suite-logs-journal-listen-');
    open.push(cleanup);
    const file = path.join(dir, 'remote.journal');
    await writeJournal(file, ENTRIES);
    const client = await connectModernStdio(BIN, ['--journal-dir', dir]);
    open.push(() => client.close());
    const uri = 'logs://journal/b.service';
    const subscription = await client.listen({ resourceSubscriptions: [uri] });
    expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uri]);
    const call = async (cursor?: string): Promise<{ lines: string[]; cursor: string; more: boolean }> => {
      const result = await client.callTool({ name: 'read_new_lines', arguments: { path: uri, ...(cursor ? { cursor } : {}), maxBytes: 1024 } });
      return result.structuredContent as { lines: string[]; cursor: string; more: boolean };
    };
    let { cursor } = await call();
    const written: string[] = [];
    const seen: string[] = [];
    let t = 300;
    for (let round = 0; round < 3; round++) {
      await untilListenUpdate(client, uri, async () => {
        const boot = round === 2 ? BOOT_3 : BOOT_2;
        const batch: JournalTestEntry[] = [];
        for (let i = 0; i < 5; i++) {
          const message = `listened ${written.length}`;
          written.push(message);
          batch.push({ micros: at(t++), boot, unit: 'b.service', priority: 4, message }, { micros: at(t++), boot, unit: 'a.service', priority: 6, message: 'noise' });
        }
        await writeJournal(file, batch);
      });
      for (let more = true; more; ) {
        const next = await call(cursor);
        seen.push(...next.lines.map((l) => (JSON.parse(l) as { message: string }).message));
        cursor = next.cursor;
        more = next.more;
      }
    }
    expect(seen).toEqual(written);
    await subscription.close();
  }, 90_000);
});

describe('the log viewer on the journal', () => {
  it('shows entries with their levels and the journal fields as columns, the histogram, and follows new entries', async () => {
    const { fx, file } = await journalFixture('in-process');
    const host = await startAppServer(() => buildServer(fx.config), 'modern');
    open.push(() => host.close());
    const { bridge, port } = await bridgeToApp(host.client);
    const app = new HostConnection(port);
    const viewer = new LogViewerController(app);
    const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
    await app.initialize({ name: 'viewer-test', version: '1' });
    await initialized;
    const args = { path: 'logs://journal', lines: 100 };
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult((await host.client.callTool({ name: 'tail_log', arguments: args })) as never);
    await waitUntil(() => viewer.state.histogram !== undefined || viewer.state.error !== undefined, { what: 'the histogram' });
    expect(viewer.state.error).toBeUndefined();
    expect(viewer.state.lines.map((l) => l.level)).toEqual(['info', 'error', 'notice', 'warning', 'error', 'critical']);
    expect(viewer.state.columns.slice(0, 4)).toEqual(['_SYSTEMD_UNIT', 'SYSLOG_IDENTIFIER', '_PID', '_BOOT_ID']);
    expect(viewer.state.lines[1]?.fields).toMatchObject({ _SYSTEMD_UNIT: 'b.service', _BOOT_ID: BOOT_1 });
    expect(viewer.state.histogram!.buckets.reduce((n, b) => n + b.total, 0)).toBe(6);
    await viewer.startFollowing();
    await writeJournal(file, [{ micros: at(500), boot: BOOT_3, unit: 'c.service', priority: 3, message: 'followed in the viewer' }]);
    await viewer.poll();
    expect(viewer.state.lines.at(-1)).toMatchObject({ level: 'error', fields: { _SYSTEMD_UNIT: 'c.service' } });
    expect(viewer.state.lines).toHaveLength(7);
  });
});
