import { CancelledError } from '../core/progress.js';
import type { ToolError } from '../core/errors.js';

/**
 * How long one call may work, checked where it loops (between chunks of a file, between files
 * of a search). Cancellation (`notifications/cancelled`) is checked at the same places, so a long
 * read stops for either reason at the next chunk. A single read the operating system does not
 * return from (a hung network filesystem) cannot be interrupted this way.
 */
export class TimeBudget {
  readonly deadline: number;

  /** @param expired builds the error thrown once the time is up: what was stopped, and what to do instead */
  constructor(
    readonly signal: AbortSignal,
    readonly ms: number,
    private readonly expired: (budget: TimeBudget) => ToolError,
  ) {
    this.deadline = Date.now() + ms;
  }

  get exceeded(): boolean {
    return Date.now() > this.deadline;
  }

  /** Throws CancelledError when the request was cancelled, the budget's error when the time is up. */
  check(): void {
    if (this.signal.aborted) throw new CancelledError();
    if (this.exceeded) throw this.expired(this);
  }

  /** The budget in words for messages: "20 s", "250 ms". */
  describe(): string {
    return this.ms >= 1000 ? `${Number((this.ms / 1000).toFixed(1))} s` : `${this.ms} ms`;
  }
}
