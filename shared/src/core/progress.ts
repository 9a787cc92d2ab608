export type ProgressToken = string | number;

export type NotificationSender = (notification: { method: string; params?: Record<string, unknown> }) => Promise<void>;

/**
 * Reports progress for a long operation. A no-op when the request carried no progress token.
 * Reports are throttled (the first and the final one always go out) so a loop over 100,000
 * files does not flood the client, and progress never goes backwards, as the spec requires.
 */
export class ProgressReporter {
  private last = -Infinity;
  private lastSentAt = 0;

  constructor(
    private readonly token: ProgressToken | undefined,
    private readonly send: NotificationSender,
    private readonly minIntervalMs = 100,
  ) {}

  get enabled(): boolean {
    return this.token !== undefined;
  }

  report(progress: number, total?: number, message?: string): void {
    if (this.token === undefined || progress <= this.last) return;
    const now = Date.now();
    const final = total !== undefined && progress >= total;
    if (!final && now - this.lastSentAt < this.minIntervalMs && this.last !== -Infinity) return;
    this.last = progress;
    this.lastSentAt = now;
    const params: Record<string, unknown> = { progressToken: this.token, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    this.send({ method: 'notifications/progress', params }).catch(() => {
      // The client may have gone; progress is advisory.
    });
  }
}

/** Throws the signal's reason as a cancellation if it fired. Call it inside long loops. */
export function throwIfCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new CancelledError();
}

export class CancelledError extends Error {
  constructor() {
    super('The request was cancelled.');
    this.name = 'CancelledError';
  }
}
