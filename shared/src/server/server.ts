import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
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
  ErrorCode,
  McpError,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type {
  AuthInfo,
  ChangeAnnouncer,
  ClientFeatures,
  ElicitRequest,
  ElicitResult,
  EmbeddedResourceContent,
  RequestContext,
  SamplingRequest,
  SamplingResult,
  SessionInfo,
} from './context.js';
import { ToolError, UsageError } from '../core/errors.js';
import { LOG_LEVELS, Logger, newErrorId, type LogLevel } from '../core/logging.js';
import { decodeCursor, encodeCursor } from './pagination.js';
import { PathGuard, noRootsMessage } from '../files/paths.js';
import { CancelledError, ProgressReporter } from '../core/progress.js';
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
import { RootsManager, type RootsSnapshot } from '../files/roots.js';
import { SecretScope, processSecrets } from '../core/secrets.js';
import type { ChangeHub, ChangeSetup } from '../changes/subscriptions.js';
import { TemplateMatcher } from './uri-templates.js';
import { runTool, toJsonSchema, type AnyToolDefinition, type CallToolResult, type ToolDefinition } from './tools.js';
import { ToolGate, dynamicToolsetTools, type ToolSelection, type ToolsetInfo } from './toolsets.js';

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
  /** The session this server serves, as the transport's session factory was told; a fresh one otherwise. */
  session?: SessionInfo;
  /** The server's named toolsets; every tool with a `toolset` must name one of these. */
  toolsets?: readonly ToolsetInfo[];
  /** Which tools this session exposes (read-only mode, toolsets, single tools, dynamic mode). */
  selection?: ToolSelection;
}

/** The state a resources/list cursor carries: which template (phase) and that template's own cursor. */
const RESOURCES_CURSOR = z.object({ phase: z.number().int().min(0), inner: z.string().optional() });

const LIST_ROOTS_RESULT = z.looseObject({
  roots: z.array(z.looseObject({ uri: z.string().min(1), name: z.string().optional() })),
});

type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject | undefined>;

interface RegisteredTemplate {
  def: ResourceTemplateDefinition;
  matcher: TemplateMatcher;
}

/** The part of the SDK's request extra this class uses. */
type RequestExtra = {
  signal: AbortSignal;
  authInfo?: AuthInfo & { clientId?: string; scopes?: string[] };
  _meta?: { progressToken?: string | number };
  sendNotification: (n: { method: string; params?: Record<string, unknown> }) => Promise<void>;
  sendRequest: <S extends z.ZodType>(
    request: { method: string; params?: Record<string, unknown> },
    schema: S,
    options?: { signal?: AbortSignal; timeout?: number },
  ) => Promise<z.output<S>>;
};

/** How long a sampling or elicitation request may wait for the client (a human may have to approve it). */
const CLIENT_REQUEST_TIMEOUT_MS = 120_000;

export type ListKind = 'tools' | 'resources' | 'prompts';

/**
 * The SDK builds an Ajv instance per Server (about 20 KiB of heap each) unless given one; every
 * session shares this one, which is what makes an idle HTTP session cheap.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * One MCP session's server. Build one per session (the HTTP transport does so for every new
 * session); state shared across sessions belongs to the caller (a database pool, the change hub).
 *
 * This class is the only place that talks to the SDK's request handlers, so that server
 * packages register plain definitions and never depend on SDK internals.
 */
export class SuiteServer {
  readonly log: Logger;
  readonly session: SessionInfo;
  /** This session's secrets (its bearer token, anything a handler registers); forgotten when it closes. */
  readonly secrets: SecretScope;
  readonly gate: ToolGate;
  private readonly registered = new Map<string, AnyTool>();
  private readonly resources = new Map<string, ResourceDefinition>();
  private readonly templates: RegisteredTemplate[] = [];
  private readonly prompts = new Map<string, PromptDefinition>();
  private readonly closeHandlers: (() => void | Promise<void>)[] = [];
  private readonly rootsManager: RootsManager | undefined;
  private clientLogLevel: LogLevel = 'info';
  private guard: { version: number; guard: PathGuard } | undefined;
  private sdk: Server | undefined;
  private closed = false;
  private markConnected: () => void = () => undefined;
  private changeAnnouncer: ChangeAnnouncer | undefined;
  private readonly connected = new Promise<void>((resolve) => (this.markConnected = resolve));

  constructor(private readonly options: SuiteServerOptions) {
    this.session = options.session ?? { id: randomUUID(), transport: 'memory' };
    this.secrets = new SecretScope(processSecrets);
    this.secrets.add(this.session.auth?.token);
    this.log = new Logger(options.name.replace(/^@suite\/server-/, ''), this.secrets);
    this.gate = new ToolGate(options.toolsets ?? [], options.selection);
    if (options.roots) {
      this.rootsManager = new RootsManager(options.roots.directories, this.log.child('roots'), options.roots.waitMs);
    }
    if (this.gate.dynamic) {
      const host = {
        gate: this.gate,
        allTools: () => [...this.registered.values()],
        enableToolset: (name: string) => this.enableToolset(name),
      };
      for (const meta of dynamicToolsetTools(host)) this.tool(meta);
    }
  }

  /** The session's one identity (the Mcp-Session-Id over HTTP). */
  get sessionId(): string {
    return this.session.id;
  }

  /**
   * Registers a tool. Whether a client sees it is decided here, from the session's selection: a
   * tool outside the enabled toolsets, or one that writes while the server is read-only, is kept
   * out of tools/list and tools/call. A tool registered after connect is announced with
   * `notifications/tools/list_changed`.
   */
  tool<I extends z.ZodObject, O extends z.ZodObject | undefined = undefined>(definition: ToolDefinition<I, O>): this {
    if (this.registered.has(definition.name)) throw new Error(`Tool ${definition.name} is registered twice`);
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(definition.name)) throw new Error(`Invalid tool name: ${definition.name}`);
    if (definition.toolset !== undefined && !this.gate.toolsets.some((t) => t.name === definition.toolset)) {
      throw new Error(`Tool ${definition.name} names toolset ${definition.toolset}, which the server does not declare`);
    }
    this.registered.set(definition.name, definition as unknown as AnyTool);
    if (this.sdk && this.gate.allows(definition as unknown as AnyTool)) this.listChanged('tools');
    return this;
  }

  /** Registers several tools (a server's list of tool declarations). */
  tools(definitions: readonly AnyToolDefinition[]): this {
    for (const definition of definitions) this.tool(definition);
    return this;
  }

  /**
   * Switches a toolset on for this session (read-only mode still applies) and announces the
   * change. Returns the names of the tools it added.
   */
  enableToolset(name: string): string[] {
    const before = new Set(this.exposedTools().map((t) => t.name));
    if (!this.gate.enable(name)) return [];
    const added = this.exposedTools()
      .map((t) => t.name)
      .filter((n) => !before.has(n));
    if (added.length > 0) this.listChanged('tools');
    return added;
  }

  /** The tools this session exposes, in registration order. */
  private exposedTools(): AnyTool[] {
    return [...this.registered.values()].filter((t) => this.gate.allows(t));
  }

  resource(definition: ResourceDefinition): this {
    this.resources.set(definition.uri, definition);
    return this;
  }

  resourceTemplate(definition: ResourceTemplateDefinition): this {
    this.templates.push({ def: definition, matcher: new TemplateMatcher(definition.uriTemplate) });
    return this;
  }

  prompt<A extends z.ZodObject>(definition: PromptDefinition<A>): this {
    this.prompts.set(definition.name, definition as unknown as PromptDefinition);
    return this;
  }

  /**
   * Runs whenever a client answer changes this session's effective roots (a server whose lists
   * depend on the roots, such as its repositories, announces its own list_changed from here).
   */
  onRootsChanged(handler: (snapshot: RootsSnapshot) => void): this {
    this.rootsManager?.onChange(handler);
    return this;
  }

  /**
   * Follows a change source (paths, trees, a poll) for this server's own sake, such as a list that
   * depends on what is on disk: `onChange` runs after each burst of changes until the returned
   * function is called or the session ends. Sessions following the same key share one source.
   * Starts once the session is connected; without a change hub (`changes`) nothing is followed.
   */
  async observe(key: string, setup: ChangeSetup, onChange: () => void): Promise<() => Promise<void>> {
    const hub = this.options.changes;
    const nothing = async (): Promise<void> => undefined;
    if (!hub) return nothing;
    await this.connected;
    if (this.closed) return nothing;
    await hub.observe(this.sessionId, key, setup, onChange);
    // Closed meanwhile: the session's release has run already, so this hold is released here.
    if (this.closed) {
      await hub.unobserve(this.sessionId, key);
      return nothing;
    }
    return () => hub.unobserve(this.sessionId, key);
  }

  /** Runs when the session ends, whatever ends it. */
  onClose(handler: () => void | Promise<void>): this {
    this.closeHandlers.push(handler);
    return this;
  }

  /** Names of the tools this session exposes (for CLI help and tests). */
  get toolNames(): string[] {
    return this.exposedTools().map((t) => t.name);
  }

  /**
   * Tells this session's client that one of its lists changed (`notifications/<kind>/list_changed`):
   * a toolset enabled, its roots changing what it sees. A change that concerns every session (a
   * table created, a file added) is announced by a handler with `ctx.changes.resourceListChanged()`,
   * which reaches each session through here. A no-op before connect and after close.
   */
  listChanged(kind: ListKind): void {
    const sdk = this.sdk;
    if (!sdk || this.closed) return;
    const send = kind === 'tools' ? sdk.sendToolListChanged() : kind === 'prompts' ? sdk.sendPromptListChanged() : sdk.sendResourceListChanged();
    void send.catch(() => undefined);
  }

  /**
   * Refuses a selection that names tools no one registered. Called at connect; the CLI calls it
   * at start-up too, so a typo in --tools stops the server with a usage error.
   */
  checkSelection(): void {
    const unknown = this.gate.unknownTools(this.registered.keys());
    if (unknown.length > 0) {
      throw new UsageError(`Unknown tool${unknown.length > 1 ? 's' : ''} in --tools: ${unknown.join(', ')}. Available: ${[...this.registered.keys()].join(', ')}.`);
    }
  }

  async connect(transport: Transport): Promise<void> {
    if (this.sdk) throw new Error('A SuiteServer serves one session; build a new one per connection.');
    this.checkSelection();
    const sdk = new Server(
      { name: this.options.name, version: this.options.version, ...(this.options.title ? { title: this.options.title } : {}) },
      {
        capabilities: this.capabilities(),
        jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
        ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
      },
    );
    this.sdk = sdk;
    this.installHandlers(sdk);
    this.log.attach((level, logger, data) => {
      if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(this.clientLogLevel)) return;
      void sdk.sendLoggingMessage({ level, logger, data }).catch(() => undefined);
    });
    this.options.changes?.addSession(this.sessionId, {
      resourceUpdated: (uri) => void sdk.sendResourceUpdated({ uri }).catch(() => undefined),
      listChanged: () => this.listChanged('resources'),
    });
    sdk.onclose = () => void this.close();
    await sdk.connect(transport);
    this.markConnected();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.log.attach(undefined);
    await this.options.changes?.removeSession(this.sessionId);
    for (const handler of this.closeHandlers.splice(0)) {
      try {
        await handler();
      } catch (error) {
        this.log.private('warning', `close handler failed: ${String(error)}`);
      }
    }
    await this.sdk?.close().catch(() => undefined);
    this.secrets.clear();
  }

  private capabilities(): ServerCapabilities {
    // Tools are declared even when none is registered yet: capabilities are fixed at connect, and
    // any server may gain tools afterwards (a toolset enabled, a tool registered late), which a
    // client only hears of through tools/list_changed if the capability said so.
    const caps: ServerCapabilities = { logging: {}, tools: { listChanged: true } };
    if (this.resources.size > 0 || this.templates.length > 0) {
      caps.resources = { listChanged: true, subscribe: this.options.changes !== undefined };
    }
    if (this.prompts.size > 0) caps.prompts = { listChanged: true };
    const completes = this.templates.some((t) => t.def.complete) || [...this.prompts.values()].some((p) => p.complete);
    if (completes) caps.completions = {};
    return caps;
  }

  private context(extra: RequestExtra): RequestContext {
    const roots = async (): Promise<RootsSnapshot> =>
      this.rootsManager ? this.rootsManager.snapshot() : { directories: [], clientRoots: undefined, source: 'command-line' };
    return {
      signal: extra.signal,
      progress: new ProgressReporter(extra._meta?.progressToken, (n) => extra.sendNotification(n)),
      log: this.log,
      sessionId: this.sessionId,
      auth: extra.authInfo ? authFrom(extra.authInfo) : this.session.auth,
      secrets: this.secrets,
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
      client: this.clientFeatures(extra),
      embedResource: async (uri) => {
        const contents = await this.readResource(uri, this.context(extra));
        return contents.map((resource): EmbeddedResourceContent => ({ type: 'resource', resource }));
      },
      changes: this.announcer(),
    };
  }

  /** ctx.changes: the hub's publishing, bound to this session; one object per session. */
  private announcer(): ChangeAnnouncer {
    if (this.changeAnnouncer) return this.changeAnnouncer;
    const hub = this.options.changes;
    this.changeAnnouncer = hub
      ? {
          resourceUpdated: (uri) => hub.publish(uri),
          resourceListChanged: () => hub.publishListChanged(),
          watchListing: (key, dirs, options) => hub.watchListing(this.sessionId, key, dirs, options),
          unwatchListing: (key) => hub.unwatchListing(this.sessionId, key),
        }
      : {
          // No hub: nothing can be subscribed, and the only session to tell is this one.
          resourceUpdated: () => undefined,
          resourceListChanged: () => this.listChanged('resources'),
          watchListing: async () => undefined,
          unwatchListing: async () => undefined,
        };
    return this.changeAnnouncer;
  }

  private clientFeatures(extra: RequestExtra): ClientFeatures {
    const clientCaps = this.sdk?.getClientCapabilities() ?? {};
    const ask = async <S extends z.ZodType>(what: string, method: string, params: object, schema: S, timeoutMs: number | undefined): Promise<z.output<S>> => {
      const timeout = timeoutMs ?? CLIENT_REQUEST_TIMEOUT_MS;
      try {
        return await extra.sendRequest({ method, params: params as Record<string, unknown> }, schema, { signal: extra.signal, timeout });
      } catch (error) {
        if (extra.signal.aborted) throw new CancelledError();
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
          throw ToolError.timeout(`The client did not answer the ${what} request within ${timeout < 10_000 ? (timeout / 1000).toFixed(1) : Math.round(timeout / 1000)} s.`);
        }
        const reason = error instanceof McpError ? error.message.replace(/^MCP error -?\d+: /, '') : 'no reason given';
        throw new ToolError(`The client refused the ${what} request: ${reason}`, 'failed');
      }
    };
    return {
      sampling: clientCaps.sampling !== undefined,
      elicitation: clientCaps.elicitation !== undefined,
      roots: clientCaps.roots !== undefined,
      createMessage: async (request: SamplingRequest, options = {}): Promise<SamplingResult> => {
        if (!clientCaps.sampling) throw ToolError.unavailable('The client does not support sampling.');
        const result = await ask('sampling', 'sampling/createMessage', request, CreateMessageResultSchema, options.timeoutMs);
        const content = result.content as SamplingResult['content'];
        return {
          role: result.role,
          content,
          model: result.model,
          ...(result.stopReason ? { stopReason: result.stopReason } : {}),
          text: content.type === 'text' ? content.text : '',
        };
      },
      elicit: async (request: ElicitRequest, options = {}): Promise<ElicitResult> => {
        if (!clientCaps.elicitation) throw ToolError.unavailable('The client does not support elicitation.');
        const result = await ask('elicitation', 'elicitation/create', request, ElicitResultSchema, options.timeoutMs);
        return { action: result.action, ...(result.content ? { content: result.content as ElicitResult['content'] } : {}) };
      },
    };
  }

  /** resources/read as a function: a fixed resource, else the first matching template. */
  private async readResource(uri: string, context: RequestContext): Promise<ResourceContents[]> {
    const resource = this.resources.get(uri);
    let contents: ResourceContents | ResourceContents[];
    if (resource) contents = await resource.read(context);
    else {
      const found = this.matchTemplate(uri);
      if (!found) throw ProtocolError.resourceNotFound(uri);
      contents = await found.template.def.read(uri, found.variables, context);
    }
    return Array.isArray(contents) ? contents : [contents];
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

    handle(sdk, ListToolsRequestSchema, async () => ({
      tools: this.exposedTools().map((tool) => ({
        name: tool.name,
        title: tool.annotations.title,
        description: tool.description,
        inputSchema: toJsonSchema(tool.input, 'input') as { type: 'object' },
        ...(tool.output ? { outputSchema: toJsonSchema(tool.output, 'output') as { type: 'object' } } : {}),
        annotations: { ...tool.annotations },
      })),
    }));
    handle(sdk, CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
      const tool = this.registered.get(request.params.name);
      // A tool this session does not expose is unknown to it, exactly as if it did not exist.
      if (!tool || !this.gate.allows(tool)) throw ProtocolError.invalidParams(`Unknown tool: ${request.params.name}`);
      return runTool(tool, request.params.arguments, ctx(extra));
    });

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
        const typed = ref.type === 'ref/prompt' ? argument.value : decodeVariable(argument.value);
        values = await completer(typed, context, ctx(extra));
      } catch (error) {
        // Completion is the client's typing aid, asked at every keystroke: a failure shows no
        // suggestions rather than an error. The reason is logged (to the client too, at warning).
        values = [];
        if (error instanceof ToolError) this.log.warning(`Completing ${argument.name} failed: ${error.message}`);
        else {
          const id = newErrorId();
          this.log.private('error', `completion failed unexpectedly (error id ${id}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
          this.log.warning(`Completing ${argument.name} failed unexpectedly (error id ${id}). The server log has the detail.`);
        }
      }
      return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
    });
  }

  private installResourceHandlers(sdk: Server, ctx: (extra: unknown) => RequestContext): void {
    handle(sdk, ListResourcesRequestSchema, async (request, extra) => {
      const cursor = request.params?.cursor;
      const state = cursor ? await this.guardResourceCall(async () => decodeCursor('resources', cursor, RESOURCES_CURSOR)) : { phase: 0 };
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
      const contents = await this.guardResourceCall(() => this.readResource(request.params.uri, ctx(extra)));
      return { contents };
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
        changes.subscribe(this.sessionId, uri, async (change) => {
          if (resource) return resource.subscribe?.(context, change);
          return found!.template.def.subscribe?.(uri, found!.variables, context, change);
        }),
      );
      return {};
    });
    handle(sdk, UnsubscribeRequestSchema, async (request) => {
      await changes.unsubscribe(this.sessionId, request.params.uri);
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
        for (const [key, value] of Object.entries(match)) variables[key] = decodeVariable(value);
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
      if (error instanceof ToolError) throw ProtocolError.fromToolError(error, this.secrets.redact(error.message));
      if (error instanceof CancelledError) throw ProtocolError.fromToolError(new ToolError(error.message, 'cancelled'));
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
/** The permissive routing schema of each request schema: built once per process, not per session. */
const routingSchemas = new WeakMap<z.ZodObject, z.ZodObject<{ method: z.ZodLiteral<string>; params: z.ZodOptional<z.ZodUnknown> }>>();

function handle<S extends z.ZodObject<{ method: z.ZodLiteral<string> }>, R>(
  sdk: Server,
  schema: S,
  fn: (request: z.output<S>, extra: unknown) => Promise<R>,
): void {
  let loose = routingSchemas.get(schema);
  if (!loose) {
    loose = z.looseObject({ method: schema.shape.method, params: z.unknown().optional() });
    routingSchemas.set(schema, loose);
  }
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

/** Percent-decodes a template variable; text that is not valid percent-encoding stays as written. */
function decodeVariable(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function authFrom(info: NonNullable<RequestExtra['authInfo']>): AuthInfo {
  return {
    token: info.token,
    ...(info.clientId ? { clientId: info.clientId } : {}),
    ...(info.scopes ? { scopes: info.scopes } : {}),
    ...(info.expiresAt !== undefined ? { expiresAt: info.expiresAt } : {}),
    ...(info.extra ? { extra: info.extra } : {}),
  };
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
