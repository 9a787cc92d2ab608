import { z } from 'zod';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError as McpError, type ClientCapabilities, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { RequestContext } from '../server/context.js';
import { InputLedger, InputNeeded, type RequestStateSeal } from '../server/input-requests.js';
import { runTool, type AnyToolDefinition } from '../server/tools.js';
import { bindingOf } from '../auth/principal.js';
import { MISSING_REQUIRED_CLIENT_CAPABILITY, TASKS_EXTENSION, TaskRequestError, type Attempt, type TaskRuntime } from './runtime.js';
import type { TaskRecord } from './store.js';

/**
 * The tasks extension on one 2026-07-28 SDK instance: tools/call of a long-running tool for a
 * client that declared the extension, and tasks/get, tasks/update, tasks/cancel. `tasks/result`
 * and `tasks/list` (the 2025 experimental tasks) are not methods of this era: the SDK answers them
 * "method not found".
 */
export interface TaskHost {
  readonly runtime: TaskRuntime;
  /** The session the instance serves: stdio and in-memory clients are told apart by it. */
  readonly sessionId: string;
  readonly transport: string;
  /** Seals the state of a 2026-07-28 input_required answer (a required-task tool's input rounds). */
  readonly seal: RequestStateSeal;
  exposedTool(name: string): AnyToolDefinition | undefined;
  context(sdkCtx: ServerContext, ledger?: InputLedger): RequestContext;
}

/** Whether this request's client declared the tasks extension (per request, in the 2026-07-28 envelope). */
export function declaresTasks(sdkCtx: ServerContext, params?: { _meta?: Record<string, unknown> }): boolean {
  const fromEnvelope = (sdkCtx.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  const fromMeta = params?._meta?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
  const declared = (caps: ClientCapabilities | undefined): boolean => {
    const extensions = (caps as { extensions?: Record<string, unknown> } | undefined)?.extensions;
    return typeof extensions === 'object' && extensions !== null && extensions[TASKS_EXTENSION] !== undefined;
  };
  return declared(fromEnvelope) || declared(fromMeta);
}

/**
 * Who may see a task: the OAuth principal or the bearer token's digest over HTTP; over stdio (one
 * client per process) the connection. Unauthenticated HTTP callers share one principal: the task
 * id, 122 random bits, is then what keeps a task to its creator.
 */
export function taskPrincipal(host: Pick<TaskHost, 'sessionId' | 'transport'>, sdkCtx: ServerContext): string {
  return principalOf(host, sdkCtx.http?.authInfo);
}

/** The same principal from the request's credentials (a listen stream's, before the SDK sees it). */
export function principalOf(host: Pick<TaskHost, 'sessionId' | 'transport'>, auth: { token: string; extra?: Record<string, unknown> } | undefined): string {
  const binding = bindingOf(auth);
  if (binding) return `auth:${binding.toString('base64url')}`;
  return host.transport === 'http' ? 'anonymous' : `session:${host.sessionId}`;
}

/** The SDK's error puts "MCP error <code>: " before its message; clients see the plain message. */
function rpcError(code: number, message: string, data?: unknown): McpError {
  const error = new McpError(code, message, data);
  Object.defineProperty(error, 'message', { value: message, enumerable: false, writable: true, configurable: true });
  return error;
}

export function missingTasksCapability(what: string): McpError {
  return rpcError(MISSING_REQUIRED_CLIENT_CAPABILITY, `${what} needs the ${TASKS_EXTENSION} extension: declare it in the client's capabilities.`, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

/**
 * One run of a tool inside a task: the task's signal, the answers so far, unexpected failures
 * thrown. `first` is the request's own ledger for the first run (answers of earlier input_required
 * rounds), and `asked` hears what that run needed.
 */
function attemptOf(host: TaskHost, tool: AnyToolDefinition, args: unknown, sdkCtx: ServerContext, first?: { ledger: InputLedger; asked: (needed: InputNeeded) => void }): Attempt {
  let initial = first;
  return async (signal, answers) => {
    const ledger = initial?.ledger ?? InputLedger.withAnswers(answers);
    const asked = initial?.asked;
    initial = undefined;
    const ctx: RequestContext = { ...host.context(sdkCtx, ledger), signal };
    try {
      return { result: await runTool(tool, args, ctx, { rethrowUnexpected: true }) };
    } catch (error) {
      if (!(error instanceof InputNeeded)) throw error;
      asked?.(error);
      return { inputRequests: ledger.pendingRequests() };
    }
  };
}

/**
 * tools/call of a long-running tool in the 2026-07-28 era: as a task when the client declared the
 * extension, else undefined (the caller runs it plainly). A tool that requires tasks (conformance
 * fixtures only) refuses a client without the extension.
 */
export async function callWithTasks(host: TaskHost, tool: AnyToolDefinition, params: { arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, sdkCtx: ServerContext): Promise<Record<string, unknown> | undefined> {
  if (!tool.longRunning) return undefined;
  if (!declaresTasks(sdkCtx, params)) {
    if (tool.longRunning === 'required') throw missingTasksCapability(`${tool.name}`);
    return undefined;
  }
  const required = tool.longRunning === 'required';
  // A tool that always runs as a task gathers what it asks first with input_required rounds (the
  // answers travel sealed in requestState), and becomes a task once it has them.
  let needed: InputNeeded | undefined;
  const ledger = required ? InputLedger.open(sdkCtx, { tool: tool.name, arguments: params.arguments ?? {} }) : undefined;
  try {
    return await host.runtime.call({
      principal: taskPrincipal(host, sdkCtx),
      tool: tool.name,
      arguments: params.arguments ?? {},
      required,
      requestSignal: sdkCtx.mcpReq.signal,
      attempt: attemptOf(host, tool, params.arguments, sdkCtx, ledger ? { ledger, asked: (error) => (needed = error) } : undefined),
      ...(ledger ? { inputFirst: async () => (needed ? ((await ledger.inputRequired(needed, host.seal, sdkCtx)) as unknown as Record<string, unknown>) : undefined) } : {}),
    });
  } catch (error) {
    throw asRpcError(error);
  }
}

const TASK_ID = z.string().min(1).max(200);
const GET_PARAMS = z.looseObject({ taskId: TASK_ID });
const UPDATE_PARAMS = z.looseObject({ taskId: TASK_ID, inputResponses: z.record(z.string(), z.unknown()).optional() });

export function installTaskHandlers(sdk: Server, host: TaskHost): void {
  const guarded = async (sdkCtx: ServerContext, method: string, run: (principal: string) => Promise<Record<string, unknown>>): Promise<Record<string, unknown>> => {
    if (!declaresTasks(sdkCtx)) throw missingTasksCapability(method);
    try {
      return await run(taskPrincipal(host, sdkCtx));
    } catch (error) {
      throw asRpcError(error);
    }
  };
  sdk.setRequestHandler('tasks/get', { params: GET_PARAMS }, (params, sdkCtx) => guarded(sdkCtx, 'tasks/get', (principal) => host.runtime.get(params.taskId, principal)));
  sdk.setRequestHandler('tasks/cancel', { params: GET_PARAMS }, (params, sdkCtx) => guarded(sdkCtx, 'tasks/cancel', (principal) => host.runtime.cancel(params.taskId, principal)));
  sdk.setRequestHandler('tasks/update', { params: UPDATE_PARAMS }, (params, sdkCtx) =>
    guarded(sdkCtx, 'tasks/update', (principal) =>
      // The SDK lifts a 2026-07-28 request's inputResponses out of its params.
      host.runtime.update(params.taskId, principal, params.inputResponses ?? (sdkCtx.mcpReq.inputResponses as Record<string, unknown> | undefined) ?? {}, (record: TaskRecord) => {
        const tool = host.exposedTool(record.tool);
        return tool ? attemptOf(host, tool, record.arguments, sdkCtx) : undefined;
      }),
    ),
  );
}

function asRpcError(error: unknown): unknown {
  if (error instanceof TaskRequestError) return rpcError(error.code, error.message, error.data);
  if (error instanceof Error && error.name === 'TaskStoreUnavailable') return rpcError(-32603, 'The task store is unreachable; try again shortly.');
  return error;
}
