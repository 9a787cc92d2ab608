import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer } from '@suite/test-kit';
import { connectModernHttp, connectModernStdio } from '@suite/test-kit/eras';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '@suite/test-kit/otlp';
import { freePort, startPrivateRedis, startReplicas } from '@suite/test-kit/replicas';
import { connectHttp } from '@suite/test-kit';
import { startPrometheus } from '@suite/test-kit/prometheus';
import { telemetryPlan } from '../src/telemetry/plan.js';

type HttpServerProcess = Awaited<ReturnType<typeof startReplicas>>[number];
/** What the tests need of a client, whichever SDK it comes from (the kit's sessions use v1, its 2026-07-28 clients v2). */
interface ToolCaller {
  callTool(params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> }): Promise<object>;
}

const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const BIN = path.join(fixtures, 'telemetry-bin.mjs');
const MODULE_RECORDER = path.join(fixtures, 'record-modules.mjs');

/** A fresh W3C trace context, as a client's own span would put it in _meta. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string; tracestate: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'suite=t61rcWkgMzE' };
}

/** Calls `ping` and `refuse` with trace context in _meta; returns the two client contexts. */
async function callBoth(client: ToolCaller): Promise<{ ping: ReturnType<typeof clientTrace>; refuse: ReturnType<typeof clientTrace> }> {
  const ping = clientTrace();
  const refuse = clientTrace();
  const ok = (await client.callTool({ name: 'ping', arguments: {}, _meta: { traceparent: ping.traceparent, tracestate: ping.tracestate } })) as { isError?: boolean };
  expect(ok.isError).toBeFalsy();
  const failed = (await client.callTool({ name: 'refuse', arguments: {}, _meta: { traceparent: refuse.traceparent, tracestate: refuse.tracestate } })) as { isError?: boolean };
  expect(failed.isError).toBe(true);
  return { ping, refuse };
}

function spanIn(spans: ReceivedSpan[], traceId: string, name: string): ReceivedSpan | undefined {
  return spans.find((s) => s.traceId === traceId && s.name === name);
}

/** The conventions' names and attributes, parented on what the client sent. */
async function expectConventionalSpans(
  receiver: OtlpReceiver,
  traces: { ping: ReturnType<typeof clientTrace>; refuse: ReturnType<typeof clientTrace> },
  expected: { version: string; transport: 'pipe' | 'tcp'; session: boolean },
): Promise<void> {
  const spans = await receiver.waitForSpans((all) => spanIn(all, traces.ping.traceId, 'tools/call ping') !== undefined && spanIn(all, traces.refuse.traceId, 'tools/call refuse') !== undefined);
  const ping = spanIn(spans, traces.ping.traceId, 'tools/call ping')!;
  expect(ping.parentSpanId).toBe(traces.ping.spanId);
  expect(ping.kind).toBe(2); // SERVER
  expect(ping.scope).toBe('@suite/shared');
  expect(ping.resource['service.name']).toBe('mcp-server-telemetry-probe');
  expect(ping.attributes).toMatchObject({
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': 'ping',
    'gen_ai.operation.name': 'execute_tool',
    'mcp.protocol.version': expected.version,
    'network.transport': expected.transport,
  });
  expect(typeof ping.attributes['jsonrpc.request.id']).toBe('string');
  expect(ping.attributes['error.type']).toBeUndefined();
  expect(ping.status.code).not.toBe(2);
  if (expected.session) expect(typeof ping.attributes['mcp.session.id']).toBe('string');

  const refuse = spanIn(spans, traces.refuse.traceId, 'tools/call refuse')!;
  expect(refuse.parentSpanId).toBe(traces.refuse.spanId);
  expect(refuse.attributes['error.type']).toBe('tool_error');
  expect(refuse.status).toEqual({ code: 2, message: 'Refused on purpose.' });
}

describe('telemetry: spans per the MCP semantic conventions, exported over OTLP/HTTP', () => {
  let receiver: OtlpReceiver;
  let env: Record<string, string>;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    env = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50', OTEL_METRIC_EXPORT_INTERVAL: '500' };
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('over stdio, 2025-11-25: parented on the _meta traceparent, isError is error.type tool_error', async () => {
    const session = await spawnServer(BIN, [], { env });
    try {
      const traces = await callBoth(session.client);
      await expectConventionalSpans(receiver, traces, { version: '2025-11-25', transport: 'pipe', session: false });
    } finally {
      await session.close();
    }
    // The session's end is measured too, and metrics reach the OTLP endpoint.
    expect(receiver.metricBatches()).toBeGreaterThan(0);
  });

  it('a request cannot put megabytes into a span: names, URIs and messages are clipped', async () => {
    const session = await spawnServer(BIN, [], { env });
    try {
      const trace = clientTrace();
      const huge = `x${'y'.repeat(1024 * 1024)}`;
      await expect(session.client.callTool({ name: huge, arguments: {}, _meta: { traceparent: trace.traceparent } })).rejects.toThrow();
      const spans = await receiver.waitForSpans((all) => all.some((s) => s.traceId === trace.traceId));
      const span = spans.find((s) => s.traceId === trace.traceId)!;
      expect(span.name.length).toBeLessThanOrEqual('tools/call '.length + 129);
      expect(String(span.attributes['gen_ai.tool.name']).length).toBeLessThanOrEqual(129);
      expect((span.status.message ?? '').length).toBeLessThanOrEqual(201);
      expect(span.attributes['error.type']).toBe('-32602');
    } finally {
      await session.close();
    }
  });

  it('over stdio, 2026-07-28', async () => {
    const client = await connectModernStdio(BIN, [], { env });
    try {
      const traces = await callBoth(client);
      await expectConventionalSpans(receiver, traces, { version: '2026-07-28', transport: 'pipe', session: false });
    } finally {
      await client.close();
    }
  });

  describe('over HTTP', () => {
    let replica: HttpServerProcess;
    beforeAll(async () => {
      [replica] = (await startReplicas(BIN, [], 1, env)) as [HttpServerProcess];
    });
    afterAll(async () => {
      await replica.server.stop();
    });

    it('2025-11-25 sessions: parented on _meta, with the session id', async () => {
      const session = await connectHttp(replica.url);
      try {
        const traces = await callBoth(session.client);
        await expectConventionalSpans(receiver, traces, { version: '2025-11-25', transport: 'tcp', session: true });
      } finally {
        await session.close();
      }
    });

    it('2026-07-28 requests: parented on _meta', async () => {
      const client = await connectModernHttp(replica.url);
      try {
        const traces = await callBoth(client);
        await expectConventionalSpans(receiver, traces, { version: '2026-07-28', transport: 'tcp', session: false });
      } finally {
        await client.close();
      }
    });

    it('without trace context in _meta, the HTTP request\'s traceparent header is the parent; _meta wins over it, the header then a link', async () => {
      const fromHeader = clientTrace();
      const fromMeta = clientTrace();
      const envelope = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' }, 'io.modelcontextprotocol/clientCapabilities': {} };
      const post = (id: number, meta: Record<string, unknown>): Promise<Response> =>
        fetch(replica.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', traceparent: fromHeader.traceparent, 'mcp-method': 'tools/call', 'mcp-name': 'ping' },
          body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ping', arguments: {}, _meta: meta } }),
        });
      const first = await post(1, envelope);
      expect(first.status, await first.clone().text()).toBe(200);
      await first.text();
      const second = await post(2, { ...envelope, traceparent: fromMeta.traceparent });
      expect(second.status).toBe(200);
      await second.text();
      const spans = await receiver.waitForSpans((all) => spanIn(all, fromHeader.traceId, 'tools/call ping') !== undefined && spanIn(all, fromMeta.traceId, 'tools/call ping') !== undefined);
      expect(spanIn(spans, fromHeader.traceId, 'tools/call ping')!.parentSpanId).toBe(fromHeader.spanId);
      const metaSpan = spanIn(spans, fromMeta.traceId, 'tools/call ping')!;
      expect(metaSpan.parentSpanId).toBe(fromMeta.spanId);
      // The HTTP request's own context, when it differs, is a link (as the conventions ask).
      expect(metaSpan.links).toEqual([{ traceId: fromHeader.traceId, spanId: fromHeader.spanId }]);
      expect(spanIn(spans, fromHeader.traceId, 'tools/call ping')!.links).toEqual([]);
      // Exactly one span per request: the header's trace got only the first.
      expect(spans.filter((s) => s.traceId === fromHeader.traceId)).toHaveLength(1);
    });

    it('a log line written inside a call carries its trace and span ids', async () => {
      const session = await connectHttp(replica.url);
      try {
        const trace = clientTrace();
        await session.client.callTool({ name: 'note', arguments: {}, _meta: { traceparent: trace.traceparent } });
        const spans = await receiver.waitForSpans((all) => spanIn(all, trace.traceId, 'tools/call note') !== undefined);
        const span = spanIn(spans, trace.traceId, 'tools/call note')!;
        expect(replica.server.stderr()).toContain(`a note from inside a call {"trace_id":"${trace.traceId}","span_id":"${span.spanId}"}`);
      } finally {
        await session.close();
      }
    });
  });
});

/** The modules a bin loads (every resolved URL), recorded by a module hook the child registers. */
async function modulesLoadedBy(env: Record<string, string>): Promise<string[]> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'suite-modules-'));
  const log = path.join(dir, 'modules.log');
  try {
    const child = spawn(process.execPath, ['--import', MODULE_RECORDER, BIN], { env: { ...process.env, ...env, SUITE_MODULE_LOG: log }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const send = (message: unknown): boolean => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {}, _meta: { traceparent: clientTrace().traceparent } } });
    const deadline = Date.now() + 20_000;
    while (!out.includes('"id":1')) {
      if (Date.now() > deadline) throw new Error(`no answer to the call:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.stdin.end();
    await new Promise((resolve) => child.once('exit', resolve));
    return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('telemetry off', () => {
  const sdkModule = (url: string): boolean => /\/@opentelemetry\/(sdk-|exporter-|context-async-hooks|resources|core)/.test(url);

  it('loads no OpenTelemetry SDK or exporter module (and loads them when configured, so the check can fail)', async () => {
    const off = await modulesLoadedBy({ OTEL_EXPORTER_OTLP_ENDPOINT: '', OTEL_TRACES_EXPORTER: '', OTEL_METRICS_EXPORTER: '' });
    expect(off.some((url) => url.includes('/@opentelemetry/api/'))).toBe(true);
    expect(off.filter(sdkModule)).toEqual([]);
    expect(off.some((url) => url.endsWith('/telemetry/sdk.js'))).toBe(false);

    const port = await freePort();
    const on = await modulesLoadedBy({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    expect(on.filter(sdkModule).some((url) => url.includes('/@opentelemetry/sdk-trace-base/'))).toBe(true);
  });

  it('the plan follows the standard variables', () => {
    expect(telemetryPlan({})).toEqual({ traces: false, otlpMetrics: false, prometheus: undefined });
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).toEqual({ traces: true, otlpMetrics: true, prometheus: undefined });
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' })).toMatchObject({ traces: true, otlpMetrics: false });
    expect(telemetryPlan({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' })).toMatchObject({ traces: true, otlpMetrics: false });
    expect(telemetryPlan({ OTEL_METRICS_EXPORTER: 'prometheus', OTEL_EXPORTER_PROMETHEUS_PORT: '9999' }).prometheus).toEqual({ host: '127.0.0.1', port: 9999 });
    expect(telemetryPlan({}, { port: 9100, host: '0.0.0.0' }).prometheus).toEqual({ host: '0.0.0.0', port: 9100 });
    expect(telemetryPlan({ OTEL_SDK_DISABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }, { port: 9100 })).toEqual({ traces: false, otlpMetrics: false, prometheus: undefined });
  });
});

describe('--metrics-port: Prometheus scrapes every replica', () => {
  it('a real Prometheus scraping two replicas counts exactly the calls made, each replica its own', async () => {
    const [portA, portB] = [await freePort(), await freePort()];
    const [a, b] = (await Promise.all([startReplicas(BIN, ['--metrics-port', String(portA)], 1), startReplicas(BIN, ['--metrics-port', String(portB)], 1)])).flat() as [HttpServerProcess, HttpServerProcess];
    const prometheus = await startPrometheus([`127.0.0.1:${portA}`, `127.0.0.1:${portB}`]);
    try {
      // Both eras: 2025 sessions on A, 2026-07-28 requests on B, some refused as tools.
      const session = await connectHttp(a.url);
      for (let i = 0; i < 3; i++) await session.client.callTool({ name: 'ping', arguments: {} });
      await session.client.callTool({ name: 'refuse', arguments: {} });
      await session.close();
      const modern = await connectModernHttp(b.url);
      for (let i = 0; i < 5; i++) await modern.callTool({ name: 'ping', arguments: {} });
      await modern.callTool({ name: 'refuse', arguments: {} });
      await modern.callTool({ name: 'refuse', arguments: {} });
      // Unknown tools are protocol errors, counted, but their made-up names make no series of their own.
      for (const name of ['made-up-1', 'made-up-2']) await expect(modern.callTool({ name, arguments: {} })).rejects.toThrow(/Unknown tool/);
      await modern.close();

      const calls = 'sum(mcp_server_operation_duration_count{mcp_method_name="tools/call"})';
      await prometheus.waitFor(calls, (result) => result[0]?.value === 13);
      const perReplica = await prometheus.query('sum by (instance) (mcp_server_operation_duration_count{mcp_method_name="tools/call"})');
      expect(Object.fromEntries(perReplica.map((s) => [s.metric.instance, s.value]))).toEqual({ [`127.0.0.1:${portA}`]: 4, [`127.0.0.1:${portB}`]: 9 });
      const protocolErrors = await prometheus.query('sum by (error_type, gen_ai_tool_name) (mcp_server_operation_duration_count{mcp_method_name="tools/call",error_type="-32602"})');
      expect(protocolErrors.map((s) => [s.metric.error_type, s.metric.gen_ai_tool_name, s.value])).toEqual([['-32602', undefined, 2]]);
      const failures = await prometheus.query('sum(mcp_server_operation_duration_count{mcp_method_name="tools/call",error_type="tool_error"})');
      expect(failures[0]?.value).toBe(3);
      // A's 2025 session ended (the client's DELETE): its length is measured, on A only.
      const sessions = await prometheus.waitFor('sum by (instance) (mcp_server_session_duration_count)', (result) => result.length > 0);
      expect(Object.fromEntries(sessions.map((s) => [s.metric.instance, s.value]))).toEqual({ [`127.0.0.1:${portA}`]: 1 });
      const byTool = await prometheus.query('sum by (gen_ai_tool_name) (mcp_server_operation_duration_count{mcp_method_name="tools/call"})');
      expect(Object.fromEntries(byTool.map((s) => [s.metric.gen_ai_tool_name ?? '(none)', s.value]))).toEqual({ ping: 8, refuse: 3, '(none)': 2 });
    } finally {
      await prometheus.stop();
      await Promise.all([a.server.stop(), b.server.stop()]);
    }
  });

  it('a port that cannot be bound stops the start with a message', async () => {
    const port = await freePort();
    const [holder] = (await startReplicas(BIN, ['--metrics-port', String(port)], 1)) as [HttpServerProcess];
    try {
      const second = spawn(process.execPath, [BIN, '--metrics-port', String(port)], { stdio: ['pipe', 'pipe', 'pipe'] });
      let stderr = '';
      second.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
      expect(code).toBe(1);
      expect(stderr).toContain(`--metrics-port: cannot serve metrics on 127.0.0.1:${port} (EADDRINUSE)`);
    } finally {
      await holder.server.stop();
    }
  });
});

describe('/readyz beside /healthz', () => {
  it('is ready while its Redis answers, not while Redis is out of reach; /healthz answers throughout', async () => {
    const redis = await startPrivateRedis();
    const [replica] = (await startReplicas(BIN, ['--redis-url', redis.url, '--redis-prefix', `suite:test-readyz-${randomBytes(4).toString('hex')}:`], 1)) as [HttpServerProcess];
    const probe = async (pathname: string): Promise<{ status: number; body: unknown }> => {
      const response = await fetch(new URL(pathname, replica.origin));
      return { status: response.status, body: await response.json() };
    };
    try {
      expect(await probe('/readyz')).toEqual({ status: 200, body: { status: 'ok' } });
      await redis.stop();
      const deadline = Date.now() + 10_000;
      let seen = await probe('/readyz');
      while (seen.status === 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        seen = await probe('/readyz');
      }
      expect(seen).toEqual({ status: 503, body: { status: 'unavailable', reason: 'redis unreachable' } });
      expect((await probe('/healthz')).status).toBe(200);
      await redis.start();
      const back = Date.now() + 15_000;
      while ((await probe('/readyz')).status !== 200) {
        if (Date.now() > back) throw new Error('/readyz did not come back once Redis did');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await replica.server.stop();
      await redis.stop();
    }
  });

  it('without --redis-url it is ready, and needs no Host or token (a load balancer\'s check)', async () => {
    const [replica] = (await startReplicas(BIN, ['--auth-token', 'a-token-of-at-least-some-length'], 1)) as [HttpServerProcess];
    try {
      const response = await fetch(new URL('/readyz', replica.origin), { headers: { host: 'elsewhere.example' } });
      expect(response.status).toBe(200);
    } finally {
      await replica.server.stop();
    }
  });
});
