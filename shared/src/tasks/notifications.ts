import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server';
import { detailedTask, TASKS_EXTENSION, type TaskRuntime } from './runtime.js';
import { TERMINAL, type TaskRecord } from './store.js';

/** The extension's status notification (SEP-2663), sent on `subscriptions/listen` streams. */
export const TASK_STATUS_NOTIFICATION = 'notifications/tasks';

/** Most task ids one listen stream may follow; the rest of a longer list is left out of its acknowledgement. */
export const MAX_LISTEN_TASKS = 100;

/**
 * How often a followed task that runs elsewhere is read again: a task whose replica died turns
 * `failed` on a read (its lease lapsed), and a change whose announcement was lost is caught up.
 */
const RECHECK_MS = 5_000;

/**
 * Test seam: `SUITE_TASK_RECHECK_MS` stretches the re-read, so that a test shows a change of a task
 * on another replica arriving through the relay rather than through the re-read.
 */
function recheckMs(): number {
  const value = Number(process.env.SUITE_TASK_RECHECK_MS);
  return Number.isInteger(value) && value >= 1000 ? value : RECHECK_MS;
}

/** The task ids a `subscriptions/listen` request asks to follow (`notifications.taskIds`), or undefined. */
export function listenTaskIds(params: unknown): string[] | undefined {
  const notifications = (params as { notifications?: unknown } | undefined)?.notifications;
  if (typeof notifications !== 'object' || notifications === null) return undefined;
  const ids = (notifications as { taskIds?: unknown }).taskIds;
  if (!Array.isArray(ids)) return undefined;
  return [...new Set(ids.filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length <= 200))];
}

/** Whether the listen request's client declared the tasks extension (in the request's `_meta`). */
export function listenDeclaresTasks(params: unknown): boolean {
  const meta = (params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  const extensions = (meta?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: unknown } | undefined)?.extensions;
  return typeof extensions === 'object' && extensions !== null && (extensions as Record<string, unknown>)[TASKS_EXTENSION] !== undefined;
}

/**
 * One listen stream's task ids: hears every task write in the store (any replica's, through Redis
 * with replicas) and sends the task's full state, as tasks/get shows it, for each change of a task
 * it follows. Only the principal's own tasks are followed: another's id is left out of the
 * acknowledgement, exactly as an unknown one, and a change is read back and checked again before
 * anything is sent.
 */
export class TaskFollower {
  private readonly followed = new Map<string, { status?: string; lastUpdatedAt?: string }>();
  private stopChanges: (() => void) | undefined;
  private recheck: NodeJS.Timeout | undefined;
  private started = false;
  private closed = false;
  /** Reads in flight per task, chained so that a task's notifications go out in the order of its writes. */
  private readonly reading = new Map<string, Promise<void>>();

  constructor(
    private readonly runtime: TaskRuntime,
    private readonly principal: string,
    private readonly send: (params: Record<string, unknown>) => void,
  ) {}

  /**
   * Starts hearing changes, then keeps the asked ids that are the principal's tasks; resolves to
   * them (what the acknowledgement names). Nothing is sent before `start`.
   */
  async follow(taskIds: readonly string[]): Promise<string[]> {
    this.stopChanges = this.runtime.store.onChange((taskId) => {
      if (this.followed.has(taskId)) this.refresh(taskId);
    });
    const records = await Promise.all(taskIds.slice(0, MAX_LISTEN_TASKS).map((id) => this.runtime.store.get(id).catch(() => undefined)));
    for (const record of records) if (record && record.principal === this.principal) this.followed.set(record.taskId, {});
    return [...this.followed.keys()];
  }

  /** The acknowledgement is out: each followed task's state now, then every change. */
  start(): void {
    if (this.closed || this.started) return;
    this.started = true;
    for (const taskId of this.followed.keys()) this.refresh(taskId);
    this.recheck = setInterval(() => {
      for (const [taskId, last] of this.followed) if (!last.status || !TERMINAL.has(last.status as TaskRecord['status'])) this.refresh(taskId, true);
    }, recheckMs());
    this.recheck.unref();
  }

  close(): void {
    this.closed = true;
    this.stopChanges?.();
    if (this.recheck) clearInterval(this.recheck);
    this.followed.clear();
  }

  private refresh(taskId: string, viaRuntime = false): void {
    if (!this.started || this.closed) return;
    const prior = this.reading.get(taskId) ?? Promise.resolve();
    const next = prior.then(() => this.readAndSend(taskId, viaRuntime));
    this.reading.set(taskId, next);
    void next.finally(() => {
      if (this.reading.get(taskId) === next) this.reading.delete(taskId);
    });
  }

  private async readAndSend(taskId: string, viaRuntime: boolean): Promise<void> {
    const last = this.followed.get(taskId);
    if (!last || this.closed) return;
    let shown: Record<string, unknown> | undefined;
    try {
      // The runtime's read fails a task whose replica died; the store's is a plain read.
      if (viaRuntime) shown = await this.runtime.get(taskId, this.principal);
      else {
        const record = await this.runtime.store.get(taskId);
        shown = record && record.principal === this.principal ? detailedTask(record) : undefined;
      }
    } catch {
      shown = undefined;
    }
    if (this.closed || !this.followed.has(taskId)) return;
    if (!shown) {
      // Expired (or the store is unreachable): nothing more will come for it.
      if (viaRuntime) this.followed.delete(taskId);
      return;
    }
    const status = shown.status as string;
    const updated = shown.lastUpdatedAt as string;
    // Once terminal a task never changes; an older read than the last one sent is not news.
    if (last.status && TERMINAL.has(last.status as TaskRecord['status'])) return;
    if (last.status === status && last.lastUpdatedAt === updated) return;
    if (last.lastUpdatedAt && updated < last.lastUpdatedAt) return;
    last.status = status;
    last.lastUpdatedAt = updated;
    this.send(shown);
  }
}
