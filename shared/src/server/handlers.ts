import { z } from 'zod';
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import type { ChangeHub } from '../changes/subscriptions.js';
import type { Logger, LogLevel } from '../core/logging.js';
import { newErrorId } from '../core/logging.js';
import { ToolError } from '../core/errors.js';
import type { RootsManager } from '../files/roots.js';
import type { RequestContext } from './context.js';
import { InputLedger, InputNeeded, type RequestStateSeal } from './input-requests.js';
import { decodeCursor, encodeCursor } from './pagination.js';
import { ProtocolError } from './protocol-errors.js';
import { oauthGrantOf } from '../auth/principal.js';
import type { Completer, PromptDefinition, ResourceContents, ResourceDefinition, ResourceListing, ResourceTemplateDefinition, TemplateVariables } from './resources.js';
import { runTool, toJsonSchema, type CallToolResult, type ToolDefinition } from './tools.js';
import type { TemplateMatcher } from './uri-templates.js';
import { APP_MIME_TYPE, isAppOnly, toolAppMeta } from '../apps/meta.js';
import { callWithTasks, installTaskHandlers, type TaskHost } from '../tasks/handlers.js';

/**
 * The MCP request handlers of one SDK instance, over what a SuiteServer registered. The era decides
 * three things here: input schemas name their dialect in 2026-07-28; tools/call, resources/read and
 * prompts/get run with the request's input ledger there (a need of the client's answers becomes an
 * input_required result); everything else answers the same in both eras.
 */

export type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject | undefined>;

export interface RegisteredTemplate {
  def: ResourceTemplateDefinition;
  matcher: TemplateMatcher;
}

/** What the handlers need of the SuiteServer they serve. */
export interface HandlerHost {
  readonly era: 'legacy' | 'modern';
  readonly log: Logger;
  readonly sessionId: string;
  readonly seal: RequestStateSeal;
  readonly changes: ChangeHub | undefined;
  readonly rootsManager: RootsManager | undefined;
  readonly resources: ReadonlyMap<string, ResourceDefinition>;
  readonly templates: readonly RegisteredTemplate[];
  readonly prompts: ReadonlyMap<string, PromptDefinition>;
  readonly pageSize: number;
  readonly completes: boolean;
  setClientLogLevel(level: LogLevel): void;
  /** A resources/subscribe (true) or unsubscribe (false) took effect. */
  subscribed(uri: string, on: boolean): void;
  exposedTools(): AnyTool[];
  /** The tool of that name if this session exposes it. */
  exposedTool(name: string): AnyTool | undefined;
  context(sdkCtx: ServerContext, ledger?: InputLedger): RequestContext;
  readResource(uri: string, context: RequestContext): Promise<ResourceContents[]>;
  matchTemplate(uri: string): { template: RegisteredTemplate; variables: TemplateVariables } | undefined;
  guardResourceCall<T>(fn: () => Promise<T>): Promise<T>;
  /** The tasks extension (2026-07-28 era). */
  readonly tasks: TaskHost;
}

/** The state a resources/list cursor carries: which template (phase) and that template's own cursor. */
const RESOURCES_CURSOR = z.object({ phase: z.number().int().min(0), inner: z.string().optional() });

export const LIST_ROOTS_RESULT = z.looseObject({
  roots: z.array(z.looseObject({ uri: z.string().min(1), name: z.string().optional() })),
});

/** The JSON Schema dialect of 2026-07-28 input schemas (zod writes 2020-12). */
const JSON_SCHEMA_2020_12 = 'https://json-schema.org/draft/2020-12/schema';

export function installHandlers(sdk: Server, host: HandlerHost): void {
  sdk.setRequestHandler('logging/setLevel', async (request) => {
    host.setClientLogLevel(request.params.level);
    return {};
  });

  sdk.oninitialized = () => {
    if (!host.rootsManager) return;
    if (sdk.getClientCapabilities()?.roots) {
      // The SDK's own schema only admits file: roots; servers such as a git server want the others too.
      host.rootsManager.enableClientRoots(async () => LIST_ROOTS_RESULT.parse(await sdk.request({ method: 'roots/list' }, LIST_ROOTS_RESULT)).roots);
    } else {
      host.rootsManager.disableClientRoots();
    }
  };
  if (host.rootsManager) {
    const manager = host.rootsManager;
    sdk.setNotificationHandler('notifications/roots/list_changed', async () => {
      await manager.refresh();
    });
  }

  // App-only tools exist for clients that render apps, decided per request (2026-07-28 requests
  // carry their capabilities); a text-only client lists and calls exactly what it did before.
  const forClient = (tool: AnyTool, sdkCtx: ServerContext): boolean => !isAppOnly(tool.app) || host.context(sdkCtx).client.apps;
  sdk.setRequestHandler('tools/list', async (_request, sdkCtx) => ({
    tools: host.exposedTools().filter((tool) => forClient(tool, sdkCtx)).map((tool) => {
      const inputSchema = toJsonSchema(tool.input, 'input');
      return {
        name: tool.name,
        title: tool.annotations.title,
        description: tool.description,
        inputSchema: (host.era === 'modern' ? { $schema: JSON_SCHEMA_2020_12, ...inputSchema } : inputSchema) as { type: 'object' },
        ...(tool.output ? { outputSchema: toJsonSchema(tool.output, 'output') as { type: 'object' } } : {}),
        annotations: { ...tool.annotations },
        ...(tool.app || tool.meta ? { _meta: { ...tool.meta, ...(tool.app ? toolAppMeta(tool.app) : {}) } } : {}),
      };
    }),
  }));
  sdk.setRequestHandler('tools/call', async (request, sdkCtx) => {
    const found = host.exposedTool(request.params.name);
    const tool = found && forClient(found, sdkCtx) ? found : undefined;
    // A tool this session does not expose is unknown to it, exactly as if it did not exist.
    if (!tool) throw ProtocolError.invalidParams(`Unknown tool: ${request.params.name}`);
    // OAuth mode refuses these over HTTP with 403 before they get here; this holds on every path.
    if (!tool.annotations.readOnlyHint && oauthGrantOf(sdkCtx.http?.authInfo)?.canWrite === false) {
      return { content: [{ type: 'text', text: `${tool.name} writes, and the access token grants read access only: authorize again with the server's write scope.` }], isError: true };
    }
    if (host.era === 'legacy') return runTool(tool, request.params.arguments, host.context(sdkCtx));
    const tasked = await callWithTasks(host.tasks, tool, request.params, sdkCtx);
    if (tasked) return tasked as CallToolResult;
    const ledger = InputLedger.open(sdkCtx, { tool: tool.name, arguments: request.params.arguments ?? {} });
    try {
      return await runTool(tool, request.params.arguments, host.context(sdkCtx, ledger));
    } catch (error) {
      if (error instanceof InputNeeded) return ledger.inputRequired(error, host.seal, sdkCtx);
      throw error;
    }
  });

  if (host.era === 'modern' && host.exposedTools().some((tool) => tool.longRunning)) installTaskHandlers(sdk, host.tasks);
  if (host.resources.size > 0 || host.templates.length > 0) installResourceHandlers(sdk, host);
  if (host.prompts.size > 0) installPromptHandlers(sdk, host);

  if (host.completes) installCompletionHandler(sdk, host);
}

function installCompletionHandler(sdk: Server, host: HandlerHost): void {
  sdk.setRequestHandler('completion/complete', async (request, sdkCtx) => {
    const { ref, argument } = request.params;
    const context = { arguments: request.params.context?.arguments ?? {} };
    let completer: Completer | undefined;
    if (ref.type === 'ref/prompt') {
      const prompt = host.prompts.get(ref.name);
      if (!prompt) throw ProtocolError.invalidParams(`Unknown prompt: ${ref.name}`);
      completer = (prompt.complete as Record<string, Completer> | undefined)?.[argument.name];
    } else {
      const template = host.templates.find((t) => t.def.uriTemplate === ref.uri);
      if (!template) throw ProtocolError.invalidParams(`Unknown resource template: ${ref.uri}`);
      completer = template.def.complete?.[argument.name];
    }
    if (!completer) return { completion: { values: [], hasMore: false } };
    let values: string[];
    try {
      const typed = ref.type === 'ref/prompt' ? argument.value : decodeVariable(argument.value);
      values = await completer(typed, context, host.context(sdkCtx));
    } catch (error) {
      // Completion is the client's typing aid, asked at every keystroke: a failure shows no
      // suggestions rather than an error. The reason is logged (to the client too, at warning).
      values = [];
      if (error instanceof ToolError) host.log.warning(`Completing ${argument.name} failed: ${error.message}`);
      else if (error instanceof InputNeeded) host.log.debug(`Completing ${argument.name} needs the client's roots, which completion cannot ask for`);
      else {
        const id = newErrorId();
        host.log.private('error', `completion failed unexpectedly (error id ${id}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
        host.log.warning(`Completing ${argument.name} failed unexpectedly (error id ${id}). The server log has the detail.`);
      }
    }
    return { completion: { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 } };
  });
}

function installResourceHandlers(sdk: Server, host: HandlerHost): void {
  sdk.setRequestHandler('resources/list', async (request, sdkCtx) => {
    const cursor = request.params?.cursor;
    const state = cursor ? await host.guardResourceCall(async () => decodeCursor('resources', cursor, RESOURCES_CURSOR)) : { phase: 0 };
    const listable = host.templates.filter((t) => t.def.list);
    const resources: ResourceListing[] = [];
    let phase = state.phase;
    let inner = state.inner;
    const context = host.context(sdkCtx);
    if (phase === 0) {
      // An app's UI resource is listed for clients that render apps (a text-only client's list is
      // unchanged); reading it works for anyone, as hosts read it by the URI a tool names.
      for (const r of host.resources.values()) if (r.mimeType !== APP_MIME_TYPE || context.client.apps) resources.push(listingOf(r));
      phase = 1;
      inner = undefined;
    }
    // Fill one page from the templates, moving to the next template when one runs out.
    while (phase - 1 < listable.length && resources.length < (host.pageSize ?? 500)) {
      const template = listable[phase - 1]!;
      const page = await host.guardResourceCall(() => template.def.list!(inner, context));
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

  sdk.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: host.templates.map(({ def }) => ({
      uriTemplate: def.uriTemplate,
      name: def.name,
      ...(def.title ? { title: def.title } : {}),
      ...(def.description ? { description: def.description } : {}),
      ...(def.mimeType ? { mimeType: def.mimeType } : {}),
    })),
  }));

  sdk.setRequestHandler('resources/read', async (request, sdkCtx) => {
    if (host.era === 'legacy') {
      const contents = await host.guardResourceCall(() => host.readResource(request.params.uri, host.context(sdkCtx)));
      return { contents };
    }
    const ledger = InputLedger.open(sdkCtx, { uri: request.params.uri });
    try {
      const contents = await host.guardResourceCall(() => host.readResource(request.params.uri, host.context(sdkCtx, ledger)));
      return { contents };
    } catch (error) {
      if (error instanceof InputNeeded) return ledger.inputRequired(error, host.seal, sdkCtx);
      throw error;
    }
  });

  const changes = host.changes;
  if (!changes) return;
  sdk.setRequestHandler('resources/subscribe', async (request, sdkCtx) => {
    const { uri } = request.params;
    const resource = host.resources.get(uri);
    const found = resource ? undefined : host.matchTemplate(uri);
    if (!resource && !found) throw ProtocolError.resourceNotFound(uri);
    // A resource that names nothing to follow would be "subscribed" and never heard of again.
    if (!(resource ?? found!.template.def).subscribe) throw ProtocolError.invalidParams(notFollowed(uri));
    const context = host.context(sdkCtx);
    await host.guardResourceCall(() =>
      changes.subscribe(host.sessionId, uri, async (change) => {
        if (resource) return resource.subscribe?.(context, change);
        return found!.template.def.subscribe?.(uri, found!.variables, context, change);
      }),
    );
    host.subscribed(uri, true);
    return {};
  });
  sdk.setRequestHandler('resources/unsubscribe', async (request) => {
    await changes.unsubscribe(host.sessionId, request.params.uri);
    host.subscribed(request.params.uri, false);
    return {};
  });
}

function installPromptHandlers(sdk: Server, host: HandlerHost): void {
  sdk.setRequestHandler('prompts/list', async () => ({
    prompts: [...host.prompts.values()].map((prompt) => ({
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
  sdk.setRequestHandler('prompts/get', async (request, sdkCtx) => {
    const prompt = host.prompts.get(request.params.name);
    if (!prompt) throw ProtocolError.invalidParams(`Unknown prompt: ${request.params.name}`);
    const parsed = prompt.args.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      throw ProtocolError.invalidParams(
        `Invalid arguments for prompt ${prompt.name}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(arguments)'}: ${i.message}`).join('; ')}`,
      );
    }
    if (host.era === 'legacy') return host.guardResourceCall(() => prompt.get(parsed.data, host.context(sdkCtx)));
    const ledger = InputLedger.open(sdkCtx, { prompt: prompt.name, arguments: request.params.arguments ?? {} });
    try {
      return await host.guardResourceCall(() => prompt.get(parsed.data, host.context(sdkCtx, ledger)));
    } catch (error) {
      if (error instanceof InputNeeded) return ledger.inputRequired(error, host.seal, sdkCtx);
      throw error;
    }
  });
}

/** Percent-decodes a template variable; text that is not valid percent-encoding stays as written. */
export function decodeVariable(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function listingOf(r: ResourceDefinition): ResourceListing {
  return {
    uri: r.uri,
    name: r.name,
    ...(r.title ? { title: r.title } : {}),
    ...(r.description ? { description: r.description } : {}),
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
    ...(r._meta ? { _meta: r._meta } : {}),
  };
}

/** Why a resource with no change source of its own cannot be subscribed to. */
export function notFollowed(uri: string): string {
  return `${uri} cannot be subscribed to: this server does not follow changes to it. Read it again when you need it.`;
}
