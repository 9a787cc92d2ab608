import { utimes } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { protocolError } from '@suite/test-kit';
import { DEFAULT_LIMITS } from '../src/server.js';
import { TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

const uriOf = (file: string): string => `logs://file${file}`;

describe.each(TRANSPORTS)('log resources (%s)', (transport) => {
  it('lists every log with size, modification time and format; rotated copies say so', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines(`${isoAgo(1)} INFO up`));
    await fx.writeGz('app.log.1.gz', lines(`${isoAgo(90)} INFO older`));
    await fx.write('events.jsonl', lines('{"time":"2026-11-21T04:00:00Z","level":"info","msg":"x"}'));
    await fx.write('readme.txt', 'not a log');
    const session = await fx.connect();
    const { resources } = await session.client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['logs://recent', uriOf(fx.file('app.log')), uriOf(fx.file('app.log.1.gz')), uriOf(fx.file('events.jsonl'))]);
    const app = resources.find((r) => r.uri === uriOf(fx!.file('app.log')));
    expect(app).toMatchObject({ name: 'app.log', mimeType: 'text/plain', size: Buffer.byteLength(lines(`${isoAgo(1)} INFO up`)) });
    expect(app?.description).toMatch(/^text with ISO 8601 timestamps, \d+ B, modified \d{4}-\d\d-\d\dT/);
    // The modification time as the protocol's annotation, exactly the file's.
    const written = new Date('2026-11-20T08:30:15.250Z');
    await utimes(fx.file('app.log'), written, written);
    const relisted = (await session.client.listResources()).resources.find((r) => r.uri === uriOf(fx!.file('app.log')));
    expect(relisted?.annotations).toEqual({ lastModified: '2026-11-20T08:30:15.250Z' });
    expect(relisted?.description).toContain('modified 2026-11-20T08:30:15.250Z');
    expect(resources.every((r) => r.uri === 'logs://recent' || typeof r.annotations?.lastModified === 'string')).toBe(true);
    expect(resources.find((r) => r.name === 'app.log.1.gz')?.description).toMatch(/, rotated from app\.log$/);
    expect(resources.find((r) => r.name === 'events.jsonl')?.description).toMatch(/^JSON lines, /);
    const { resourceTemplates } = await session.client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['logs://file/{+path}{?level,since,grep}', 'logs://file/{+path}', 'logs://recent{?timeframe}']);
  });

  it('reads a bounded tail of whole lines, saying when it is not the whole file', async () => {
    fx = await fixture({ transport });
    // The default window (as the bin has it), over a file several times its size.
    const window = DEFAULT_LIMITS.resourceTailBytes;
    const all = Array.from({ length: Math.ceil((4 * window) / 40) }, (_, i) => `${isoAgo(10_000 - i)} INFO line ${i}`);
    const file = await fx.write('app.log', lines(...all));
    await fx.write('small.log', lines('one', 'two'));
    const session = await fx.connect();
    const { contents, text } = await session.readResource(uriOf(file));
    expect(contents).toHaveLength(1);
    expect(contents[0]).toMatchObject({ uri: uriOf(file), mimeType: 'text/plain' });
    const got = text.split('\n');
    expect(got[0]).toMatch(new RegExp(`^\\[the last lines, at most ${window / 1024}\\.0 KiB, of \\d+\\.\\d KiB; use the read_log_range and search_logs tools for the rest\\]$`));
    expect(got.slice(1)).toEqual(all.slice(-got.length + 1));
    expect(Buffer.byteLength(got.slice(1).join('\n'))).toBeLessThanOrEqual(window);
    expect(Buffer.byteLength(got.slice(1).join('\n'))).toBeGreaterThan(window - 100);
    expect((await session.readResource(uriOf(fx.file('small.log')))).text).toBe('one\ntwo');
    // A .gz copy streams through a window bounded by the same size.
    await fx.writeGz('app.log.1.gz', lines(...all));
    const gz = (await session.readResource(uriOf(fx.file('app.log.1.gz')))).text.split('\n');
    expect(gz.slice(1)).toEqual(all.slice(-gz.length + 1));
    expect(gz.length).toBe(got.length);
  });

  it('filters through the query: level, since and grep, in any order and any subset', async () => {
    fx = await fixture({ transport });
    const file = await fx.write(
      'app.log',
      lines(`${isoAgo(180)} ERROR old failure`, `${isoAgo(30)} INFO fine`, `${isoAgo(20)} ERROR Timeout talking to db`, '  at db.query', `${isoAgo(10)} WARN slow timeout`, `${isoAgo(5)} ERROR disk full`),
    );
    const session = await fx.connect();
    const view = async (query: string): Promise<string[]> => (await session.readResource(`${uriOf(file)}?${query}`)).text.split('\n').map((l) => l.replace(/^\S+ /, ''));
    expect(await view('level=error')).toEqual(['ERROR old failure', 'ERROR Timeout talking to db', '  at db.query', 'ERROR disk full']);
    expect(await view('since=1h&level=error')).toEqual(['ERROR Timeout talking to db', '  at db.query', 'ERROR disk full']);
    expect(await view('grep=timeout')).toEqual(['ERROR Timeout talking to db', '  at db.query', 'WARN slow timeout']);
    expect(await view('level=error&since=1h&grep=TIMEOUT')).toEqual(['ERROR Timeout talking to db', '  at db.query']);
    expect((await session.readResource(`${uriOf(file)}?level=critical`)).text).toBe('[no entries match]');
  });

  it('answers a bad URI with the JSON-RPC error that says whose fault it is', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines('x'));
    const session = await fx.connect();
    expect(await protocolError(session.readResource(`${uriOf(fx.file('app.log'))}?level=loud`))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid level "loud" in .*: use one of trace, debug/) });
    expect(await protocolError(session.readResource(`${uriOf(fx.file('app.log'))}?colour=red`))).toMatchObject({ code: -32602, message: expect.stringMatching(/Unknown parameter "colour"/) });
    expect(await protocolError(session.readResource(uriOf(fx.file('gone.log'))))).toMatchObject({ code: -32602, message: expect.stringMatching(/^No such log file/) });
    expect(await protocolError(session.readResource('logs://file/etc/passwd'))).toMatchObject({ code: -32003 });
    expect(await protocolError(session.readResource('logs://recent?timeframe=forever'))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid timeframe "forever"/) });
  });

  it('logs://recent merges the entries of the timeframe across logs, in time order', async () => {
    fx = await fixture({ transport });
    await fx.write('api.log', lines(`${isoAgo(120)} INFO api too old`, `${isoAgo(40)} ERROR api failed`, '  at api.js:1', `${isoAgo(10)} INFO api recovered`));
    await fx.write('worker.jsonl', lines(`{"time":"${isoAgo(50)}","level":"warn","msg":"worker slow"}`, `{"time":"${isoAgo(20)}","level":"info","msg":"worker ok"}`));
    const session = await fx.connect();
    const hour = (await session.readResource('logs://recent?timeframe=1h')).text.split('\n');
    expect(hour[0]).toBe('[entries of the last 1h from 2 logs]');
    expect(hour.slice(1).map((l) => l.replace(/ \S+Z /, ' ').replace(/"time":"[^"]+",/, ''))).toEqual([
      '[worker.jsonl] {"level":"warn","msg":"worker slow"}',
      '[api.log] ERROR api failed',
      '[api.log]   at api.js:1',
      '[worker.jsonl] {"level":"info","msg":"worker ok"}',
      '[api.log] INFO api recovered',
    ]);
    const quarter = (await session.readResource('logs://recent?timeframe=15m')).text.split('\n');
    expect(quarter.slice(1)).toEqual([expect.stringMatching(/^\[api\.log\] .* INFO api recovered$/)]);
    expect((await session.readResource('logs://recent')).text).toContain('api failed');
  });

  it('completes template paths from the known logs', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines('x'));
    await fx.write('api.log', lines('x'));
    await fx.write('db.log', lines('x'));
    const session = await fx.connect();
    const byPrefix = await session.complete({ template: 'logs://file/{+path}' }, 'path', fx.file('a').slice(1));
    expect(byPrefix.values).toEqual([fx.file('api.log').slice(1), fx.file('app.log').slice(1)]);
    const byName = await session.complete({ template: 'logs://file/{+path}{?level,since,grep}' }, 'path', 'db');
    expect(byName.values).toEqual([fx.file('db.log').slice(1)]);
    expect((await session.complete({ template: 'logs://recent{?timeframe}' }, 'timeframe', '1')).values).toEqual(['15m', '1h']);
  });
});
