import { execFileSync } from 'node:child_process';
import { link, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError } from '@suite/test-kit';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe.each(TRANSPORTS)('access and error paths (%s)', (transport) => {
  it('answers every failure as isError with a message that says what to do', async () => {
    fx = await fixture({ transport });
    await fx.write('app.log', lines('2026-11-21T04:00:00Z INFO ok'));
    await fx.write('core.log', Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 0, 1, 2, 3]));
    await mkdir(fx.file('nested.log'));
    execFileSync('mkfifo', [fx.file('pipe.log')]);
    await symlink('/etc/passwd', fx.file('escape.log'));
    const session = await fx.connect();
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['tail_log', { path: '/etc/passwd' }, /^Access denied: "\/etc\/passwd" is outside the allowed directories\.$/],
      ['tail_log', { path: fx.file('escape.log') }, /^Access denied: .* is outside the allowed directories\.$/],
      ['tail_log', { path: fx.file('missing.log') }, /^No such log file: .*missing\.log\. Call list_logs to see the logs you can read\.$/],
      ['tail_log', { path: fx.file('nested.log') }, /is a directory\. Give a log file inside it \(list_logs shows them\)\.$/],
      ['tail_log', { path: fx.file('pipe.log') }, /pipe\.log is not a regular file\.$/],
      ['tail_log', { path: fx.file('core.log') }, /core\.log does not look like a text log \(it contains NUL bytes near its start\)\.$/],
      ['tail_log', { path: fx.file('app.log'), level: 'loud' }, /^Invalid arguments for tail_log: level: /],
      ['read_log_range', { path: fx.file('app.log') }, /^Give either startLine .* or since\/until/],
      ['read_log_range', { path: fx.file('app.log'), startLine: 5, endLine: 2 }, /^endLine \(2\) is before startLine \(5\)\.$/],
      ['read_log_range', { path: fx.file('app.log'), since: '2h', until: '3h' }, /^since \(.*\) is after until \(.*\): swap them\.$/],
      ['search_logs', { pattern: 'x', paths: ['/var/log'] }, /^Access denied: "\/var\/log" is outside the allowed directories\.$/],
    ];
    for (const [tool, args, message] of cases) {
      const out = await session.callTool(tool, args);
      expect(out.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
      expect(out.text, `${tool} ${JSON.stringify(args)}`).toMatch(message);
      expect(out.text).not.toMatch(/\n\s+at /);
    }
    // A search over the directory skips what it cannot read, and says so.
    const search = await session.callTool('search_logs', { pattern: 'ok' });
    expect(search.isError).toBe(false);
    expect(search.text).toMatch(/\[skipped .*core\.log: binary/);
  });

  it('with no directory configured and no client roots, tools say how to allow some', async () => {
    fx = await fixture({ transport, roots: () => ({ directories: [] }) });
    const session = await fx.connect();
    const out = await session.callTool('list_logs', {});
    expect(out).toMatchObject({ isError: true });
    expect(out.text).toMatch(/^No log directory or file is allowed\. Start the server with directories or log files as arguments \(for example: npx @suite\/server-logs/);
  });

  it('a log file named on the command line brings its rotations, never the rest of its directory', async () => {
    fx = await fixture({ transport, roots: (dir) => ({ files: [path.join(dir, 'app.log')] }) });
    await fx.write('app.log', lines('2026-11-21T04:00:02Z ERROR live'));
    await fx.write('app.log.1', lines('2026-11-21T04:00:01Z ERROR rotated'));
    await fx.writeGz('app.log.2.gz', lines('2026-11-21T04:00:00Z ERROR compressed'));
    await fx.write('secret.log', lines('2026-11-21T04:00:00Z ERROR password=hunter2'));
    const session = await fx.connect();
    const list = await session.callTool('list_logs', {});
    expect((list.structured as { logs: { path: string }[] }).logs.map((l) => path.basename(l.path))).toEqual(['app.log', 'app.log.1', 'app.log.2.gz']);
    const search = await session.callTool('search_logs', { pattern: 'ERROR' });
    expect((search.structured as { matches: { text: string }[] }).matches.map((m) => m.text.split(' ').pop())).toEqual(['live', 'rotated', 'compressed']);
    expect((await session.callTool('tail_log', { path: fx.file('app.log.2.gz') })).isError).toBe(false);
    const secret = await session.callTool('tail_log', { path: fx.file('secret.log') });
    expect(secret).toMatchObject({ isError: true, text: expect.stringMatching(/^Access denied/) });
    const dir = await session.callTool('search_logs', { pattern: 'password', paths: [fx.dir] });
    expect(dir).toMatchObject({ isError: true, text: expect.stringMatching(/^Access denied/) });
    // A rotation made after start-up is covered: the family is looked up per request.
    await writeFile(fx.file('app.log.3'), lines('2026-11-21T03:59:00Z ERROR rotated later'));
    expect((await session.callTool('tail_log', { path: fx.file('app.log.3') })).isError).toBe(false);
  });

  it('client roots narrow the command-line directories', async () => {
    fx = await fixture({ transport });
    await mkdir(fx.file('a'));
    await mkdir(fx.file('b'));
    await fx.write('a/one.log', lines('2026-11-21T04:00:00Z INFO one'));
    await fx.write('b/two.log', lines('2026-11-21T04:00:00Z INFO two'));
    const session = await fx.connect({ roots: [fx.file('a')] });
    const list = await session.callTool('list_logs', {});
    expect((list.structured as { logs: { path: string }[] }).logs.map((l) => l.path)).toEqual([fx.file('a/one.log')]);
    expect((await session.callTool('tail_log', { path: fx.file('b/two.log') })).isError).toBe(true);
  });

  it('client roots that overlap none of the command-line directories say so, not to start the server with some', async () => {
    fx = await fixture({ transport });
    const elsewhere = await makeTempDir('suite-logs-elsewhere-');
    try {
      const session = await fx.connect({ roots: [elsewhere.dir] });
      const out = await session.callTool('list_logs', {});
      expect(out).toMatchObject({ isError: true });
      expect(out.text).toMatch(/^No log directory or file is allowed: the client's roots leave none of the server's directories and log files/);
      expect(out.text).not.toMatch(/Start the server with/);
    } finally {
      await elsewhere.cleanup();
    }
  });

  it('with --refuse-hard-links, refuses a log that is a hard link to a file outside the allowed directories; without it, serves it', async () => {
    const outside = await makeTempDir('suite-logs-outside-');
    try {
      const secret = path.join(outside.dir, 'secret.log');
      await writeFile(secret, lines('2026-11-21T04:00:00Z ERROR password=hunter2'));
      fx = await fixture({ transport, config: { refuseHardLinks: true } });
      await fx.write('app.log', lines('2026-11-21T04:00:00Z ERROR app password check failed'));
      await link(secret, fx.file('leak.log'));
      const session = await fx.connect();
      const tail = await session.callTool('tail_log', { path: fx.file('leak.log') });
      expect(tail).toMatchObject({ isError: true, text: expect.stringMatching(/^Access denied: .*leak\.log: it has 2 hard links, and the server was started with --refuse-hard-links/) });
      expect(tail.text).not.toContain('hunter2');
      const search = await session.callTool('search_logs', { pattern: 'password' });
      const found = search.structured as { matches: { file: string }[]; skipped: { file: string; reason: string }[] };
      expect(found.matches.map((m) => m.file)).toEqual([fx.file('app.log')]);
      expect(found.skipped).toEqual([{ file: fx.file('leak.log'), reason: expect.stringMatching(/it has 2 hard links, and the server was started with --refuse-hard-links/) }]);
      expect(await protocolError(session.readResource(`logs://file${fx.file('leak.log')}`))).toMatchObject({ code: -32003 });
      await fx.close();
      // Without the flag the path is all the server can check: the link is served (see the README's security model).
      fx = await fixture({ transport });
      await link(secret, fx.file('leak.log'));
      const open = await fx.connect();
      expect((await open.callTool('tail_log', { path: fx.file('leak.log') })).text).toContain('hunter2');
    } finally {
      await outside.cleanup();
    }
  });
});
