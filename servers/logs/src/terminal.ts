import { escapeTerminalControls, type AnyToolDefinition, type ToolReply } from '@suite/shared';

/**
 * What the server shows of logs and file names, made safe for a terminal: an ESC, an OSC 8
 * hyperlink, a BEL, a CR or a NUL in a log line or a file name becomes a visible escape (`\x1b`)
 * instead of acting on the terminal of a client that prints tool output (shared's
 * escapeTerminalControls; tab and line feed stay). Applied to every tool's answer, text and
 * structured content alike, to resource text and listings, and to completion values.
 */

/** Every string in a structured value, escaped. */
export function visibleDeep<T>(value: T): T {
  if (typeof value === 'string') return escapeTerminalControls(value) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => visibleDeep(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) out[key] = visibleDeep(v);
    return out as T;
  }
  return value;
}

type AnyReply = ToolReply<undefined> | ToolReply<Record<string, unknown>>;

function visibleReply(reply: AnyReply): AnyReply {
  if (typeof reply === 'string') return escapeTerminalControls(reply);
  const out: Record<string, unknown> = { ...reply };
  if ('text' in reply) out.text = escapeTerminalControls(reply.text);
  if ('content' in reply) out.content = reply.content.map((block) => (block.type === 'text' ? { ...block, text: escapeTerminalControls(block.text) } : block));
  if ('structured' in reply) out.structured = visibleDeep((reply as { structured: unknown }).structured);
  return out as AnyReply;
}

/** The same tool, its answers escaped. */
export function visibleTool(tool: AnyToolDefinition): AnyToolDefinition {
  return { ...tool, handler: async (args, ctx) => visibleReply((await tool.handler(args, ctx)) as AnyReply) as Awaited<ReturnType<AnyToolDefinition['handler']>> };
}
