/**
 * The OpenTelemetry SDK, configured from the standard OTEL_* variables. Loaded only by
 * ./setup.ts's dynamic import, when the process exports telemetry.
 */
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader, type MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { Logger } from '../core/logging.js';
import type { RunningTelemetry, TelemetryPlan } from './plan.js';

function positiveInteger(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

export async function startSdk(plan: TelemetryPlan, service: { name: string; version: string }, log: Logger): Promise<RunningTelemetry> {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the bin's own name.
  const resource = resourceFromAttributes({ 'service.name': service.name, 'service.version': service.version }).merge(detectResources({ detectors: [envDetector] }));
  const stops: (() => Promise<void>)[] = [];

  // Without a context manager the API cannot tell a handler (or a log line) which span it runs in.
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }));

  if (plan.traces) {
    // The exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS and _TIMEOUT; the provider
    // OTEL_TRACES_SAMPLER(_ARG); the batch processor OTEL_BSP_*.
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())] });
    trace.setGlobalTracerProvider(provider);
    stops.push(() => provider.shutdown());
  }

  const readers: MetricReader[] = [];
  if (plan.otlpMetrics) {
    readers.push(new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter(), exportIntervalMillis: positiveInteger(process.env.OTEL_METRIC_EXPORT_INTERVAL, 60_000) }));
  }
  if (plan.prometheus) {
    const exporter = new PrometheusExporter({ host: plan.prometheus.host, port: plan.prometheus.port, preventServerStart: true });
    try {
      await exporter.startServer();
    } catch (error) {
      throw new Error(`--metrics-port: cannot serve metrics on ${plan.prometheus.host}:${plan.prometheus.port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}).`);
    }
    log.info(`metrics on http://${plan.prometheus.host}:${plan.prometheus.port}/metrics`);
    readers.push(exporter);
  }
  if (readers.length > 0) {
    const provider = new MeterProvider({ resource, readers });
    metrics.setGlobalMeterProvider(provider);
    stops.push(() => provider.shutdown());
  }

  return {
    async shutdown() {
      for (const stop of stops.splice(0)) await stop().catch((error: unknown) => log.private('debug', `telemetry shutdown: ${String(error)}`));
      contextManager.disable();
    },
  };
}
