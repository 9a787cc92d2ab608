import { afterEach, describe, expect, it } from 'vitest';
import { protocolError } from '@suite/test-kit';
import { TRANSPORTS, fixture, isoAgo, lines, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe.each(TRANSPORTS)('prompts (%s)', (transport) => {
  it('analyze-logs embeds logs://recent, or one log\'s filtered view, as resource content', async () => {
    fx = await fixture({ transport });
    const api = await fx.write('api.log', lines(`${isoAgo(200)} ERROR too old`, `${isoAgo(30)} ERROR upstream timeout`, `${isoAgo(5)} INFO ok`));
    await fx.write('db.log', lines(`${isoAgo(10)} WARN slow query`));
    const session = await fx.connect();
    const all = await session.getPrompt('analyze-logs', { timeframe: '1h' });
    expect(all.messages[0]?.content).toMatchObject({ type: 'text', text: expect.stringMatching(/^Analyse the log entries of the last 1h from every log written to in that time/) });
    expect(all.messages[1]?.content.type).toBe('resource');
    expect(all.resources).toEqual([{ uri: 'logs://recent?timeframe=1h', mimeType: 'text/plain', text: expect.stringContaining('[db.log]') }]);
    expect(all.resources[0]).toMatchObject({ text: expect.stringContaining('upstream timeout') });
    expect(all.resources[0]).toMatchObject({ text: expect.not.stringContaining('too old') });
    const one = await session.getPrompt('analyze-logs', { timeframe: '2h', file: api });
    expect(one.resources).toEqual([{ uri: `logs://file${api}?since=2h`, mimeType: 'text/plain', text: expect.stringContaining('upstream timeout') }]);
    expect(one.text).toContain(`from ${api}`);
    expect(await protocolError(session.getPrompt('analyze-logs', { timeframe: 'soon' }))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid timeframe "soon"/) });
    expect(await protocolError(session.getPrompt('analyze-logs', { timeframe: '1h', file: '/etc/passwd' }))).toMatchObject({ code: -32003 });
  });

  it('debug-error embeds the entries that contain the error, from the logs that have it', async () => {
    fx = await fixture({ transport });
    const api = await fx.write(
      'api.log',
      lines(`${isoAgo(30)} ERROR Connection refused: db:5432`, '  at connect (pg.js:10)', `${isoAgo(20)} INFO retry`, `${isoAgo(10)} ERROR Connection refused: db:5432`, '  at connect (pg.js:10)'),
    );
    await fx.write('worker.log', lines(`${isoAgo(15)} ERROR connection refused: db:5432 (from worker)`));
    await fx.write('web.log', lines(`${isoAgo(15)} INFO nothing to see`));
    const session = await fx.connect();
    const prompt = await session.getPrompt('debug-error', { error: 'Connection refused: db:5432' });
    expect(prompt.text).toMatch(/^Help me debug this error: "Connection refused: db:5432"\. It occurs in api\.log \(2 lines\), worker\.log \(1 line\)/);
    expect(prompt.resources.map((r) => r.uri)).toEqual([`logs://file${api}?grep=Connection%20refused%3A%20db%3A5432`, `logs://file${fx.file('worker.log')}?grep=Connection%20refused%3A%20db%3A5432`]);
    expect(prompt.resources[0]).toMatchObject({ text: expect.stringContaining('at connect (pg.js:10)') });
    expect(prompt.resources[0]).toMatchObject({ text: expect.not.stringContaining('retry') });
    const missing = await session.getPrompt('debug-error', { error: 'segfault' });
    expect(missing.text).toMatch(/It does not occur in the logs/);
    expect(missing.resources.map((r) => r.uri)).toEqual(['logs://recent?timeframe=1h']);
  });

  it('completes file names, timeframes and recent error messages', async () => {
    fx = await fixture({ transport });
    await fx.write('api.log', lines(`${isoAgo(3)} ERROR Connection refused: db:5432`, `${isoAgo(2)} ERROR Connection refused: db:5433`, `${isoAgo(1)} ERROR disk full`));
    await fx.write('app.log', lines('x'));
    const session = await fx.connect();
    expect((await session.complete({ prompt: 'analyze-logs' }, 'file', 'ap')).values).toEqual([fx.file('api.log'), fx.file('app.log')]);
    expect((await session.complete({ prompt: 'debug-error' }, 'file', fx.file('app'))).values).toEqual([fx.file('app.log')]);
    expect((await session.complete({ prompt: 'analyze-logs' }, 'timeframe', '')).values).toEqual(['5m', '15m', '1h', '6h', '24h', '7d']);
    // Distinct messages (the two refusals differ only by a number), newest first, filtered by what was typed.
    expect((await session.complete({ prompt: 'debug-error' }, 'error', '')).values).toEqual(['disk full', 'Connection refused: db:5433']);
    expect((await session.complete({ prompt: 'debug-error' }, 'error', 'refused')).values).toEqual(['Connection refused: db:5433']);
  });
});
