import { utimes } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_JSON_FIELDS } from '../src/server.js';
import { TRANSPORTS, fixture, lines, type Fixture } from './helpers.js';

/** Real sample lines of each format (from the RFCs, the servers' documentation, and logs as they are written). */

const local = (y: number, mo: number, d: number, h: number, mi: number, s: number, ms = 0): string => new Date(y, mo - 1, d, h, mi, s, ms).toISOString();

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

async function statsOf(f: Fixture, file: string): Promise<Record<string, unknown>> {
  const session = await f.session();
  const out = await session.callTool('log_stats', { paths: [f.file(file)], includeRotated: false });
  expect(out.isError, out.text).toBe(false);
  return out.structured as Record<string, unknown>;
}

async function formatOf(f: Fixture, file: string): Promise<string> {
  const session = await f.session();
  const out = await session.callTool('list_logs', { path: f.file(file) });
  const logs = (out.structured as { logs: { path: string; format: string }[] }).logs;
  return logs.find((l) => l.path === f.file(file))?.format ?? 'missing';
}

describe.each(TRANSPORTS)('formats, recognised from real sample lines (%s)', (transport) => {
  it('JSON lines from pino: numeric levels, epoch-millisecond times, msg', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'api.jsonl',
      lines(
        '{"level":30,"time":1763697600000,"pid":4242,"hostname":"api-1","msg":"server listening","port":8080}',
        '{"level":40,"time":1763697601000,"pid":4242,"hostname":"api-1","msg":"slow request","ms":1200}',
        '{"level":50,"time":1763697602000,"pid":4242,"hostname":"api-1","msg":"db connection failed","err":{"type":"Error","message":"connect ECONNREFUSED 10.0.0.5:5432"}}',
        '{"level":60,"time":1763697603000,"pid":4242,"hostname":"api-1","msg":"shutting down"}',
      ),
    );
    expect(await formatOf(fx, 'api.jsonl')).toBe('json');
    const stats = await statsOf(fx, 'api.jsonl');
    expect(stats).toMatchObject({ entries: 4, levels: { info: 1, warning: 1, error: 1, critical: 1 }, first: '2025-11-21T04:00:00.000Z', last: '2025-11-21T04:00:03.000Z' });
    expect((stats.topErrors as { pattern: string }[]).map((t) => t.pattern)).toEqual(['db connection failed', 'shutting down']);
  });

  it('JSON lines in ECS style: @timestamp, log.level (flat or nested), message', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'ecs.log',
      lines(
        '{"@timestamp":"2026-11-21T04:00:00.000Z","log.level":"info","message":"GET /health 200","service.name":"shop"}',
        '{"@timestamp":"2026-11-21T04:00:05.000Z","log":{"level":"ERROR","logger":"db"},"message":"upstream timed out after 3000 ms","trace.id":"4bf92f3577b34da6a3ce929d0e0e4736"}',
      ),
    );
    expect(await formatOf(fx, 'ecs.log')).toBe('json');
    const stats = await statsOf(fx, 'ecs.log');
    expect(stats).toMatchObject({ entries: 2, levels: { info: 1, error: 1 }, first: '2026-11-21T04:00:00.000Z', last: '2026-11-21T04:00:05.000Z' });
    expect((stats.topErrors as { pattern: string }[])[0]?.pattern).toBe('upstream timed out after <n> ms');
  });

  it('JSON lines with field names given by the operator (--json-time-field and friends)', async () => {
    const sample = lines('{"when":"2026-11-21T04:00:00Z","sev":"WARNING","what":"disk 91% full"}', '{"when":"2026-11-21T04:01:00Z","sev":"ERROR","what":"disk full"}');
    fx = await fixture({ transport });
    await fx.write('custom.jsonl', sample);
    expect(await statsOf(fx, 'custom.jsonl')).toMatchObject({ entries: 2, levels: { unknown: 2 }, withoutTime: 2 });
    await fx.close();
    // One flag alone does its part only (over stdio: `--json-level-field sev`).
    fx = await fixture({ transport, config: { json: { ...DEFAULT_JSON_FIELDS, level: ['sev'] } } });
    await fx.write('custom.jsonl', sample);
    expect(await statsOf(fx, 'custom.jsonl')).toMatchObject({ entries: 2, levels: { warning: 1, error: 1 }, withoutTime: 2 });
    await fx.close();
    fx = await fixture({ transport, config: { json: { time: ['when'], level: ['sev'], message: ['what'] } } });
    await fx.write('custom.jsonl', sample);
    expect(await statsOf(fx, 'custom.jsonl')).toMatchObject({ entries: 2, levels: { warning: 1, error: 1 }, withoutTime: 0, first: '2026-11-21T04:00:00.000Z' });
    // The message field is what similar errors are grouped by.
    const session = await fx.session();
    const warnings = await session.callTool('log_stats', { paths: [fx.file('custom.jsonl')], errorLevel: 'warning' });
    expect((warnings.structured as { topErrors: { pattern: string }[] }).topErrors.map((t) => t.pattern)).toEqual(['disk <n>% full', 'disk full']);
  });

  it('syslog RFC 5424: PRI severity, fractional times with offsets, structured data', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'rfc5424.log',
      lines(
        "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - 'su root' failed for lonvick on /dev/pts/8",
        "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - %% It's time to make the do-nuts.",
        '<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 [exampleSDID@32473 iut="3" eventSource="Application" eventID="1011"] An application event log entry...',
      ),
    );
    expect(await formatOf(fx, 'rfc5424.log')).toBe('syslog-rfc5424');
    const stats = await statsOf(fx, 'rfc5424.log');
    expect(stats).toMatchObject({ entries: 3, levels: { critical: 1, notice: 2 }, first: '2003-08-24T12:14:15.000Z', last: '2003-10-11T22:14:15.003Z' });
    expect((stats.topErrors as { example: string }[])[0]?.example).toBe("'su root' failed for lonvick on /dev/pts/8");
  });

  it('syslog RFC 3164: the year from the file, PRI or a level word after the tag', async () => {
    fx = await fixture({ transport });
    const file = await fx.write(
      'syslog.log',
      lines(
        "<34>Oct 11 22:14:15 mymachine su: 'su root' failed for lonvick on /dev/pts/8",
        'Nov 21 04:00:01 web-1 CRON[12345]: (root) CMD (run-parts /etc/cron.hourly)',
        'Nov 21 04:00:02 web-1 sshd[2201]: error: maximum authentication attempts exceeded for root from 203.0.113.9 port 52144 ssh2 [preauth]',
        'Nov  3 09:15:00 web-1 systemd[1]: Started Daily apt download activities.',
      ),
    );
    const written = new Date(2026, 11, 1);
    await utimes(file, written, written);
    expect(await formatOf(fx, 'syslog.log')).toBe('syslog-rfc3164');
    const stats = await statsOf(fx, 'syslog.log');
    expect(stats).toMatchObject({ entries: 4, levels: { critical: 1, error: 1, unknown: 2 }, first: local(2026, 10, 11, 22, 14, 15), last: local(2026, 11, 21, 4, 0, 2) });
  });

  it('Apache common log format: the level from the status (5xx error, 4xx warning)', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'access.log',
      lines(
        '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326',
        '10.1.2.3 - - [10/Oct/2000:13:56:01 -0700] "GET /missing HTTP/1.0" 404 209',
        '10.1.2.3 - - [10/Oct/2000:13:57:12 -0700] "POST /api/orders HTTP/1.1" 500 1024',
      ),
    );
    expect(await formatOf(fx, 'access.log')).toBe('apache-common');
    expect(await statsOf(fx, 'access.log')).toMatchObject({ entries: 3, levels: { info: 1, warning: 1, error: 1 }, first: '2000-10-10T20:55:36.000Z', last: '2000-10-10T20:57:12.000Z' });
  });

  it('Apache/nginx combined log format', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'nginx-access.log',
      lines(
        '127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "GET /apache_pb.gif HTTP/1.0" 200 2326 "http://www.example.com/start.html" "Mozilla/4.08 [en] (Win98; I ;Nav)"',
        '192.168.1.10 - - [21/Nov/2026:04:00:00 +0000] "POST /api/login HTTP/1.1" 502 157 "-" "curl/8.4.0"',
        '203.0.113.7 - - [21/Nov/2026:04:00:01 +0000] "GET /robots.txt HTTP/1.1" 404 153 "-" "Googlebot/2.1 (+http://www.google.com/bot.html)"',
      ),
    );
    expect(await formatOf(fx, 'nginx-access.log')).toBe('apache-combined');
    const stats = await statsOf(fx, 'nginx-access.log');
    expect(stats).toMatchObject({ entries: 3, levels: { info: 1, error: 1, warning: 1 }, last: '2026-11-21T04:00:01.000Z' });
    expect((stats.topErrors as { pattern: string }[])[0]?.pattern).toBe('<n> POST /api/login HTTP/<n>');
  });

  it('nginx error log', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'error.log',
      lines(
        '2026/11/21 04:00:00 [notice] 1#1: start worker processes',
        '2026/11/21 04:00:03 [error] 31#31: *5 connect() failed (111: Connection refused) while connecting to upstream, client: 10.0.0.1, server: example.com, request: "GET / HTTP/1.1", upstream: "http://127.0.0.1:8080/", host: "example.com"',
        '2026/11/21 04:00:04 [warn] 31#31: *6 an upstream response is buffered to a temporary file /var/cache/nginx/proxy_temp/1/00/0000000001 while reading upstream',
      ),
    );
    expect(await formatOf(fx, 'error.log')).toBe('nginx-error');
    expect(await statsOf(fx, 'error.log')).toMatchObject({ entries: 3, levels: { notice: 1, error: 1, warning: 1 }, first: local(2026, 11, 21, 4, 0, 0), last: local(2026, 11, 21, 4, 0, 4) });
  });

  it('logfmt', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'worker.log',
      lines(
        'time=2026-11-21T04:00:00Z level=info msg="worker started" queue=emails',
        'time=2026-11-21T04:00:02Z level=warning msg="retrying job" job=8812 attempt=2',
        'time=2026-11-21T04:00:05Z level=error msg="job failed" job=8812 err="smtp: 421 service not available"',
      ),
    );
    expect(await formatOf(fx, 'worker.log')).toBe('logfmt');
    const stats = await statsOf(fx, 'worker.log');
    expect(stats).toMatchObject({ entries: 3, levels: { info: 1, warning: 1, error: 1 }, last: '2026-11-21T04:00:05.000Z' });
    expect((stats.topErrors as { pattern: string }[])[0]?.pattern).toBe('job failed');
  });

  it('ISO 8601 text (Logback) with a Java stack trace grouped into its entry', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'java.log',
      lines(
        '2026-11-21 04:00:00,123 INFO  [main] com.example.App - Starting App v1.2.3',
        '2026-11-21 04:00:01,456 ERROR [http-nio-8080-exec-1] o.a.c.c.C.[.[.[/].[dispatcherServlet] - Servlet.service() threw exception',
        'java.lang.NullPointerException: Cannot invoke "String.length()" because "name" is null',
        '\tat com.example.UserService.greet(UserService.java:42)',
        '\tat com.example.UserController.hello(UserController.java:17)',
        'Caused by: java.lang.IllegalStateException: no session',
        '\t... 12 more',
        '2026-11-21 04:00:02,789 WARN  [main] com.example.App - Slow startup: 2345 ms',
      ),
    );
    expect(await formatOf(fx, 'java.log')).toBe('iso8601');
    expect(await statsOf(fx, 'java.log')).toMatchObject({
      entries: 3,
      continuationLines: 5,
      levels: { info: 1, error: 1, warning: 1 },
      first: local(2026, 11, 21, 4, 0, 0, 123),
      last: local(2026, 11, 21, 4, 0, 2, 789),
    });
    const session = await fx.session();
    const tail = await session.callTool('tail_log', { path: fx.file('java.log'), level: 'error' });
    expect(tail.structured).toMatchObject({ entries: 1 });
    expect((tail.structured as { lines: string[] }).lines).toHaveLength(6);
    expect(tail.text).toContain('\tat com.example.UserService.greet(UserService.java:42)');
    // A search hit inside the trace names the entry it belongs to, with the entry's level and time.
    const hit = await session.callTool('search_logs', { pattern: 'UserService.java', literal: true, paths: [fx.file('java.log')] });
    expect((hit.structured as { matches: unknown[] }).matches).toEqual([
      expect.objectContaining({ line: 4, level: 'error', time: local(2026, 11, 21, 4, 0, 1, 456), entry: expect.stringContaining('Servlet.service() threw exception') }),
    ]);
  });

  it('Python logging with a traceback', async () => {
    fx = await fixture({ transport });
    await fx.write(
      'python.log',
      lines(
        '2026-11-21 04:00:00,123 - app.db - ERROR - Query failed',
        'Traceback (most recent call last):',
        '  File "/srv/app/db.py", line 10, in run',
        '    cursor.execute(sql)',
        'psycopg2.OperationalError: server closed the connection unexpectedly',
        '2026-11-21 04:00:01,000 - app.web - INFO - GET / 200',
      ),
    );
    expect(await formatOf(fx, 'python.log')).toBe('iso8601');
    expect(await statsOf(fx, 'python.log')).toMatchObject({ entries: 2, continuationLines: 4, levels: { error: 1, info: 1 } });
  });

  it('plain text without timestamps: indented lines continue an entry', async () => {
    fx = await fixture({ transport });
    await fx.write('plain.log', lines('Starting service', 'ERROR: could not bind to port 80', '    permission denied', 'Service stopped'));
    expect(await formatOf(fx, 'plain.log')).toBe('plain');
    expect(await statsOf(fx, 'plain.log')).toMatchObject({ entries: 3, continuationLines: 1, levels: { error: 1, unknown: 2 }, withoutTime: 3 });
  });

  it("an operator's --entry-pattern decides where entries start", async () => {
    fx = await fixture({ transport, config: { entryPattern: '^=== ' } });
    await fx.write('batch.log', lines('=== job 1 ERROR', 'step a', 'step b', '=== job 2 INFO', 'step c'));
    const stats = await statsOf(fx, 'batch.log');
    expect(stats).toMatchObject({ entries: 2, continuationLines: 3, levels: { error: 1, info: 1 } });
  });
});
