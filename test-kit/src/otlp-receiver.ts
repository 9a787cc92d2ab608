/**
 * A test OTLP/HTTP receiver: a real HTTP server that takes what OpenTelemetry's OTLP/HTTP JSON
 * exporters post to /v1/traces and /v1/metrics, decodes it, and keeps the spans for a test to
 * read. Protobuf bodies are refused (415): the suite's exporters speak the JSON encoding.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP AnyValue, reduced to what a test compares. */
export type OtlpValue = string | number | boolean | null | OtlpValue[];

export interface ReceivedSpan {
  /** Hex, as the JSON encoding carries it. */
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, OtlpValue>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string };
  /** The spans this one links to (the conventions link an MCP request's span to its HTTP request's context). */
  links: { traceId: string; spanId: string }[];
  /** The resource's attributes (service.name, ...). */
  resource: Record<string, OtlpValue>;
  scope: string;
}

export interface OtlpReceiver {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporters add /v1/traces, /v1/metrics). */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** How many metric export requests arrived. */
  metricBatches(): number;
  /** Waits until `predicate` holds of the spans received so far; fails after `timeoutMs` listing them. */
  waitForSpans(predicate: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

interface JsonKeyValue {
  key: string;
  value?: JsonAnyValue;
}
interface JsonAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: JsonAnyValue[] };
}

function valueOf(value: JsonAnyValue | undefined): OtlpValue {
  if (!value) return null;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return null;
}

function attributesOf(list: JsonKeyValue[] | undefined): Record<string, OtlpValue> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]));
}

interface ExportTraceRequest {
  resourceSpans?: {
    resource?: { attributes?: JsonKeyValue[] };
    scopeSpans?: {
      scope?: { name?: string };
      spans?: {
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind?: number;
        attributes?: JsonKeyValue[];
        status?: { code?: number; message?: string };
        links?: { traceId: string; spanId: string }[];
      }[];
    }[];
  }[];
}

function decodeSpans(body: ExportTraceRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of body.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind ?? 0,
          attributes: attributesOf(span.attributes),
          status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
          links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId })),
          resource,
          scope: scopeSpans.scope?.name ?? '',
        });
      }
    }
  }
  return spans;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let metricBatches = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || (req.url !== '/v1/traces' && req.url !== '/v1/metrics')) {
        res.writeHead(404).end();
        return;
      }
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) {
        res.writeHead(415, { 'Content-Type': 'text/plain' }).end('this test receiver decodes the OTLP JSON encoding only');
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (req.url === '/v1/traces') received.push(...decodeSpans(body as ExportTraceRequest));
      else metricBatches += 1;
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    metricBatches: () => metricBatches,
    async waitForSpans(predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) {
          throw new Error(`the OTLP receiver did not get the expected spans in ${timeoutMs} ms; it has:\n${received.map((s) => `  ${s.name} ${JSON.stringify(s.attributes)}`).join('\n')}`);
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      return [...received];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
