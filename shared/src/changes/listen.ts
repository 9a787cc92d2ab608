import type { ServerEvent, ServerEventBus } from '@modelcontextprotocol/server';

/** The part of a `subscriptions/listen` filter the change sources care about. */
export interface ListenFilter {
  resourceSubscriptions?: string[];
  resourcesListChanged?: boolean;
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
}

/** The filter a `subscriptions/listen` request's params carry, or undefined when they carry none. */
export function listenFilterOf(params: unknown): ListenFilter | undefined {
  const notifications = (params as { notifications?: unknown } | undefined)?.notifications;
  if (typeof notifications !== 'object' || notifications === null) return undefined;
  const filter = notifications as Record<string, unknown>;
  const uris = Array.isArray(filter.resourceSubscriptions) ? filter.resourceSubscriptions.filter((u): u is string => typeof u === 'string') : undefined;
  return {
    ...(uris ? { resourceSubscriptions: uris } : {}),
    ...(filter.resourcesListChanged === true ? { resourcesListChanged: true } : {}),
    ...(filter.toolsListChanged === true ? { toolsListChanged: true } : {}),
    ...(filter.promptsListChanged === true ? { promptsListChanged: true } : {}),
  };
}

/**
 * Puts change events on the listen bus once each. Every open listen stream follows its resources
 * through a session of its own in the change hub, so one change reaches as many sessions as
 * streams follow it; the bus fans each event out to every stream that asked for it, so the copies
 * are merged here (those within one turn of the event loop) before they are published.
 */
export class ListenBridge {
  private pending = new Map<string, ServerEvent>();
  private scheduled = false;

  constructor(private readonly bus: ServerEventBus) {}

  publish(event: ServerEvent): void {
    this.pending.set(event.kind === 'resource_updated' ? `${event.kind}\0${event.uri}` : event.kind, event);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const events = [...this.pending.values()];
      this.pending.clear();
      for (const e of events) this.bus.publish(e);
    });
  }
}
