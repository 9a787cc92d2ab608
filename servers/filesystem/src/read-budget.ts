import { TimeBudget, ToolError, type RequestContext } from '@suite/shared';

/**
 * The time budget of one read, listing or search call (--read-timeout): past it, the call stops
 * with a timeout. `message` is given the limit in words and says what was stopped and what to do instead.
 */
export function readBudget(ctx: Pick<RequestContext, 'signal'>, ms: number, message: (limit: string) => string): TimeBudget {
  return new TimeBudget(ctx.signal, ms, (budget) => ToolError.timeout(message(`${budget.describe()} (the time limit of one call, --read-timeout)`)));
}
