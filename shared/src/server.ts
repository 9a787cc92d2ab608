import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { UriTemplate } from '@modelcontextprotocol/sdk/shared/uriTemplate.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  RootsListChangedNotificationSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  McpError,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import { LOG_LEVELS, Logger, newErrorId, type LogLevel } from './logging.js';
import { decodeCursor, encodeCursor } from './pagination.js';
import { PathGuard, noRootsMessage } from './paths.js';
import { ProgressReporter } from './progress.js';
import { ProtocolError } from './protocol-errors.js';
import type {
  Completer,
  PromptDefinition,
  ResourceContents,
  ResourceDefinition,
  ResourceListing,
  ResourceTemplateDefinition,
  TemplateVariables,
} from './resources.js';
import { RootsManager, type RootsSnapshot } from './roots.js';
import type { ChangeHub } from './subscriptions.js';
import { ToolError, runTool, toJsonSchema, type CallToolResult, type RequestContext, type ToolDefinition } from './tools.js';

export interface SuiteServerOptions {
  /** Reported as serverInfo.name, e.g. "@suite/server-filesystem". */
  name: string;
  version: string;
  title?: string;
  /** Sent to the client at initialization: how the model should use this server. */
  instructions?: string;
  /**
   * File roots. Give it (even with no directories) to have the server ask the client for roots
   * and apply the narrowing policy; omit it for servers that touch no files.
   */
  roots?: { directories: readonly string[]; aliases?: readonly string[]; waitMs?: number };
  /** The process-wide change hub; enables resources/subscribe. */
  changes?: ChangeHub;
  /** Page size for resources/list. */
  pageSize?: number;
}

const LIST_ROOTS_RESULT = z.looseObject({
  roots: z.array(z.looseObject({ uri: z.string().min(1), name: z.string().optional() })),
});

type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject | undefined>;

interface RegisteredTemplate {
  def: ResourceTemplateDefinition;
  matcher: UriTemplate;
}

type RequestExtra = {
  signal: AbortSignal;
  sessionId?: string;
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: string; params?: Record<string, unknown> }) => Promise<void>;
  sendRequest: <S extends z.ZodType>(request: { method: string; params?: Record<string, unknown> }, schema: S) => Promise<z.output<S>>;
};

/**
 * One MCP session's server. Build one per session (the HTTP transport does so for every new
 * session); state shared across sessions belongs to the caller (a database pool, the change hub).
 *
 * This class is the only place that talks to the SDK's request handlers, so that server
 * packages register plain definitions and never depend on SDK internals.
 */
export class SuiteServer {
  readonly log: Logger;
  readonly sessionKey = randomUUID();
  private readonly tools = new Map<string, AnyTool>();
  private readonly resources = new Map<string, ResourceDefinition>();
  private readonly templates: RegisteredTemplate[] = [];
  private readonly prompts = new Map<string, PromptDefinition>();
  private readonly closeHandlers: (() => void | Promise<void>)[] = [];
  private readonly rootsManager: RootsManager | undefined;
  private clientLogLevel: LogLevel = 'info';
  private guard: { version: number; guard: PathGuard } | undefined;
  private sdk: Server | undefined;
  private closed = false;

  constructor(private readonly options: SuiteServerOptions) {
    this.log = new Logger(options.name.replace(/^@suite\/server-/, ''));
    if (options.roots) {
      this.rootsManager = new RootsManager(options.roots.directories, this.log.child('roots'), options.roots.waitMs);
    }
  }

  tool<I extends z.ZodObject, O extends z.ZodObject | undefined = undefined>(definition: ToolDefinition<I, O>): this {
    if (this.tools.has(definition.name)) throw new Error(`Tool ${definition.name} is registered twice`);
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(definition.name)) throw new Error(`Invalid tool name: ${definition.name}`);
    this.tools.set(definition.name, definition as unknown as AnyTool);
    return this;
  }

  resource(definition: ResourceDefinition): this {
    this.resources.set(definition.uri, definition);
    return this;
  }

  resourceTemplate(definition: ResourceTemplateDefinition): this {
    this.templates.push({ def: definition, matcher: new UriTemplate(definition.uriTemplate) });
    return this;
  }

  prompt<A extends z.ZodObject>(definition: PromptDefinition<A>): this {
    this.prompts.set(definition.name, definition as unknown as PromptDefinition);
    return this;
  }

  /** Runs when the session ends, whatever ends it. */
  onClose(handler: () => void | Promise<void>): this {
    this.closeHandlers.push(handler);
    return this;
  }

  /** Names of the registered tools (for CLI help and tests). */
  get toolNames(): string[] {
    return [...this.tools.keys()];
  }

  /** Tells this session's client that the resource list changed. */
  notifyResourceListChanged(): void {
    void this.sdk?.sendResourceListChanged().catch(() => undefined);
  }

  async connect(transport: Transport): Promise<void> {
    if (this.sdk) throw new Error('A SuiteServer serves one session; build a new one per connection.');
    const sdk = new Server(
      { name: this.options.name, version: this.options.version, ...(this.options.title ? { title: this.options.title } : {}) },
      { capabilities: this.capabilities(), ...(this.options.instructions ? { instructions: this.options.instructions } : {}) },
    );
    this.sdk = sdk;
    this.installHandlers(sdk);
    this.log.attach((level, logger, data) => {
      if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(this.clientLogLevel)) return;
      void sdk.sendLoggingMessage({ level, logger, data }).catch(() => undefined);
    });
    this.options.changes?.addSession(this.sessionKey, {
      resourceUpdated: (uri) => void sdk.sendResourceUpdated({ uri }).catch(() => undefined),
      listChanged: () => void sdk.sendResourceListChanged().catch(() => undefined),
    });
    sdk.onclose = () => void this.close();
    await sdk.connect(transport);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.log.attach(undefined);
    await this.options.changes?.removeSession(this.sessionKey);
    for (const handler of this.closeHandlers.splice(0)) {
      try {
        await handler();
      } catch (error) {
        this.log.private('warning', `close handler failed: ${String(error)}`);
      }
    }
    await this.sdk?.close().catch(() => undefined);
  }

  private capabilities(): ServerCapabilities {
    const caps: ServerCapabilities = { logging: {} };
    if (this.tools.size > 0) caps.tools = { listChanged: false };
    if (this.resources.size > 0 || this.templates.length > 0) {
      caps.resources = { listChanged: true, subscribe: this.options.changes !== undefined };
    }
    if (this.prompts.size > 0) caps.prompts = { listChanged: false };
    const completes = this.templates.some((t) => t.def.complete) || [...this.prompts.values()].some((p) => p.complete);
    if (completes) caps.completions = {};
    return caps;
  }

  private context(extra: RequestExtra): RequestContext {
    const sdk = this.sdk!;
    const clientCaps = sdk.getClientCapabilities() ?? {};
    const roots = async (): Promise<RootsSnapshot> =>
      this.rootsManager ? this.rootsManager.snapshot() : { directories: [], clientRoots: undefined, source: 'command-line' };
    return {
      signal: extra.signal,
      progress: new ProgressReporter(extra._meta?.progressToken, (n) => extra.sendNotification(n)),
      log: this.log,
      sessionId: extra.sessionId,
      roots,
      paths: async () => {
        const snapshot = await roots();
        if (snapshot.directories.length === 0) throw ToolError.accessDenied(noRootsMessage());
        const version = this.rootsManager?.version ?? 0;
        if (this.guard?.version !== version) {
          this.guard = { version, guard: new PathGuard(snapshot.directories, this.options.roots?.aliases ?? []) };
        }
        return this.guard.guard;
      },
      client: {
        sampling: clientCaps.sampling !== undefined,
        elicitation: clientCaps.elicitation !== undefined,
        roots: clientCaps.roots !== undefined,
        createMessage: async (params) => {
          if (!clientCaps.sampling) throw ToolError.unavailable('The client does not support sampling.');
          return extra.sendRequest({ method: 'sampling/createMessage', params }, CreateMessageResultSchema);
        },
        elicit: async (params) => {
          if (!clientCaps.elicitation) throw ToolError.unavailable('The client does not support elicitation.');
          return extra.sendRequest({ method: 'elicitation/create', params }, ElicitResultSchema);
        },
      },
    };
  }

  private installHandlers(sdk: Server): void {
    const ctx = (extra: unknown): RequestContext => this.context(extra as RequestExtra);

    handle(sdk, SetLevelRequestSchema, async (request) => {
      this.clientLogLevel = request.params.level;
      return {};
    });

    sdk.oninitialized = () => {
      if (!this.rootsManager) return;
      if (sdk.getClientCapabilities()?.roots) {
        // The SDK's own schema only admits file: roots; servers such as a git server want the others too.
        this.rootsManager.enableClientRoots(async () => (await sdk.request({ method: 'roots/list' }, LIST_ROOTS_RESULT)).roots);
      } else {
        this.rootsManager.disableClientRoots();
      }
    };
    if (this.rootsManager) {
      const manager = this.rootsManager;
      sdk.setNotificationHandler(RootsListChangedNotificationSchema, async () => {
        await manager.refresh();
      });
    }

    if (this.tools.size > 0) {
      handle(sdk, ListToolsRequestSchema, async () => ({
        tools: [...this.tools.values()].map((tool) => ({
          name: tool.name,
          title: tool.annotations.title,
          description: tool.description,
          inputSchema: toJsonSchema(tool.input, 'input') as { type: 'object' },
          ...(tool.output ? { outputSchema: toJsonSchema(tool.output, 'output') as { type: 'object' } } : {}),
          annotations: { ...tool.annotations },
        })),
      }));
      handle(sdk, CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
        const tool = this.tools.get(request.params.name);
        if (!tool) throw ProtocolError.invalidParams(`Unknown tool: ${request.params.name}`);
        return runTool(tool, request.params.arguments, ctx(extra));
      });
    }

    if (this.resources.size > 0 || this.templates.length > 0) this.installResourceHandlers(sdk, ctx);
    if (this.prompts.size > 0) this.installPromptHandlers(sdk, ctx);

    if (this.capabilities().completions) this.installCompletionHandler(sdk, ctx);
  }

  private installCompletionHandler(sdk: Server, ctx: (extra: unknown) => RequestContext): void {
    handle(sdk, CompleteRequestSchema, async (request, extra) => {
      const { ref, argument } = request.params;
      const context = { arguments: request.params.context?.arguments ?? {} };
      let completer: Completer | undefined;
      if (ref.type === 'ref/prompt') {
        const prompt = this.prompts.get(ref.name);
        if (!prompt) throw ProtocolError.invalidParams(`Unknown prompt: ${ref.name}`);
        completer = (prompt.complete as Record<string, Completer> | undefined)?.[argument.name];
      } else {
        const template = this.templates.find((t) => t.def.uriTemplate === ref.uri);
        if (!template) throw ProtocolError.invalidParams(`Unknown resource template: ${ref.uri}`);
        completer = template.def.complete?.[argument.name];
      }
      if (!completer) return { completion: { values: [], hasMore: false } };
      let values: string[];
      try {
        values = await completer(argument.value, context, ctx(extra));
      } catch (error) {
        this.log.private('warning', `completion failed: ${String(error)}`);
        values = [];
      }
      return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
    });
  }

  private installResourceHandlers(sdk: Server, ctx: (extra: unknown) => RequestContext): void {
    const cursorState = z.object({ phase: z.number().int().min(0), inner: z.string().optional() });

    handle(sdk, ListResourcesRequestSchema, async (request, extra) => {
      const state = request.params?.cursor ? decodeCursor('resources', request.params.cursor, cursorState) : { phase: 0 };
      const listable = this.templates.filter((t) => t.def.list);
      const resources: ResourceListing[] = [];
      let phase = state.phase;
      let inner = state.inner;
      if (phase === 0) {
        for (const r of this.resources.values()) resources.push(listingOf(r));
        phase = 1;
        inner = undefined;
      }
      // Fill one page from the templates, moving to the next template when one runs out.
      while (phase - 1 < listable.length && resources.length < (this.options.pageSize ?? 500)) {
        const template = listable[phase - 1]!;
        const page = await this.guardResourceCall(() => template.def.list!(inner, ctx(extra)));
        resources.push(...page.resources);
        if (page.nextCursor) {
          inner = page.nextCursor;
          break;
        }
        phase += 1;
        inner = undefined;
      }
      const done = phase - 1 >= listable.length;
      return done ? { resources } : { resources, nextCursor: encodeCursor('resources', { phase, ...(inner ? { inner } : {}) }) };
    });

    handle(sdk, ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: this.templates.map(({ def }) => ({
        uriTemplate: def.uriTemplate,
        name: def.name,
        ...(def.title ? { title: def.title } : {}),
        ...(def.description ? { description: def.description } : {}),
        ...(def.mimeType ? { mimeType: def.mimeType } : {}),
      })),
    }));

    handle(sdk, ReadResourceRequestSchema, async (request, extra) => {
      const { uri } = request.params;
      const contents = await this.guardResourceCall(() => {
        const resource = this.resources.get(uri);
        if (resource) return resource.read(ctx(extra));
        const found = this.matchTemplate(uri);
        if (!found) throw ProtocolError.resourceNotFound(uri);
        return found.template.def.read(uri, found.variables, ctx(extra));
      });
      return { contents: Array.isArray(contents) ? contents : [contents] };
    });

    const changes = this.options.changes;
    if (!changes) return;
    handle(sdk, SubscribeRequestSchema, async (request, extra) => {
      const { uri } = request.params;
      const resource = this.resources.get(uri);
      const found = resource ? undefined : this.matchTemplate(uri);
      if (!resource && !found) throw ProtocolError.resourceNotFound(uri);
      const context = ctx(extra);
      await this.guardResourceCall(() =>
        changes.subscribe(this.sessionKey, uri, async (change) => {
          if (resource) return resource.subscribe?.(context, change);
          return found!.template.def.subscribe?.(uri, found!.variables, context, change);
        }),
      );
      return {};
    });
    handle(sdk, UnsubscribeRequestSchema, async (request) => {
      await changes.unsubscribe(this.sessionKey, request.params.uri);
      return {};
    });
  }

  private installPromptHandlers(sdk: Server, ctx: (extra: unknown) => RequestContext): void {
    handle(sdk, ListPromptsRequestSchema, async () => ({
      prompts: [...this.prompts.values()].map((prompt) => ({
        name: prompt.name,
        ...(prompt.title ? { title: prompt.title } : {}),
        description: prompt.description,
        arguments: Object.entries(prompt.args.shape).map(([name, schema]) => {
          const field = schema as z.ZodType;
          return {
            name,
            ...(field.description ? { description: field.description } : {}),
            required: !field.safeParse(undefined).success,
          };
        }),
      })),
    }));
    handle(sdk, GetPromptRequestSchema, async (request, extra) => {
      const prompt = this.prompts.get(request.params.name);
      if (!prompt) throw ProtocolError.invalidParams(`Unknown prompt: ${request.params.name}`);
      const parsed = prompt.args.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        throw ProtocolError.invalidParams(
          `Invalid arguments for prompt ${prompt.name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ')}`,
        );
      }
      return this.guardResourceCall(() => prompt.get(parsed.data, ctx(extra)));
    });
  }

  private matchTemplate(uri: string): { template: RegisteredTemplate; variables: TemplateVariables } | undefined {
    for (const template of this.templates) {
      const match = template.matcher.match(uri);
      if (match) {
        const variables: TemplateVariables = {};
        for (const [key, value] of Object.entries(match)) variables[key] = Array.isArray(value) ? value.join('/') : String(value);
        return { template, variables };
      }
    }
    return undefined;
  }

  /**
   * Resource and prompt failures are JSON-RPC errors (the protocol has no isError for them);
   * the same rule applies as for tools: expected failures keep their message, the rest is
   * generic with an error id.
   */
  private async guardResourceCall<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof McpError) throw error;
      if (error instanceof ToolError) {
        if (error.kind === 'not_found') throw new McpError(-32002, error.message);
        throw ProtocolError.invalidParams(error.message);
      }
      const id = newErrorId();
      this.log.private('error', `request failed unexpectedly (error id ${id}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      throw ProtocolError.internal(`The request failed unexpectedly (error id ${id}). The server log has the detail.`);
    }
  }
}

/**
 * Registers a request handler whose params are validated here, so that a malformed request is
 * answered with -32602 (invalid params) and a readable message, not the SDK's internal error.
 */
function handle<S extends z.ZodObject<{ method: z.ZodLiteral<string> }>, R>(
  sdk: Server,
  schema: S,
  fn: (request: z.output<S>, extra: unknown) => Promise<R>,
): void {
  const loose = z.looseObject({ method: schema.shape.method, params: z.unknown().optional() });
  sdk.setRequestHandler(loose, async (raw, extra) => {
    const parsed = schema.safeParse(raw);
    if (!parsed.success) {
      const detail = parsed.error.issues
        .slice(0, 5)
        .map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`)
        .join('; ');
      throw ProtocolError.invalidParams(`Invalid ${String(raw.method)} request: ${detail}`);
    }
    return (await fn(parsed.data, extra)) as never;
  });
}

function listingOf(r: ResourceDefinition): ResourceListing {
  return {
    uri: r.uri,
    name: r.name,
    ...(r.title ? { title: r.title } : {}),
    ...(r.description ? { description: r.description } : {}),
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
  };
}

export type { ResourceContents };
