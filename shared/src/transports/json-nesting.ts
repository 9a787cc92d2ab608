/**
 * One bound on how deeply a JSON-RPC message may nest arrays and objects, for every transport.
 * JSON.parse reads any depth, but validation, serialisation and handlers walk values recursively:
 * a few thousand levels (a 20 KB body) overflow the stack, which over HTTP was a 500. A message
 * past the bound is refused before anything walks it, with a JSON-RPC error that names the bound.
 * Real MCP traffic (tool arguments, schemas, sampling results) stays far below it.
 */
export const MAX_JSON_NESTING = 512;

/** JSON-RPC's code for a message that is not an acceptable request. */
export const INVALID_REQUEST = -32600;

/** Whether `value` nests arrays and objects more than `limit` levels deep (walked without recursion). */
export function nestsDeeperThan(value: unknown, limit: number = MAX_JSON_NESTING): boolean {
  if (value === null || typeof value !== 'object') return false;
  const stack: { value: object; depth: number }[] = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (depth > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) if (child !== null && typeof child === 'object') stack.push({ value: child as object, depth: depth + 1 });
  }
  return false;
}

/** The JSON-RPC error for a message nested past the bound: what happened, the bound, what to do. */
export function tooDeepError(limit: number = MAX_JSON_NESTING): { code: number; message: string; data: { maxNesting: number } } {
  return {
    code: INVALID_REQUEST,
    message: `Invalid Request: the message nests arrays and objects more than ${limit} levels deep, the most this server accepts. Send flatter JSON.`,
    data: { maxNesting: limit },
  };
}
