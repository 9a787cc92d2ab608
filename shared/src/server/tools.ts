import { z } from 'zod';
import { MissingRequiredClientCapabilityError } from '@modelcontextprotocol/server';
import type { ContentBlock, RequestContext } from './context.js';
import { ToolError } from '../core/errors.js';
import { newErrorId } from '../core/logging.js';
import { InputNeeded } from './input-requests.js';
import { CancelledError } from '../core/progress.js';
import { processSecrets, type SecretScope } from '../core/secrets.js';
import type { ToolApp } from '../apps/meta.js';

/**
 * Every tool must say what it does to the world. The fields are required (not optional as in the
 * spec) so that forgetting one is a type error rather than a client guessing the worst case.
 * `readOnlyHint` also decides what read-only mode removes.
 */
export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** What a handler returns: plain text, or content blocks, plus structured output when declared. */
export type ToolReply<Structured> = [Structured] extends [undefined]
  ? string | { text: string } | { content: ContentBlock[] }
  : ({ text: string } | { content: ContentBlock[] }) & { structured: Structured };

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject | undefined = undefined> {
  name: string;
  /**
   * The toolset it belongs to (one of the server's declared toolsets). Without one, the tool is
   * part of the server's core and is on whenever read-only mode allows it.
   */
  toolset?: string;
  /** Shown to the model; say when to use the tool and what it returns. */
  description: string;
  input: I;
  /**
   * Earlier names of top-level arguments (a server this one replaces, an earlier release), each
   * mapped to its published name: renamed before validation and never published, so old habits
   * keep working at no cost in context. A call that gives both names is invalid arguments.
   */
  aliases?: Readonly<Record<string, string>>;
  /** When given, the result carries `structuredContent` validated against it. */
  output?: O;
  annotations: ToolAnnotations;
  /**
   * An MCP App shown with the tool's results (`_meta.ui` in tools/list, sent to every client: those
   * without apps ignore it). With `visibility: ['app']` the tool is for the app only: it is still
   * gated like any other (toolsets, read-only mode, limits), and is unknown to clients without apps.
   */
  app?: ToolApp;
  /**
   * Facts about the tool for clients and tooling, not for the model (the permission it needs, say),
   * sent as the tool's `_meta` in tools/list beside any app's keys. Namespace the keys
   * (`io.example/key`): `_meta` is shared with the protocol and extensions.
   */
  meta?: Readonly<Record<string, unknown>>;
  /**
   * The call may outlast a client's request timeout (a search over gigabytes, a slow query). For a
   * 2026-07-28 client that declares the tasks extension it becomes a task when it runs past the
   * budget (--task-after-ms); every other client gets the plain result. `'required'` (conformance
   * fixtures only) always makes a task and refuses clients without the extension.
   */
  longRunning?: boolean | 'required';
  // Method syntax on purpose: a list of tools with different schemas is then a list of AnyTool.
  handler(args: z.output<I>, ctx: RequestContext): Promise<ToolReply<O extends z.ZodObject ? z.output<O> : undefined>>;
}

/** Any tool definition, whatever its schemas: what a server's list of tools holds. */
export type AnyToolDefinition = ToolDefinition<z.ZodObject, z.ZodObject | undefined>;

/** The protocol-level shape of a tools/call result. */
export interface CallToolResult {
  [key: string]: unknown;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** An isError result; the message passes through the session's (or the process's) secret redaction. */
export function errorResult(message: string, secrets: SecretScope = processSecrets): CallToolResult {
  return { content: [{ type: 'text', text: secrets.redact(message) }], isError: true };
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
  options: { rethrowUnexpected?: boolean } = {},
): Promise<CallToolResult> {
  const renamed = dropNullOptionals(renameAliases(rawArgs ?? {}, tool.aliases), tool.input);
  if (typeof renamed === 'string') return errorResult(`Invalid arguments for ${tool.name}: ${renamed}`, ctx.secrets);
  const parsed = tool.input.safeParse(renamed);
  if (!parsed.success) {
    return errorResult(`Invalid arguments for ${tool.name}: ${describeZodError(parsed.error)}`, ctx.secrets);
  }
  const illFormed = illFormedString(parsed.data);
  if (illFormed !== undefined) {
    return errorResult(
      `Invalid arguments for ${tool.name}: ${illFormed || '(arguments)'}: contains an unpaired UTF-16 surrogate, which is not Unicode text; send the characters themselves.`,
      ctx.secrets,
    );
  }
  try {
    const reply = await tool.handler(parsed.data, ctx);
    return toResult(tool, reply, ctx);
  } catch (error) {
    // Not a failure: the 2026-07-28 client must answer first (sampling, roots); the call is retried.
    if (error instanceof InputNeeded) throw error;
    // A capability the 2026-07-28 client did not declare is a protocol error (-32021), not a tool failure.
    if (error instanceof MissingRequiredClientCapabilityError) throw error;
    // A task fails (rather than completes with isError) when its tool breaks unexpectedly.
    if (options.rethrowUnexpected && !(error instanceof ToolError) && !(error instanceof CancelledError) && !(ctx.signal.aborted && isAbortError(error))) throw error;
    return failureResult(tool.name, error, ctx);
  }
}

/** The arguments with every alias renamed to its published name, or what is wrong with them. */
function renameAliases(args: unknown, aliases: Readonly<Record<string, string>> | undefined): unknown {
  if (!aliases || typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const given = args as Record<string, unknown>;
  if (!Object.keys(aliases).some((alias) => Object.hasOwn(given, alias))) return args;
  // Entries, not assignments: a key such as __proto__ stays a plain property.
  const renamed = new Map<string, unknown>();
  for (const [key, value] of Object.entries(given)) {
    const published = Object.hasOwn(aliases, key) ? aliases[key]! : key;
    if (renamed.has(published) || (published !== key && Object.hasOwn(given, published))) {
      return `${published}: given twice (${key} is another name for ${published}); give it once.`;
    }
    renamed.set(published, value);
  }
  return Object.fromEntries(renamed);
}

/**
 * The arguments without the top-level optional ones given as `null`. Clients of the archived
 * reference servers (whose schemas allowed null) send `null` for "not given"; an argument whose
 * schema accepts null keeps it, and a required one stays null so that validation names it.
 */
function dropNullOptionals(args: unknown, input: z.ZodObject): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const given = args as Record<string, unknown>;
  const nulls = Object.keys(given).filter((key) => given[key] === null);
  if (nulls.length === 0) return args;
  const shape = input.shape as Record<string, z.ZodType | undefined>;
  const absent = new Set(
    nulls.filter((key) => {
      const field = shape[key];
      return field !== undefined && field.safeParse(undefined).success && !field.safeParse(null).success;
    }),
  );
  if (absent.size === 0) return args;
  return Object.fromEntries(Object.entries(given).filter(([key]) => !absent.has(key)));
}

/** A lone surrogate: valid in a JSON string ("\\udc00"), not in UTF-8 or a URL. */
const UNPAIRED_SURROGATE = /\p{Surrogate}/u;

/**
 * Where (a dotted path, '' for the top) a string holds an unpaired surrogate, or undefined. Such a
 * string cannot be encoded as UTF-8 or percent-encoded: a file would get U+FFFD instead, a URL
 * builder throws. Refused for every tool here rather than met in each handler.
 */
function illFormedString(value: unknown, at = ''): string | undefined {
  if (typeof value === 'string') return UNPAIRED_SURROGATE.test(value) ? at : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, item] of Object.entries(value)) {
    const where = UNPAIRED_SURROGATE.test(key) ? (at ? `${at}.${key}` : key) : illFormedString(item, at ? `${at}.${key}` : key);
    if (where !== undefined) return where;
  }
  return undefined;
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
    return errorResult(`${tool.name} failed unexpectedly (error id ${id}). The server log has the detail.`, ctx.secrets);
  }
  return { content, structuredContent: checked.data as Record<string, unknown> };
}

export function failureResult(toolName: string, error: unknown, ctx: Pick<RequestContext, 'log' | 'signal' | 'secrets'>): CallToolResult {
  if (error instanceof ToolError) return errorResult(error.message, ctx.secrets);
  if (error instanceof CancelledError || (ctx.signal.aborted && isAbortError(error))) {
    return errorResult(`${toolName} was cancelled.`, ctx.secrets);
  }
  const id = newErrorId();
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  ctx.log.private('error', `tool ${toolName} failed unexpectedly (error id ${id}): ${detail}`);
  return errorResult(`${toolName} failed unexpectedly (error id ${id}). The server log has the detail.`, ctx.secrets);
}

export function isAbortError(error: unknown): boolean {
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

/**
 * Types a tool declaration from its schemas (the handler's arguments and structured output are
 * checked against them) and returns it as a member of a list of tools.
 */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject | undefined = undefined>(definition: ToolDefinition<I, O>): AnyToolDefinition {
  return definition as unknown as AnyToolDefinition;
}

/** Makes one tool, or a close family of tools, from the server's process-wide configuration. */
export type ToolFactory<C> = (config: C) => AnyToolDefinition | readonly AnyToolDefinition[];

/**
 * A server's tools as a list of factories, built once per configuration object: every session
 * registers the same definitions (schemas, descriptions, handlers), so an idle HTTP session holds
 * no schema or closure of its own, and JSON Schemas are converted once (they are cached per schema
 * object). Handlers therefore must not keep per-session state in their closure: use `ctx`.
 */
export function toolList<C extends object>(factories: readonly ToolFactory<C>[]): (config: C) => readonly AnyToolDefinition[] {
  const built = new WeakMap<C, readonly AnyToolDefinition[]>();
  return (config) => {
    let tools = built.get(config);
    if (!tools) {
      tools = factories.flatMap((make) => make(config));
      built.set(config, tools);
    }
    return tools;
  };
}
