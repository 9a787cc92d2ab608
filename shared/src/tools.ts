import { z } from 'zod';
import type { Logger } from './logging.js';
import { newErrorId, redactSecrets } from './logging.js';
import { CancelledError, type ProgressReporter } from './progress.js';
import type { PathGuard } from './paths.js';
import type { RootsSnapshot } from './roots.js';

/**
 * Every tool must say what it does to the world. The fields are required (not optional as in the
 * spec) so that forgetting one is a type error rather than a client guessing the worst case.
 */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

export type ToolErrorKind = 'invalid_argument' | 'not_found' | 'access_denied' | 'conflict' | 'timeout' | 'cancelled' | 'unavailable' | 'failed';

/**
 * An expected failure. Its message goes to the client as-is, so it must be actionable and must
 * not contain anything the user did not give (host paths, secrets, stack traces).
 */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly kind: ToolErrorKind = 'failed',
  ) {
    super(message);
    this.name = 'ToolError';
  }

  static invalidArgument(message: string): ToolError {
    return new ToolError(message, 'invalid_argument');
  }
  static notFound(message: string): ToolError {
    return new ToolError(message, 'not_found');
  }
  static accessDenied(message: string): ToolError {
    return new ToolError(message, 'access_denied');
  }
  static conflict(message: string): ToolError {
    return new ToolError(message, 'conflict');
  }
  static timeout(message: string): ToolError {
    return new ToolError(message, 'timeout');
  }
  static unavailable(message: string): ToolError {
    return new ToolError(message, 'unavailable');
  }
}

export type TextContent = { type: 'text'; text: string };
export type ImageContent = { type: 'image'; data: string; mimeType: string };
export type AudioContent = { type: 'audio'; data: string; mimeType: string };
export type EmbeddedResourceContent = {
  type: 'resource';
  resource: { uri: string; mimeType?: string; text: string } | { uri: string; mimeType?: string; blob: string };
};
export type ResourceLinkContent = { type: 'resource_link'; uri: string; name: string; mimeType?: string; description?: string };
export type ContentBlock = TextContent | ImageContent | AudioContent | EmbeddedResourceContent | ResourceLinkContent;

/** What a handler returns: plain text, or content blocks, plus structured output when declared. */
export type ToolReply<Structured> = [Structured] extends [undefined]
  ? string | { text: string } | { content: ContentBlock[] }
  : ({ text: string } | { content: ContentBlock[] }) & { structured: Structured };

/** Per-call context handed to every handler. */
export interface RequestContext {
  /** Fires on `notifications/cancelled` (and when the session closes). */
  signal: AbortSignal;
  /** Reports `notifications/progress` when the request carried a progress token. */
  progress: ProgressReporter;
  log: Logger;
  sessionId: string | undefined;
  /** The effective roots, after the first client answer (bounded wait). */
  roots(): Promise<RootsSnapshot>;
  /**
   * The path guard over the effective file roots. Throws a ToolError that tells the user how
   * to configure access when no directory is allowed.
   */
  paths(): Promise<PathGuard>;
  /** Client-side features; undefined when the client did not declare them. */
  client: ClientFeatures;
}

export interface ClientFeatures {
  sampling: boolean;
  elicitation: boolean;
  roots: boolean;
  /** Sends `sampling/createMessage`; throws when the client lacks the capability. */
  createMessage(params: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Sends `elicitation/create`; throws when the client lacks the capability. */
  elicit(params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject | undefined = undefined> {
  name: string;
  /** Shown to the model; say when to use the tool and what it returns. */
  description: string;
  input: I;
  /** When given, the result carries `structuredContent` validated against it. */
  output?: O;
  annotations: ToolAnnotations;
  handler: (args: z.output<I>, ctx: RequestContext) => Promise<ToolReply<O extends z.ZodObject ? z.output<O> : undefined>>;
}

/** The protocol-level shape of a tools/call result. */
export interface CallToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export function errorResult(message: string): CallToolResult {
  return { content: [{ type: 'text', text: redactSecrets(message) }], isError: true };
}

/** Human-readable summary of zod issues, for the model to correct its call. */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const where = issue.path.length > 0 ? issue.path.map(String).join('.') : '(arguments)';
      return `${where}: ${issue.message}`;
    })
    .join('; ');
}

/**
 * Runs a handler and turns every failure into an isError result. Expected failures show their
 * message; anything else gets a generic message plus an id, and the detail only goes to stderr.
 */
export async function runTool(
  tool: ToolDefinition<z.ZodObject, z.ZodObject | undefined>,
  rawArgs: unknown,
  ctx: RequestContext,
): Promise<CallToolResult> {
  const parsed = tool.input.safeParse(rawArgs ?? {});
  if (!parsed.success) {
    return errorResult(`Invalid arguments for ${tool.name}: ${describeZodError(parsed.error)}`);
  }
  try {
    const reply = await tool.handler(parsed.data, ctx);
    return toResult(tool, reply, ctx);
  } catch (error) {
    return failureResult(tool.name, error, ctx);
  }
}

function toResult(tool: ToolDefinition<z.ZodObject, z.ZodObject | undefined>, reply: unknown, ctx: RequestContext): CallToolResult {
  if (typeof reply === 'string') return { content: [{ type: 'text', text: reply }] };
  const r = reply as { text?: string; content?: ContentBlock[]; structured?: Record<string, unknown> };
  const content: ContentBlock[] = r.content ?? [{ type: 'text', text: r.text ?? '' }];
  if (!tool.output) return { content };
  const checked = tool.output.safeParse(r.structured);
  if (!checked.success) {
    const id = newErrorId();
    ctx.log.private('error', `tool ${tool.name} produced output that does not match its schema (error id ${id})`, {
      issues: describeZodError(checked.error),
    });
    return errorResult(`${tool.name} failed unexpectedly (error id ${id}). The server log has the detail.`);
  }
  return { content, structuredContent: checked.data as Record<string, unknown> };
}

export function failureResult(toolName: string, error: unknown, ctx: Pick<RequestContext, 'log' | 'signal'>): CallToolResult {
  if (error instanceof ToolError) return errorResult(error.message);
  if (error instanceof CancelledError || (ctx.signal.aborted && isAbortError(error))) {
    return errorResult(`${toolName} was cancelled.`);
  }
  const id = newErrorId();
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  ctx.log.private('error', `tool ${toolName} failed unexpectedly (error id ${id}): ${detail}`);
  return errorResult(`${toolName} failed unexpectedly (error id ${id}). The server log has the detail.`);
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'CancelledError');
}

const jsonSchemaCache = { input: new WeakMap<z.ZodObject, Record<string, unknown>>(), output: new WeakMap<z.ZodObject, Record<string, unknown>>() };

/**
 * JSON Schema for a zod object, as tools/list publishes it. Cached per schema object: schemas
 * are module constants, so every session and every tools/list after the first is free.
 */
export function toJsonSchema(schema: z.ZodObject, io: 'input' | 'output'): Record<string, unknown> {
  const cached = jsonSchemaCache[io].get(schema);
  if (cached) return cached;
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  if (json.type !== 'object') json.type = 'object';
  jsonSchemaCache[io].set(schema, json);
  return json;
}
