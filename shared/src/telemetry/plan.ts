/**
 * What this process exports, decided from the standard OTEL_* variables and --metrics-port
 * (./setup.ts then loads the SDK only when the plan asks for something).
 */

/** What the process exports. */
export interface TelemetryPlan {
  /** Spans over OTLP/HTTP (JSON), to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT. */
  traces: boolean;
  /** Metrics over OTLP/HTTP (JSON), every OTEL_METRIC_EXPORT_INTERVAL. */
  otlpMetrics: boolean;
  /** Prometheus exposition at http://HOST:PORT/metrics. */
  prometheus: { host: string; port: number } | undefined;
}

export interface RunningTelemetry {
  /** Flushes what is buffered (spans of the last calls) and stops the exporters. */
  shutdown(): Promise<void>;
}

function listOf(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  return value.split(',').map((part) => part.trim().toLowerCase()).filter(Boolean);
}

/**
 * The plan from the environment. A signal is on when its OTEL_*_EXPORTER names `otlp`, or when
 * that variable is unset and an OTLP endpoint is configured for it; `none` turns it off, and
 * OTEL_SDK_DISABLED=true turns everything off (--metrics-port included).
 */
export function telemetryPlan(env: NodeJS.ProcessEnv, metrics: { port?: number; host?: string } = {}): TelemetryPlan {
  const off = { traces: false, otlpMetrics: false, prometheus: undefined };
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return off;
  const anyEndpoint = Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
  const tracesExporters = listOf(env.OTEL_TRACES_EXPORTER);
  const metricsExporters = listOf(env.OTEL_METRICS_EXPORTER);
  const traces = tracesExporters ? tracesExporters.includes('otlp') : anyEndpoint || Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
  const otlpMetrics = metricsExporters ? metricsExporters.includes('otlp') : anyEndpoint || Boolean(env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim());
  let port = metrics.port;
  if (port === undefined && metricsExporters?.includes('prometheus')) {
    const fromEnv = Number(env.OTEL_EXPORTER_PROMETHEUS_PORT ?? 9464);
    port = Number.isInteger(fromEnv) && fromEnv >= 0 && fromEnv <= 65535 ? fromEnv : 9464;
  }
  const host = metrics.host ?? env.OTEL_EXPORTER_PROMETHEUS_HOST ?? '127.0.0.1';
  return { traces, otlpMetrics, prometheus: port !== undefined ? { host, port } : undefined };
}

export function telemetryWanted(plan: TelemetryPlan): boolean {
  return plan.traces || plan.otlpMetrics || plan.prometheus !== undefined;
}
