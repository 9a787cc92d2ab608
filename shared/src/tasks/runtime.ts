import { randomUUID } from 'node:crypto';
import type { Logger } from '../core/logging.js';
import { newErrorId } from '../core/logging.js';
import { MemoryTaskStore, TERMINAL, type TaskError, type TaskRecord, type TaskStore } from './store.js';

/** The extension's identifier, as clients declare it and the server advertises it. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** JSON-RPC code for "the client must declare a capability first" (SEP-2575). */
export const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021;

/** What one run of a task's tool gave: its result, or the client answers it waits for. */
export type AttemptOutcome = { result: Record<string, unknown> } | { inputRequests: Record<string, unknown> };

/**
 * Runs the tool once with the client's answers so far; an unexpected failure is thrown (it fails
 * the task), a tool failure is a result with isError (the task completes).
 */
export type Attempt = (signal: AbortSignal, answers: Record<string, unknown>) => Promise<AttemptOutcome>;

export interface TaskRuntimeOptions {
  store?: TaskStore;
  /** How long a call may run before it becomes a task (default 3000 ms). */
  afterMs?: number;
  /** How long a task is kept after it last changed (default one hour). */
  ttlMs?: number;
  /** The poll interval suggested to clients (default 1000 ms). */
  pollIntervalMs?: number;
  /** Largest result kept, as JSON (default 4 MiB); a larger one is replaced by an error result. */
  maxResultBytes?: number;
  /** Most tasks running in this process at once (default 100); past it a call is answered plainly, however long it takes. */
  maxRunning?: number;
  log?: Logger;
}

/** A failure the task handlers turn into a JSON-RPC error. */
export class TaskRequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'TaskRequestError';
  }
}

const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/**
 * The process's task runtime: it decides when a long-running call becomes a task, runs the tasks
 * this replica started (holding their leases), and answers tasks/get, tasks/update and
 * tasks/cancel for any replica's tasks through the store. One per process, shared by every
 * SuiteServer instance (each 2026-07-28 HTTP request has an instance of its own).
 */
export class TaskRuntime {
  readonly store: TaskStore;
  readonly afterMs: number;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  readonly maxResultBytes: number;
  readonly maxRunning: number;
  private readonly log: Logger | undefined;
  /** The tasks running in this process, with what stops them. */
  private readonly running = new Map<string, { controller: AbortController; ttlMs: number }>();
  private readonly renewer: NodeJS.Timeout;
  private readonly stopCancel: () => void;

  constructor(options: TaskRuntimeOptions = {}) {
    this.store = options.store ?? new MemoryTaskStore();
    this.afterMs = options.afterMs ?? 3000;
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.maxResultBytes = options.maxResultBytes ?? 4 * 1024 * 1024;
    this.maxRunning = options.maxRunning ?? 100;
    this.log = options.log;
    // A third of the lease: two renewals may be lost to a slow Redis before the lease lapses.
    this.renewer = setInterval(() => void this.renew(), 5_000);
    this.renewer.unref();
    this.stopCancel = this.store.onCancel((taskId) => this.running.get(taskId)?.controller.abort(new CancelledByClient()));
  }

  /** How many tasks this process runs now. */
  get active(): number {
    return this.running.size;
  }

  /**
   * A long-running tool called by a client that declared the extension: the plain result when the
   * call ends within the budget (`required`: never), else a task, stored before its handle is
   * returned. A need of the client's answers makes it a task at once (it waits for tasks/update).
   */
  async call(input: {
    principal: string;
    tool: string;
    arguments: Record<string, unknown>;
    required: boolean;
    requestSignal: AbortSignal;
    attempt: Attempt;
    /** When the first run needs input before any task exists: the input_required answer to give instead, if any. */
    inputFirst?: () => Promise<Record<string, unknown> | undefined>;
  }): Promise<Record<string, unknown>> {
    const controller = new AbortController();
    const forward = (): void => controller.abort(input.requestSignal.reason);
    input.requestSignal.addEventListener('abort', forward, { once: true });
    const work = this.execute(input.tool, input.attempt, controller.signal, {});
    // Tasks hold their work and results in this process until they finish: a bound on how many, so
    // that a client cannot pile up work it never waits for. Past it the call is an ordinary one.
    if (this.running.size >= this.maxRunning && !input.required) {
      const outcome = await work;
      input.requestSignal.removeEventListener('abort', forward);
      if ('result' in outcome && !outcome.failed) return outcome.result;
      if (outcome.failed) throw outcome.failed.cause;
    }
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), input.required ? 0 : this.afterMs)));
    const first = await Promise.race([work, budget]);
    clearTimeout(timer);
    if (first !== 'late' && 'inputRequests' in first && input.inputFirst) {
      const asked = await input.inputFirst();
      if (asked) {
        input.requestSignal.removeEventListener('abort', forward);
        return asked;
      }
    }
    if (first !== 'late' && !input.required && 'result' in first) {
      input.requestSignal.removeEventListener('abort', forward);
      if (first.failed) throw first.failed.cause;
      return first.result;
    }
    // The client's cancellation of tools/call no longer applies: the task is cancelled with tasks/cancel.
    input.requestSignal.removeEventListener('abort', forward);
    const now = new Date().toISOString();
    const record: TaskRecord = {
      taskId: randomUUID(),
      principal: input.principal,
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: this.ttlMs,
      pollIntervalMs: this.pollIntervalMs,
      tool: input.tool,
      arguments: input.arguments,
    };
    this.running.set(record.taskId, { controller, ttlMs: record.ttlMs });
    try {
      await this.store.create(record);
    } catch (error) {
      this.running.delete(record.taskId);
      controller.abort();
      throw error;
    }
    void work.then((outcome) => this.settle(record.taskId, outcome));
    return createTaskResult(record);
  }

  /** tasks/get: the task as the client sees it, a dead replica's task failed first. */
  async get(taskId: string, principal: string): Promise<Record<string, unknown>> {
    let record = await this.find(taskId, principal);
    if (record.status === 'working' && !this.running.has(taskId) && !(await this.store.leased(taskId))) {
      record =
        (await this.store.update(taskId, {
          status: 'failed',
          error: { code: INTERNAL_ERROR, message: 'The server running this task stopped before it finished. Call the tool again.' },
        })) ?? (await this.find(taskId, principal));
    }
    return detailedTask(record);
  }

  /** tasks/cancel: cancelled unless already terminal (the ack is the same either way), and the work stopped wherever it runs. */
  async cancel(taskId: string, principal: string): Promise<Record<string, unknown>> {
    const record = await this.find(taskId, principal);
    if (TERMINAL.has(record.status)) return {};
    const written = await this.store.update(taskId, { status: 'cancelled', statusMessage: 'Cancelled by the client.', inputRequests: undefined });
    if (written) {
      this.running.get(taskId)?.controller.abort(new CancelledByClient());
      this.store.announceCancel(taskId);
    }
    return {};
  }

  /**
   * tasks/update: the client's answers to what the task waits for. Answers to keys it does not wait
   * for are ignored; once every request is answered the tool runs again here, with all the answers.
   */
  async update(taskId: string, principal: string, responses: Record<string, unknown>, resume: (record: TaskRecord) => Attempt | undefined): Promise<Record<string, unknown>> {
    const record = await this.find(taskId, principal);
    if (record.status !== 'input_required') return {};
    const pending = { ...record.inputRequests };
    const answers = { ...record.answers };
    let answered = 0;
    for (const [key, value] of Object.entries(responses)) {
      if (!Object.hasOwn(pending, key)) continue;
      answers[key] = value;
      delete pending[key];
      answered += 1;
    }
    if (answered === 0) return {};
    if (Object.keys(pending).length > 0) {
      await this.store.update(taskId, { answers, inputRequests: pending });
      return {};
    }
    const attempt = resume(record);
    if (!attempt) {
      await this.store.update(taskId, { status: 'failed', inputRequests: undefined, error: { code: INTERNAL_ERROR, message: `${record.tool} is no longer offered by this server.` } });
      return {};
    }
    const controller = new AbortController();
    this.running.set(taskId, { controller, ttlMs: record.ttlMs });
    await this.store.renew([{ taskId, ttlMs: record.ttlMs }]);
    const written = await this.store.update(taskId, { status: 'working', answers, inputRequests: undefined });
    if (!written) {
      this.running.delete(taskId);
      return {};
    }
    void this.execute(record.tool, attempt, controller.signal, answers).then((outcome) => this.settle(taskId, outcome));
    return {};
  }

  async close(): Promise<void> {
    clearInterval(this.renewer);
    this.stopCancel();
    for (const { controller } of this.running.values()) controller.abort(new Error('The server is shutting down.'));
    this.running.clear();
  }

  private async find(taskId: string, principal: string): Promise<TaskRecord> {
    const record = await this.store.get(taskId);
    // Another principal's task is indistinguishable from one that does not exist.
    if (!record || record.principal !== principal) throw new TaskRequestError(INVALID_PARAMS, `Unknown task: ${taskId}. It may have expired.`);
    return record;
  }

  private async execute(tool: string, attempt: Attempt, signal: AbortSignal, answers: Record<string, unknown>): Promise<Settled> {
    try {
      return await attempt(signal, answers);
    } catch (error) {
      const id = newErrorId();
      this.log?.private('error', `task of ${tool} failed unexpectedly (error id ${id}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      const code = typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : INTERNAL_ERROR;
      return { result: {}, failed: { cause: error, error: { code, message: `${tool} failed unexpectedly (error id ${id}). The server log has the detail.` } } };
    }
  }

  private async settle(taskId: string, outcome: Settled): Promise<void> {
    try {
      if ('inputRequests' in outcome) {
        await this.store.update(taskId, { status: 'input_required', inputRequests: outcome.inputRequests });
      } else if (outcome.failed) {
        await this.store.update(taskId, { status: 'failed', error: outcome.failed.error });
      } else {
        await this.store.update(taskId, { status: 'completed', result: this.capped(outcome.result) });
      }
    } catch (error) {
      this.log?.warning(`could not store the outcome of task ${taskId}: ${(error as Error).message}`);
    } finally {
      this.running.delete(taskId);
      await this.store.release(taskId).catch(() => undefined);
    }
  }

  /** The result as kept: one larger than the cap is replaced by a tool error that says so. */
  private capped(result: Record<string, unknown>): Record<string, unknown> {
    const bytes = Buffer.byteLength(JSON.stringify(result), 'utf8');
    if (bytes <= this.maxResultBytes) return result;
    return {
      content: [{ type: 'text', text: `The result (${bytes} bytes) is larger than the ${this.maxResultBytes} bytes a task keeps. Call the tool again with narrower arguments or a lower limit.` }],
      isError: true,
    };
  }

  private async renew(): Promise<void> {
    const tasks = [...this.running].map(([taskId, { ttlMs }]) => ({ taskId, ttlMs }));
    await this.store.renew(tasks).catch(() => undefined);
  }
}

type Settled = AttemptOutcome & { failed?: { cause: unknown; error: TaskError } };

/** Why a task's work was stopped: the client cancelled it (tools see an aborted signal). */
export class CancelledByClient extends Error {
  constructor() {
    super('The client cancelled the task.');
    this.name = 'AbortError';
  }
}

/** The task fields every task answer carries. */
function taskFields(record: TaskRecord): Record<string, unknown> {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage ? { statusMessage: record.statusMessage } : {}),
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
}

/** A tools/call answered with a task: the task itself, flat, no result yet. */
export function createTaskResult(record: TaskRecord): Record<string, unknown> {
  return { resultType: 'task', ...taskFields(record) };
}

/** tasks/get's answer: the task, with what it waits for, its result or its error inline. */
export function detailedTask(record: TaskRecord): Record<string, unknown> {
  return {
    ...taskFields(record),
    ...(record.status === 'input_required' && record.inputRequests ? { inputRequests: record.inputRequests } : {}),
    ...(record.status === 'completed' && record.result ? { result: record.result } : {}),
    ...(record.status === 'failed' && record.error ? { error: record.error } : {}),
  };
}

let processRuntime: TaskRuntime | undefined;

/** Sets the process's task runtime (the CLI does, from --task-after-ms and --redis-url). */
export function configureTasks(options: TaskRuntimeOptions): TaskRuntime {
  void processRuntime?.close();
  processRuntime = new TaskRuntime(options);
  return processRuntime;
}

/** The process's task runtime: in memory with the defaults unless configured. */
export function processTasks(): TaskRuntime {
  return (processRuntime ??= new TaskRuntime());
}
