/**
 * Spans and metrics for every MCP request a server answers, through `@opentelemetry/api` only,
 * following the OpenTelemetry semantic conventions for MCP. Without an SDK registered (telemetry
 * off) every call below lands on the API's no-op implementations; the SDK is loaded by
 * ./setup.ts, and only when configured.
 */
import {
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  createNoopMeter,
  SpanStatusCode,
  context as otelContext,
  metrics,
  propagation,
  trace,
  type Attributes,
  type Context,
  isSpanContextValid,
  type Histogram,
  type Link,
  type TextMapGetter,
} from '@opentelemetry/api';
import {
  PROTOCOL_VERSION_META_KEY,
  Server,
  type JSONRPCRequest,
  type Result,
  type ServerContext,
  type ServerOptions,
  type Implementation,
} from '@modelcontextprotocol/server';
import type { SessionInfo } from '../server/context.js';

const SCOPE = '@suite/shared';

/** The conventions' advice for both duration histograms (seconds). */
const DURATION_BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];

interface Instruments {
  provider: ReturnType<typeof metrics.getMeterProvider>;
  operation: Histogram;
  session: Histogram;
}

let instruments: Instruments | undefined;

/**
 * The API has no proxy for meters (unlike tracers): a meter taken before the SDK registers its
 * provider stays a no-op. Instruments are therefore made for the provider registered now, and
 * again when it changes (the SDK, in a chunk of its own in a bundled server, cannot reach this cache).
 */
function instrumentsNow(): Instruments {
  const provider = metrics.getMeterProvider();
  if (instruments?.provider === provider) return instruments;
  const meter = provider.getMeter(SCOPE);
  instruments = {
    provider,
    operation: meter.createHistogram('mcp.server.operation.duration', {
      unit: 's',
      description: 'Duration of the MCP request or notification as observed on the receiver from the time it was received until the result or ack is sent.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
    session: meter.createHistogram('mcp.server.session.duration', {
      unit: 's',
      description: 'The duration of the MCP session as observed on the MCP server.',
      advice: { explicitBucketBoundaries: DURATION_BUCKETS },
    }),
  };
  return instruments;
}

/** What the API hands out while no SDK is registered, to tell "off" from "on" without a probe span. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();
const NoopHistogram = createNoopMeter().createHistogram('probe').constructor;

/**
 * Whether anything would receive a span or a measurement: with telemetry off the handler is called
 * as it is, so that an unconfigured server pays two lookups per request and nothing else.
 */
function telemetryActive(): boolean {
  const tracers = trace.getTracerProvider();
  if (!(tracers instanceof ProxyTracerProvider) || tracers.getDelegate() !== NOOP_TRACER_PROVIDER) return true;
  return !(instrumentsNow().operation instanceof NoopHistogram);
}

/** Reads a trace carrier from `params._meta` (values are strings) or from HTTP headers. */
const META_GETTER: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

const HEADERS_GETTER: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

/**
 * The parent of a request's span: the trace context the client put in `params._meta` (SEP-414),
 * else that of the HTTP request that carried it, else none (a new trace).
 */
function parentOf(meta: Record<string, unknown> | undefined, headers: Headers | undefined): { parent: Context; links: Link[] } {
  const transport = headers?.has('traceparent') ? trace.getSpanContext(propagation.extract(ROOT_CONTEXT, headers, HEADERS_GETTER)) : undefined;
  if (meta && typeof meta.traceparent === 'string') {
    // The conventions: the MCP context is the parent, the transport's (one HTTP request may carry
    // several MCP messages, or one message several requests) a link.
    return { parent: propagation.extract(ROOT_CONTEXT, meta, META_GETTER), links: transport && isSpanContextValid(transport) ? [{ context: transport }] : [] };
  }
  if (headers?.has('traceparent')) return { parent: propagation.extract(ROOT_CONTEXT, headers, HEADERS_GETTER), links: [] };
  return { parent: ROOT_CONTEXT, links: [] };
}

/**
 * Bounds on what a request puts into a span: a client may send megabytes as a tool name or a URI,
 * and the batch processor holds up to 2,048 spans. Registered tool names are at most 128 characters.
 */
const MAX_NAME = 128;
const MAX_URI = 1024;
const MAX_MESSAGE = 200;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** The span's low-cardinality target (tool or prompt name), per the conventions. */
function targetOf(method: string, params: Record<string, unknown> | undefined): { attribute: string; name: string } | undefined {
  const name = typeof params?.name === 'string' ? clip(params.name, MAX_NAME) : undefined;
  if (name === undefined) return undefined;
  if (method === 'tools/call') return { attribute: 'gen_ai.tool.name', name };
  if (method === 'prompts/get') return { attribute: 'gen_ai.prompt.name', name };
  return undefined;
}

/** What error.type says of a thrown error: its JSON-RPC code when it has one. */
function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && Number.isSafeInteger(code)) return String(code);
  return '_OTHER';
}

type RequestHandler = (request: JSONRPCRequest, ctx: ServerContext) => Promise<Result>;

/**
 * The SDK's Server with every request handler (the SDK's own, such as initialize and ping, and
 * ours) wrapped in a SERVER span and timed into `mcp.server.operation.duration`. Covers both eras
 * and every transport, since each of them ends in one of these instances.
 */
export class TracedServer extends Server {
  private readonly transportKind: SessionInfo['transport'];
  private readonly openedAt = performance.now();
  private sessionRecorded = false;

  constructor(info: Implementation, options: ServerOptions, transport: SessionInfo['transport']) {
    super(info, options);
    this.transportKind = transport;
  }

  protected override _wrapHandler(method: string, handler: RequestHandler): RequestHandler {
    const inner = super._wrapHandler(method, handler);
    return (request, ctx) => (telemetryActive() ? this.traced(method, inner, request, ctx) : inner(request, ctx));
  }

  /** The conventions' transport attributes: stdio is a pipe, everything else HTTP over TCP. */
  private transportAttributes(attributes: Attributes): void {
    if (this.transportKind === 'stdio') attributes['network.transport'] = 'pipe';
    else if (this.transportKind !== 'memory') {
      attributes['network.transport'] = 'tcp';
      attributes['network.protocol.name'] = 'http';
    }
  }

  private protocolVersion(ctx: ServerContext): string | undefined {
    const claimed = (ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[PROTOCOL_VERSION_META_KEY];
    return typeof claimed === 'string' ? claimed : this.getNegotiatedProtocolVersion();
  }

  private async traced(method: string, inner: RequestHandler, request: JSONRPCRequest, ctx: ServerContext): Promise<Result> {
    const params = request.params as Record<string, unknown> | undefined;
    const target = targetOf(method, params);
    const metricAttributes: Attributes = { 'mcp.method.name': method };
    if (target) metricAttributes[target.attribute] = target.name;
    if (method === 'tools/call') metricAttributes['gen_ai.operation.name'] = 'execute_tool';
    this.transportAttributes(metricAttributes);
    const version = this.protocolVersion(ctx);
    if (version !== undefined) metricAttributes['mcp.protocol.version'] = version;

    const spanAttributes: Attributes = { ...metricAttributes, 'jsonrpc.request.id': String(request.id) };
    if (ctx.sessionId !== undefined) spanAttributes['mcp.session.id'] = ctx.sessionId;
    if (method.startsWith('resources/') && typeof params?.uri === 'string') spanAttributes['mcp.resource.uri'] = clip(params.uri, MAX_URI);

    const { parent, links } = parentOf(ctx.mcpReq._meta as Record<string, unknown> | undefined, ctx.http?.req?.headers);
    const span = trace.getTracer(SCOPE).startSpan(target ? `${method} ${target.name}` : method, { kind: SpanKind.SERVER, attributes: spanAttributes, links }, parent);
    const started = performance.now();
    const finish = (errorType: string | undefined, message?: string): void => {
      // An initialize negotiates the version while it runs.
      const negotiated = version ?? this.protocolVersion(ctx);
      if (version === undefined && negotiated !== undefined) {
        metricAttributes['mcp.protocol.version'] = negotiated;
        span.setAttribute('mcp.protocol.version', negotiated);
      }
      if (errorType !== undefined) {
        metricAttributes['error.type'] = errorType;
        span.setAttribute('error.type', errorType);
        span.setStatus({ code: SpanStatusCode.ERROR, ...(message !== undefined ? { message } : {}) });
      }
      span.end();
      instrumentsNow().operation.record((performance.now() - started) / 1000, metricAttributes);
    };
    try {
      const result = await otelContext.with(trace.setSpan(parent, span), () => inner(request, ctx));
      if (method === 'tools/call' && (result as { isError?: unknown }).isError === true) finish('tool_error', firstText(result));
      else finish(undefined);
      return result;
    } catch (error) {
      // A name the request made up (an unknown tool) must not become a metric series: a client
      // sending endless names would grow every exporter's memory. The span keeps it.
      if (target) delete metricAttributes[target.attribute];
      const type = errorTypeOf(error);
      if (type !== '_OTHER') span.setAttribute('rpc.response.status_code', type);
      finish(type, error instanceof Error ? clip(error.message, MAX_MESSAGE) : undefined);
      throw error;
    }
  }

  /**
   * A session ends: its duration, for the connections that are sessions (stdio, a 2025-era HTTP
   * session); a 2026-07-28 HTTP request's instance lives for that request only.
   */
  override async close(): Promise<void> {
    this.recordSession();
    await super.close();
  }

  private recordSession(): void {
    if (this.sessionRecorded || this.transportKind === 'memory' || !telemetryActive()) return;
    if (this.transportKind === 'http' && this.getNegotiatedProtocolVersion() !== undefined && this.protocolIsModern()) return;
    this.sessionRecorded = true;
    const attributes: Attributes = {};
    this.transportAttributes(attributes);
    const version = this.getNegotiatedProtocolVersion();
    if (version !== undefined) attributes['mcp.protocol.version'] = version;
    instrumentsNow().session.record((performance.now() - this.openedAt) / 1000, attributes);
  }

  private protocolIsModern(): boolean {
    const version = this.getNegotiatedProtocolVersion();
    return version !== undefined && version >= '2026-';
  }
}

/** The start of an isError result's text: the span status description. */
function firstText(result: Result): string | undefined {
  const content = (result as { content?: unknown }).content;
  if (!Array.isArray(content)) return undefined;
  const text = (content[0] as { text?: unknown } | undefined)?.text;
  return typeof text === 'string' ? clip(text, MAX_MESSAGE) : undefined;
}
