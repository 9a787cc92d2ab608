import { afterEach, describe, expect, it } from 'vitest';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

interface Stats {
  entries: number;
  continuationLines: number;
  levels: Record<string, number>;
  bucket: string;
  timeline: { start: string; counts: Record<string, number> }[];
  topErrors: { pattern: string; count: number; example: string; level: string; first?: string; last?: string }[];
  distinctErrors: number;
  complete: boolean;
  files: { file: string; lines?: number; skipped?: string }[];
}

describe.each(TRANSPORTS)('log_stats (%s)', (transport) => {
  it('counts entries by level per time bucket, multi-line entries once', async () => {
    fx = await fixture({ transport });
    const body: string[] = [];
    // 10:00-10:59: 60 info; 10:15 and 10:45 errors with a stack trace each; 11:00-11:29 warnings.
    for (let m = 0; m < 60; m++) body.push(`2026-11-21T10:${String(m).padStart(2, '0')}:00Z INFO tick ${m}`);
    body.splice(16, 0, '2026-11-21T10:15:30Z ERROR request 4411 failed after 3001 ms (upstream 10.0.0.12:8080)', '  at handler (server.js:10)');
    body.splice(48, 0, '2026-11-21T10:45:30Z ERROR request 90 failed after 12 ms (upstream 10.0.0.7:8080)', '  at handler (server.js:10)');
    for (let m = 0; m < 30; m++) body.push(`2026-11-21T11:${String(m).padStart(2, '0')}:00Z WARN queue length ${m * 10}`);
    await fx.write('svc.log', lines(...body));
    const session = await fx.connect();
    const out = await session.callTool('log_stats', { bucket: '30m' });
    expect(out.isError, out.text).toBe(false);
    const stats = out.structured as unknown as Stats;
    expect(stats).toMatchObject({ entries: 92, continuationLines: 2, levels: { info: 60, error: 2, warning: 30 }, bucket: '30m', complete: true });
    expect(stats.timeline).toEqual([
      { start: '2026-11-21T10:00:00.000Z', counts: { info: 30, error: 1 } },
      { start: '2026-11-21T10:30:00.000Z', counts: { info: 30, error: 1 } },
      { start: '2026-11-21T11:00:00.000Z', counts: { warning: 30 } },
    ]);
    // Numbers, durations and addresses normalised: the two failures are one pattern.
    expect(stats.topErrors).toEqual([
      {
        pattern: 'request <n> failed after <n> ms (upstream <ip>)',
        count: 2,
        example: 'request 4411 failed after 3001 ms (upstream 10.0.0.12:8080)',
        level: 'error',
        first: '2026-11-21T10:15:30.000Z',
        last: '2026-11-21T10:45:30.000Z',
      },
    ]);
    expect(out.text).toContain('2x [error] request <n> failed after <n> ms (upstream <ip>)');
    const auto = await session.callTool('log_stats', {});
    expect((auto.structured as unknown as Stats).bucket).toBe('5m');
  });

  it('groups errors whose ids, UUIDs and hex differ, ranks by count, and counts warnings when asked', async () => {
    fx = await fixture({ transport });
    const body: string[] = [];
    for (let i = 0; i < 5; i++) body.push(`2026-11-21T10:00:0${i}Z ERROR order 7f3a9c${i}e1b2 not found for user ${1000 + i}`);
    for (let i = 0; i < 3; i++) body.push(`2026-11-21T10:01:0${i}Z ERROR session 3f2504e0-4f89-11d3-9a0c-0305e82c330${i} expired`);
    body.push('2026-11-21T10:02:00Z CRITICAL out of memory');
    body.push('2026-11-21T10:03:00Z WARN cache miss for key user:42');
    await fx.write('ids.log', lines(...body));
    const session = await fx.connect();
    const out = await session.callTool('log_stats', {});
    const stats = out.structured as unknown as Stats;
    expect(stats.topErrors.map((t) => [t.pattern, t.count, t.level])).toEqual([
      ['order <hex> not found for user <n>', 5, 'error'],
      ['session <uuid> expired', 3, 'error'],
      ['out of memory', 1, 'critical'],
    ]);
    expect(stats.distinctErrors).toBe(3);
    const withWarnings = await session.callTool('log_stats', { errorLevel: 'warning', topErrors: 10 });
    expect((withWarnings.structured as unknown as Stats).topErrors.map((t) => t.pattern)).toContain('cache miss for key user:<n>');
  });

  it('groups ids of letters and digits mixed (<id>), and keeps plain words and short codes apart', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'ids.log',
      lines(
        '2026-11-21T10:00:00Z ERROR job req-8Kq2zP failed on worker wkr7Tx',
        '2026-11-21T10:00:01Z ERROR job req-9Xw7yT failed on worker wkr3Gm',
        '2026-11-21T10:00:02Z ERROR job user42x failed on worker wkr9Qa',
        // Not ids: a word without digits, and a letters-and-digits word shorter than six characters.
        '2026-11-21T10:00:03Z ERROR job cleanup failed on worker wkr9Qa',
        '2026-11-21T10:00:04Z ERROR code E42 unknown',
        '2026-11-21T10:00:05Z ERROR code E43 unknown',
      ),
    );
    const session = await fx.connect();
    const stats = (await session.callTool('log_stats', {})).structured as unknown as Stats;
    expect(stats.topErrors.map((t) => [t.pattern, t.count, t.example])).toEqual([
      ['job <id> failed on worker <id>', 3, 'job req-8Kq2zP failed on worker wkr7Tx'],
      ['code E<n> unknown', 2, 'code E42 unknown'],
      ['job cleanup failed on worker <id>', 1, 'job cleanup failed on worker wkr9Qa'],
    ]);
    expect(stats.distinctErrors).toBe(3);
  });

  it('reports progress while it counts', async () => {
    fx = await fixture({ transport });
    // About 10 MiB in two files: many chunks, so progress comes on the way, well before the answer.
    const body = (from: number): string => lines(...Array.from({ length: 80_000 }, (_, i) => `${new Date(Date.UTC(2026, 10, 21) + (from + i) * 1000).toISOString()} INFO request ${from + i} served`));
    await fx.write('app.log.1', body(0));
    await fx.write('app.log', body(80_000));
    const session = await fx.connect();
    const progress: { progress: number; total?: number; message?: string }[] = [];
    const out = await session.callTool('log_stats', {}, { onprogress: (p) => progress.push(p) });
    const stats = out.structured as unknown as Stats & { bytesScanned: number };
    expect(stats).toMatchObject({ entries: 160_000, complete: true });
    // The report that reaches the total comes with the answer and may be dropped by the client (see
    // the search_logs progress test); the ones on the way are asserted.
    expect(progress[0]).toMatchObject({ total: stats.bytesScanned, message: 'counting' });
    expect(progress[0]?.progress).toBeLessThan(stats.bytesScanned);
    expect(progress.map((p) => p.progress)).toEqual([...progress.map((p) => p.progress)].sort((a, b) => a - b));
  });

  it('restricts to a time range, and covers rotated and .gz copies', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines('2026-11-21T12:00:00Z ERROR live', '2026-11-21T12:30:00Z INFO live'));
    await fx.writeGz('app.log.1.gz', lines('2026-11-21T11:00:00Z ERROR rotated', '2026-11-21T11:30:00Z INFO rotated'));
    const session = await fx.connect();
    const all = (await session.callTool('log_stats', {})).structured as unknown as Stats;
    expect(all).toMatchObject({ entries: 4, levels: { error: 2, info: 2 } });
    expect(all.files.map((f) => [f.file.slice(fx!.dir.length + 1), f.lines])).toEqual([
      ['app.log', 2],
      ['app.log.1.gz', 2],
    ]);
    const window = (await session.callTool('log_stats', { since: '2026-11-21T11:15:00Z', until: '2026-11-21T12:15:00Z' })).structured as unknown as Stats;
    expect(window).toMatchObject({ entries: 2, levels: { error: 1, info: 1 } });
    const live = (await session.callTool('log_stats', { includeRotated: false })).structured as unknown as Stats;
    expect(live.entries).toBe(2);
  });
});

describe('log_stats time budget (in-process: its default is a setting the command line does not have)', () => {
  it('stops at the budget with what it counted so far, saying it is incomplete; timeBudgetSeconds overrides the default', async () => {
    // A budget of 1 ms runs out after the first chunk of the first file.
    fx = await fixture({ limits: { statsBudgetMs: 1 } });
    const body = (name: string): string => lines(...Array.from({ length: 20_000 }, (_, i) => `${new Date(Date.UTC(2026, 10, 21) + i * 1000).toISOString()} ERROR ${name} failed ${i}`));
    await fx.write('a.log', body('a'));
    await fx.write('b.log', body('b'));
    const session = await fx.connect();
    const cut = await session.callTool('log_stats', {});
    const partial = cut.structured as unknown as Stats;
    expect(cut.isError).toBe(false);
    expect(partial.complete).toBe(false);
    expect(partial.entries).toBeGreaterThan(0);
    expect(partial.entries).toBeLessThan(20_000);
    expect(partial.files).toEqual([{ file: fx.file('a.log'), lines: partial.entries }]);
    expect(cut.text).toMatch(/\[incomplete: the time budget of 0\.001 s ran out; narrow the files or the time range, or raise timeBudgetSeconds\]$/);
    const whole = await session.callTool('log_stats', { timeBudgetSeconds: 60 });
    expect(whole.structured).toMatchObject({ entries: 40_000, complete: true, files: [{ file: fx.file('a.log'), lines: 20_000 }, { file: fx.file('b.log'), lines: 20_000 }] });
    expect(whole.text).not.toContain('[incomplete');
  });
});
