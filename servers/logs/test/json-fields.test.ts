import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

/**
 * JSON lines as the common loggers write them, and the fields filters and group_by of search_logs,
 * tail_log and log_stats over them, through the protocol (in-process and over stdio of the bin).
 */

const PINO = JSON.stringify({ level: 50, time: 1764547200000, pid: 1, hostname: 'h', service: 'api', status: 502, msg: 'upstream failed' });
const BUNYAN = JSON.stringify({ name: 'api', hostname: 'h', pid: 1, level: 40, msg: 'slow request', time: '2026-12-01T00:00:01.000Z', v: 0, service: 'api', status: 200 });
const ZAP = JSON.stringify({ level: 'error', ts: 1764547202.5, caller: 'main.go:10', msg: 'db down', service: 'worker', status: '500' });
const STRUCTLOG = JSON.stringify({ event: 'user login', level: 'info', timestamp: '2026-12-01T00:00:03Z', service: 'auth', status: 200 });
const ECS = JSON.stringify({ '@timestamp': '2026-12-01T00:00:04.000Z', 'log.level': 'error', message: 'payment declined', service: { name: 'billing' }, http: { response: { status_code: 503 } }, 'ecs.version': '1.6.0' });
const OTEL = JSON.stringify({ timeUnixNano: '1764547205000000000', severityText: 'WARN', severityNumber: 13, body: { stringValue: 'queue backlog' }, attributes: { 'service.name': 'queue' } });
const ALL = [PINO, BUNYAN, ZAP, STRUCTLOG, ECS, OTEL];

interface Match {
  line: number;
  text: string;
  time?: string;
  level?: string;
  group?: string;
}

describe.each(TRANSPORTS)('JSON lines fields (%s)', (transport) => {
  let fx: Fixture;
  let session: TestSession;
  let file: string;
  let text: string;
  beforeAll(async () => {
    fx = await fixture({ transport });
    file = await fx.write('app.jsonl', lines(...ALL));
    text = await fx.write('plain.log', lines('2026-12-01T00:00:00Z ERROR status=500 service=api in plain text'));
    session = await fx.connect();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('detects level, time and message of pino, bunyan, zap, structlog, ECS and OpenTelemetry lines', async () => {
    const out = await session.callTool('search_logs', { paths: [file], level: 'trace' });
    expect(out.isError, out.text).toBe(false);
    const matches = (out.structured as { matches: Match[] }).matches;
    expect(matches.map((m) => [m.line, m.level, m.time])).toEqual([
      [1, 'error', '2025-12-01T00:00:00.000Z'],
      [2, 'warning', '2026-12-01T00:00:01.000Z'],
      [3, 'error', '2025-12-01T00:00:02.500Z'],
      [4, 'info', '2026-12-01T00:00:03.000Z'],
      [5, 'error', '2026-12-01T00:00:04.000Z'],
      [6, 'warning', '2025-12-01T00:00:05.000Z'],
    ]);
    const stats = await session.callTool('log_stats', { paths: [file], errorLevel: 'warning' });
    const top = (stats.structured as { topErrors: { example: string }[] }).topErrors.map((t) => t.example).sort();
    expect(top).toEqual(['db down', 'payment declined', 'queue backlog', 'slow request', 'upstream failed']);
  });

  it('search_logs filters on fields: equality, comparisons, dotted paths, and != that holds for a missing field', async () => {
    const search = async (fields: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<number[]> => {
      const out = await session.callTool('search_logs', { paths: [file, text], fields, ...extra });
      expect(out.isError, out.text).toBe(false);
      return (out.structured as { matches: Match[] }).matches.map((m) => m.line);
    };
    expect(await search({ service: 'api', status: '>=500' })).toEqual([1]);
    // A status written as text compares as a number too; a plain-text line never matches a field filter.
    expect(await search({ status: '>=500' })).toEqual([1, 3]);
    expect(await search({ status: 200 })).toEqual([2, 4]);
    expect(await search({ 'http.response.status_code': '>500' })).toEqual([5]);
    expect(await search({ 'attributes.service.name': 'queue' })).toEqual([6]);
    expect(await search({ 'log.level': 'error' })).toEqual([5]);
    expect(await search({ service: '!=api', level: '!=info' })).toEqual([3, 5, 6]);
    expect(await search({ status: '<300' }, { pattern: 'slow' })).toEqual([2]);
    expect(await search({ caller: '=main.go:10' })).toEqual([3]);
  });

  it('group_by counts per value in log_stats (every entry), search_logs and tail_log (what they return)', async () => {
    const stats = await session.callTool('log_stats', { paths: [file], group_by: 'service' });
    expect(stats.isError, stats.text).toBe(false);
    expect(stats.structured).toMatchObject({
      entries: 6,
      groups: [
        { value: 'api', count: 2, errors: 1 },
        { value: '(none)', count: 1, errors: 0 },
        { value: 'auth', count: 1, errors: 0 },
        { value: 'worker', count: 1, errors: 1 },
        { value: '{"name":"billing"}', count: 1, errors: 1 },
      ],
      distinctGroups: 5,
      groupsOther: 0,
    });
    expect(stats.text).toMatch(/By service \(5 values\):\n2 {2}api {2}\(1 error\)/);
    const filtered = await session.callTool('log_stats', { paths: [file], fields: { status: '>=500' }, group_by: 'service' });
    expect(filtered.structured).toMatchObject({ entries: 2, groups: [{ value: 'api', count: 1 }, { value: 'worker', count: 1 }] });

    const search = await session.callTool('search_logs', { paths: [file], level: 'warning', group_by: 'service' });
    const s = search.structured as { matches: Match[]; groups: { value: string; count: number }[] };
    expect(s.groups).toEqual([
      { value: 'api', count: 2 },
      { value: '(none)', count: 1 },
      { value: 'worker', count: 1 },
      { value: '{"name":"billing"}', count: 1 },
    ]);
    expect(s.matches.map((m) => m.group)).toEqual(['api', 'api', 'worker', '{"name":"billing"}', '(none)']);

    const tail = await session.callTool('tail_log', { path: file, fields: { service: 'api' }, group_by: 'status' });
    expect(tail.isError, tail.text).toBe(false);
    expect(tail.structured).toMatchObject({ entries: 2, lines: [PINO, BUNYAN], groups: [{ value: '200', count: 1 }, { value: '502', count: 1 }] });
    expect(tail.text).toMatch(/\[by status: 200 1, 502 1\]/);
  });

  it('filters logfmt entries by their keys too', async () => {
    const logfmt = await fx.write('svc.log', lines('time=2026-12-01T00:00:00Z level=info service=api status=200 msg=ok', 'time=2026-12-01T00:00:01Z level=error service=api status=503 msg="bad gateway"'));
    const out = await session.callTool('search_logs', { paths: [logfmt], fields: { status: '>=500' } });
    expect((out.structured as { matches: Match[] }).matches.map((m) => m.line)).toEqual([2]);
  });
});

describe('field values with terminal controls (in-process)', () => {
  it('group values and filtered entries show escapes, never the control characters', async () => {
    const fx = await fixture();
    try {
      const file = await fx.write('esc.jsonl', lines(JSON.stringify({ level: 'error', msg: 'x', service: '\u001b[2J\u001b]8;;http://evil\u0007api' })));
      const session = await fx.connect();
      for (const [tool, args] of [
        ['log_stats', { paths: [file], group_by: 'service' }],
        ['search_logs', { paths: [file], level: 'error', group_by: 'service' }],
        ['tail_log', { path: file, group_by: 'service' }],
      ] as const) {
        const out = await session.callTool(tool, args);
        expect(out.isError, out.text).toBe(false);
        const all = `${out.text}${JSON.stringify(out.structured)}`;
        expect(all.includes("\u001b") || all.includes("\u0007")).toBe(false);
        expect(out.text).toMatch(/\\x1b\[2J\\x1b\]8;;http:\/\/evil\\x07api/);
      }
    } finally {
      await fx.close();
    }
  });
});
