/**
 * Loads the OpenTelemetry SDK (./sdk.ts) by dynamic import, and only when the plan asks for
 * something: a server with telemetry off loads none of it.
 */
import type { Logger } from '../core/logging.js';
import { telemetryWanted, type RunningTelemetry, type TelemetryPlan } from './plan.js';

/**
 * Starts what the plan asks for; undefined (and nothing loaded) when it asks for nothing. A
 * Prometheus port that cannot be bound fails the start: an operator who asked for it wants to know.
 */
export async function startTelemetry(plan: TelemetryPlan, service: { name: string; version: string }, log: Logger): Promise<RunningTelemetry | undefined> {
  if (!telemetryWanted(plan)) return undefined;
  const { startSdk } = await import('./sdk.js');
  return startSdk(plan, service, log);
}
