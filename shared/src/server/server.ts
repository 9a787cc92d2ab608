import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  CLIENT_CAPABILITIES_META_KEY,
  ProtocolError as SdkProtocolError,
  Server,
  inputRequired,
  type ClientCapabilities,
  type ServerCapabilities,
  type ServerContext,
  type ServerEvent,
  type Transport,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import {
  authFrom,
  type ChangeAnnouncer,
  type ClientFeatures,
  type EmbeddedResourceContent,
  type RequestContext,
  type SessionInfo,
} from './context.js';
import { ToolError, UsageError } from '../core/errors.js';
import { legacyClientFeatures, modernClientFeatures } from './client-requests.js';
import { InputLedger, InputNeeded, processRequestStateSeal, type RequestStateSeal } from './input-requests.js';
import { LOG_LEVELS, Logger, isLogLevel, newErrorId, type LogLevel } from '../core/logging.js';
import { LIST_ROOTS_RESULT, decodeVariable, installHandlers, notFollowed, type AnyTool, type HandlerHost, type RegisteredTemplate } from './handlers.js';
import { PathGuard, noRootsMessage } from '../files/paths.js';
import { CancelledError, ProgressReporter } from '../core/progress.js';
import { ProtocolError } from './protocol-errors.js';
import type {
  PromptDefinition,
  ResourceContents,
  ResourceDefinition,
  ResourceTemplateDefinition,
  TemplateVariables,
} from './resources.js';
import { RootsManager, type RootsSnapshot } from '../files/roots.js';
import { SecretScope, processSecrets } from '../core/secrets.js';
import type { ChangeHub, ChangeSetup } from '../changes/subscriptions.js';
import { TemplateMatcher } from './uri-templates.js';
import { TracedServer } from '../telemetry/traced-server.js';
import type { AnyToolDefinition, ToolDefinition } from './tools.js';
import { ToolGate, dynamicToolsetTools, type ToolSelection, type ToolsetInfo } from './toolsets.js';
import { TASKS_EXTENSION, processTasks, type TaskRuntime } from '../tasks/runtime.js';
import { TaskFollower } from '../tasks/notifications.js';
import { principalOf } from '../tasks/handlers.js';

/**
 * Which protocol era an SDK instance serves: `legacy` is 2025-11-25 and earlier (sessions,
 * initialize, server-to-client requests), `modern` is 2026-07-28 (every request stands alone).
 */
export type ProtocolEra = 'legacy' | 'modern';

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
  /**
   * Seals the state of 2026-07-28 multi-round-trip requests (sampling, roots, elicitation); one per
   * process (or one key per deployment), shared by every instance. A per-instance random key otherwise.
   */
  requestState?: RequestStateSeal;
  /** The process's task runtime (tasks extension, 2026-07-28); the one configureTasks set otherwise. */
  tasks?: TaskRuntime;
}




export type ListKind = 'tools' | 'resources' | 'prompts';

/**
 * What a 2025-era client has asked of its session beyond each request: the resources it subscribed
 * to, its log level, the toolsets it switched on. Replicas keep it in Redis, so that the session
 * continues on another replica as it was.
 */
export interface SessionState {
  subscriptions: string[];
  logLevel: LogLevel;
  toolsets: string[];
}

/**
 * The SDK builds an Ajv instance per Server (about 20 KiB of heap each) unless given one; every
 * session shares this one, which is what makes an idle HTTP session cheap.
 */
let sharedValidator: AjvJsonSchemaValidator | undefined;

/**
 * Cache hints for the 2026-07-28 cacheable results, chosen per list: a tool list can change with the
 * request's headers and credentials (toolset selection, a GitHub token's scopes), and resource lists
 * and contents follow files, tables and repositories that change under us, so nothing is `public`
 * and only lists fixed for the life of the process get a TTL.
 */
const CACHE_HINTS = {
  'server/discover': { ttlMs: 60_000, cacheScope: 'private' },
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'prompts/list': { ttlMs: 300_000, cacheScope: 'private' },
  'resources/templates/list': { ttlMs: 300_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 0, cacheScope: 'private' },
  'resources/read': { ttlMs: 0, cacheScope: 'private' },
} as const;

/** The tools dynamic mode adds (see dynamicToolsetTools). */
const DYNAMIC_META_TOOLS = ['list_available_toolsets', 'get_toolset_tools', 'enable_toolset'];

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
  /** The URIs this 2025 session subscribed to (resources/subscribe), for its session state. */
  private readonly subscribed = new Set<string>();
  /** The URIs this server's 2026-07-28 listen streams follow, each with the number of streams following it. */
  private readonly listened = new Map<string, number>();
  private stateListener: ((state: SessionState) => void) | undefined;
  private guard: { key: string; guard: PathGuard } | undefined;
  private sdk: Server | undefined;
  private era: ProtocolEra = 'legacy';
  private readonly seal: RequestStateSeal;
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
    this.seal = options.requestState ?? processRequestStateSeal();
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
    this.stateChanged();
    return added;
  }

  /** What this session carries to another replica (see {@link SessionState}). */
  sessionState(): SessionState {
    return { subscriptions: [...this.subscribed], logLevel: this.clientLogLevel, toolsets: this.gate.enabledToolsets() };
  }

  /** Runs after each change of {@link sessionState} the client makes (not after a restore). */
  onSessionStateChange(handler: (state: SessionState) => void): this {
    this.stateListener = handler;
    return this;
  }

  /**
   * Makes this session what another replica's copy of it says: its log level and toolsets, and the
   * subscriptions it follows (new ones followed, dropped ones released). Says nothing back.
   */
  async restoreSessionState(state: SessionState): Promise<void> {
    const listener = this.stateListener;
    this.stateListener = undefined;
    try {
      if (isLogLevel(state.logLevel)) this.clientLogLevel = state.logLevel;
      for (const name of state.toolsets) {
        if (this.gate.toolsets.some((t) => t.name === name) && !this.gate.isEnabled(name)) this.enableToolset(name);
      }
      const wanted = new Set(state.subscriptions);
      for (const uri of [...this.subscribed]) {
        if (wanted.has(uri)) continue;
        this.subscribed.delete(uri);
        await this.options.changes?.unsubscribe(this.sessionId, uri);
      }
      const added = [...wanted].filter((uri) => !this.subscribed.has(uri));
      for (const uri of await this.follow(added)) this.subscribed.add(uri);
    } finally {
      this.stateListener = listener;
    }
  }

  private stateChanged(): void {
    this.stateListener?.(this.sessionState());
  }

  /**
   * Whether calling `name` writes: a tool this server registers, lets through its selection
   * (--read-only, --toolsets stay a ceiling) and does not mark read-only. OAuth mode asks before a
   * call with a token that may only read.
   */
  toolWrites(name: string): boolean {
    const tool = this.registered.get(name);
    return tool !== undefined && this.gate.allows(tool) && !tool.annotations.readOnlyHint;
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

  /**
   * Connects this session's server to a transport: a 2025-era session (in memory, sessionful HTTP,
   * HTTP+SSE). The serving entries (stdio, HTTP) call {@link instance} instead and let the SDK pick
   * the era.
   */
  async connect(transport: Transport): Promise<void> {
    const sdk = this.instance('legacy');
    await sdk.connect(transport);
  }

  /**
   * The SDK server this session serves, for one era: `legacy` keeps the session model (a log level
   * set by the client, roots asked of it, unsolicited notifications); `modern` answers each request
   * on its own (log level, capabilities and roots come with the request). One per SuiteServer.
   */
  instance(era: ProtocolEra): Server {
    if (this.sdk) throw new Error('A SuiteServer serves one session; build a new one per connection.');
    this.checkSelection();
    this.era = era;
    // Toolsets enabled by a tool call do not outlive a 2026-07-28 request: that era gets the
    // configured selection instead, without the meta-tools.
    if (era === 'modern' && this.gate.endDynamicMode()) for (const name of DYNAMIC_META_TOOLS) this.registered.delete(name);
    const sdk = new TracedServer(
      { name: this.options.name, version: this.options.version, ...(this.options.title ? { title: this.options.title } : {}) },
      {
        capabilities: this.capabilities(),
        jsonSchemaValidator: (sharedValidator ??= new AjvJsonSchemaValidator()),
        cacheHints: CACHE_HINTS,
        requestState: { verify: this.seal.verify },
        // Handlers ask 2025 clients directly (the push style); the SDK's shim is not needed.
        inputRequired: { legacyShim: false },
        ...(this.options.instructions ? { instructions: this.options.instructions } : {}),
      },
      this.session.transport,
    );
    this.sdk = sdk;
    installHandlers(sdk, this.handlerHost());
    if (era === 'legacy') {
      this.log.attach((level, logger, data) => {
        if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(this.clientLogLevel)) return;
        void sdk.sendLoggingMessage({ level, logger, data }).catch(() => undefined);
      });
    }
    this.options.changes?.addSession(this.sessionId, {
      resourceUpdated: (uri) => void sdk.sendResourceUpdated({ uri }).catch(() => undefined),
      listChanged: () => this.listChanged('resources'),
    });
    sdk.onclose = () => void this.close();
    this.markConnected();
    return sdk;
  }

  /**
   * Starts following the resources a 2026-07-28 `subscriptions/listen` stream names (the SDK
   * answers the stream; the change sources are ours). Resolves once every source is armed (a
   * change after that is delivered), with the URIs followed: unknown URIs, and those the
   * resource's own checks refuse (outside the roots, no such table), are left out. Several streams
   * may follow one URI; it is followed until the last of them lets go.
   */
  async listen(uris: readonly string[]): Promise<string[]> {
    const followed = await this.follow(uris);
    for (const uri of followed) this.listened.set(uri, (this.listened.get(uri) ?? 0) + 1);
    return followed;
  }

  /** Subscribes this server's session to what it can follow of `uris`; returns those, once armed. */
  private async follow(uris: readonly string[]): Promise<string[]> {
    const changes = this.options.changes;
    if (!changes || this.closed) return [];
    const followed: string[] = [];
    for (const uri of new Set(uris)) {
      const resource = this.resources.get(uri);
      const found = resource ? undefined : this.matchTemplate(uri);
      if (!resource && !found) {
        this.log.warning('a listen stream names a resource this server does not have', { uri });
        continue;
      }
      if (!(resource ?? found!.template.def).subscribe) {
        this.log.warning(notFollowed(uri));
        continue;
      }
      const context = this.backgroundContext();
      try {
        await changes.subscribe(this.sessionId, uri, async (change) => {
          if (resource) return resource.subscribe?.(context, change);
          return found!.template.def.subscribe?.(uri, found!.variables, context, change);
        });
        followed.push(uri);
      } catch (error) {
        this.log.warning(`cannot follow ${uri}: ${error instanceof ToolError ? error.message : 'unexpected error'}`);
      }
    }
    return followed;
  }

  /**
   * Makes this server a 2026-07-28 listen stream's follower over HTTP: never connected, it holds
   * the stream's subscriptions in the change hub and hands every change to `publish` (the listen
   * bus). Closed when the stream closes.
   */
  followInto(publish: (event: ServerEvent) => void): void {
    if (this.sdk) throw new Error('A connected server cannot follow a listen stream.');
    this.era = 'modern';
    this.options.changes?.addSession(this.sessionId, {
      resourceUpdated: (uri) => publish({ kind: 'resource_updated', uri }),
      listChanged: () => publish({ kind: 'resources_list_changed' }),
    });
    this.markConnected();
  }

  /**
   * A 2026-07-28 listen stream's follower of tasks (`notifications.taskIds`): the tasks of the
   * principal this server's session is (the credentials over HTTP, the connection over stdio),
   * as tasks/get sees them; `send` gets each status notification's params.
   */
  followTasks(send: (params: Record<string, unknown>) => void): TaskFollower {
    const principal = principalOf({ sessionId: this.sessionId, transport: this.session.transport }, this.session.auth);
    return new TaskFollower(this.options.tasks ?? processTasks(), principal, send);
  }

  /** Stops following what {@link listen} followed. */
  async unlisten(uris: readonly string[]): Promise<void> {
    for (const uri of uris) {
      const held = (this.listened.get(uri) ?? 0) - 1;
      if (held > 0) {
        this.listened.set(uri, held);
        continue;
      }
      this.listened.delete(uri);
      await this.options.changes?.unsubscribe(this.sessionId, uri);
    }
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
    // In the 2026-07-28 era the tool and prompt lists never change (no dynamic toolsets, no tools
    // registered late into a request), so no listen stream is promised their list_changed.
    const lists = this.era === 'legacy';
    const caps: ServerCapabilities = { logging: {}, tools: { listChanged: lists } };
    if (this.resources.size > 0 || this.templates.length > 0) {
      caps.resources = { listChanged: true, subscribe: this.options.changes !== undefined };
    }
    if (this.prompts.size > 0) caps.prompts = { listChanged: lists };
    // The tasks extension is a 2026-07-28 one; offered when some tool may become a task.
    if (!lists && this.exposedTools().some((t) => t.longRunning)) (caps as { extensions?: Record<string, object> }).extensions = { [TASKS_EXTENSION]: {} };
    const completes = this.templates.some((t) => t.def.complete) || [...this.prompts.values()].some((p) => p.complete);
    if (completes) caps.completions = {};
    return caps;
  }

  /**
   * The handler's context for one request. In the 2026-07-28 era the request carries what a session
   * held: the client's capabilities, its log level, and (through input_required) its roots and
   * answers to sampling and elicitation.
   */
  private context(sdkCtx: ServerContext, ledger?: InputLedger): RequestContext {
    if (this.era === 'modern') return this.modernContext(sdkCtx, ledger);
    const roots = async (): Promise<RootsSnapshot> =>
      this.rootsManager ? this.rootsManager.snapshot() : { directories: [], clientRoots: undefined, source: 'command-line' };
    return this.baseContext(sdkCtx, this.log, roots, legacyClientFeatures(sdkCtx, this.sdk?.getClientCapabilities() ?? {}));
  }

  private baseContext(
    sdkCtx: ServerContext,
    log: Logger,
    roots: () => Promise<RootsSnapshot>,
    client: ClientFeatures,
  ): RequestContext {
    const authInfo = sdkCtx.http?.authInfo;
    const context: RequestContext = {
      signal: sdkCtx.mcpReq.signal,
      progress: new ProgressReporter(sdkCtx.mcpReq._meta?.progressToken, (n) => sdkCtx.mcpReq.notify(n)),
      log,
      sessionId: this.sessionId,
      auth: authInfo ? authFrom(authInfo) : this.session.auth,
      secrets: this.secrets,
      roots,
      paths: async () => {
        const snapshot = await roots();
        if (snapshot.directories.length === 0) throw ToolError.accessDenied(noRootsMessage(snapshot.source));
        // Keyed by the directories themselves: in the 2026-07-28 era each request brings its own roots.
        const key = snapshot.directories.join('\0');
        if (this.guard?.key !== key) {
          this.guard = { key, guard: new PathGuard(snapshot.directories, this.options.roots?.aliases ?? []) };
        }
        return this.guard.guard;
      },
      client,
      embedResource: async (uri) => {
        const contents = await this.readResource(uri, context);
        return contents.map((resource): EmbeddedResourceContent => ({ type: 'resource', resource }));
      },
      changes: this.announcer(),
    };
    return context;
  }

  /** A 2026-07-28 request's context: no session, so everything comes from the request. */
  private modernContext(sdkCtx: ServerContext, ledger: InputLedger | undefined): RequestContext {
    const caps = (sdkCtx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
    const log = this.log.withSink((level, logger, data) => void sdkCtx.mcpReq.log(level, data, logger).catch(() => undefined));
    let snapshot: Promise<RootsSnapshot> | undefined;
    const roots = (): Promise<RootsSnapshot> => (snapshot ??= this.modernRoots(caps, ledger, log));
    const client = modernClientFeatures(caps, ledger);
    return this.baseContext(sdkCtx, log, roots, client);
  }

  /**
   * A 2026-07-28 request's roots: asked of the client with input_required when it declares roots,
   * narrowed against the command-line directories as in the 2025 era; the command-line directories
   * otherwise.
   */
  private async modernRoots(caps: ClientCapabilities | undefined, ledger: InputLedger | undefined, log: Logger): Promise<RootsSnapshot> {
    const cli = this.options.roots?.directories ?? [];
    if (!this.options.roots || !caps?.roots || !ledger) return { directories: [...cli], clientRoots: undefined, source: cli.length > 0 ? 'command-line' : 'client' };
    const answer = ledger.answer(ledger.nextKey('roots'), inputRequired.listRoots());
    const parsed = LIST_ROOTS_RESULT.safeParse(answer);
    // The answer is in hand: the wait is only for checking its directories on disk.
    const manager = new RootsManager(cli, log.child('roots'), 30_000);
    manager.enableClientRoots(async () => (parsed.success ? parsed.data.roots : []));
    if (!parsed.success) log.warning('the client answered the roots request with something other than a list of roots');
    return manager.snapshot();
  }

  /** The context of work not tied to one request (a subscription's change source). */
  private backgroundContext(): RequestContext {
    const signal = new AbortController().signal;
    const sdkCtx = { mcpReq: { signal, _meta: undefined, notify: async () => undefined } } as unknown as ServerContext;
    const cli = this.options.roots?.directories ?? [];
    const roots = async (): Promise<RootsSnapshot> =>
      this.rootsManager && this.era === 'legacy' ? this.rootsManager.snapshot() : { directories: [...cli], clientRoots: undefined, source: 'command-line' };
    const none = async (): Promise<never> => {
      throw ToolError.unavailable('No client to ask outside a request.');
    };
    return this.baseContext(sdkCtx, this.log, roots, { sampling: false, elicitation: false, elicitationUrl: false, roots: false, apps: false, createMessage: none, elicit: none, elicitUrl: none });
  }

  /** ctx.changes: the hub's publishing, bound to this session; one object per session. */
  private announcer(): ChangeAnnouncer {
    if (this.changeAnnouncer) return this.changeAnnouncer;
    const hub = this.options.changes;
    this.changeAnnouncer = hub
      ? {
          resourceUpdated: (uri) => hub.announce(uri),
          resourceListChanged: () => hub.announceListChanged(),
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

  /** What the request handlers see of this server (handlers.ts). */
  private handlerHost(): HandlerHost {
    return {
      era: this.era,
      log: this.log,
      sessionId: this.sessionId,
      seal: this.seal,
      changes: this.options.changes,
      rootsManager: this.rootsManager,
      resources: this.resources,
      templates: this.templates,
      prompts: this.prompts,
      pageSize: this.options.pageSize ?? 500,
      completes: this.capabilities().completions !== undefined,
      setClientLogLevel: (level) => {
        this.clientLogLevel = level;
        this.stateChanged();
      },
      subscribed: (uri, on) => {
        if (on) this.subscribed.add(uri);
        else this.subscribed.delete(uri);
        this.stateChanged();
      },
      exposedTools: () => this.exposedTools(),
      exposedTool: (name) => {
        const tool = this.registered.get(name);
        return tool && this.gate.allows(tool) ? tool : undefined;
      },
      context: (sdkCtx, ledger) => this.context(sdkCtx, ledger),
      readResource: (uri, context) => this.readResource(uri, context),
      matchTemplate: (uri) => this.matchTemplate(uri),
      guardResourceCall: (fn) => this.guardResourceCall(fn),
      tasks: {
        runtime: this.options.tasks ?? processTasks(),
        sessionId: this.sessionId,
        transport: this.session.transport,
        seal: this.seal,
        exposedTool: (name) => {
          const tool = this.registered.get(name);
          return tool && this.gate.allows(tool) ? tool : undefined;
        },
        context: (sdkCtx, ledger) => this.context(sdkCtx, ledger),
      },
    };
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
      if (error instanceof SdkProtocolError || error instanceof InputNeeded) throw error;
      if (error instanceof ToolError) throw ProtocolError.fromToolError(error, this.secrets.redact(error.message));
      if (error instanceof CancelledError) throw ProtocolError.fromToolError(new ToolError(error.message, 'cancelled'));
      const id = newErrorId();
      this.log.private('error', `request failed unexpectedly (error id ${id}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      throw ProtocolError.internal(`The request failed unexpectedly (error id ${id}). The server log has the detail.`);
    }
  }
}




export type { ResourceContents };
