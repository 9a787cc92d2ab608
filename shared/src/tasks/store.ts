/**
 * Where tasks (the 2026-07-28 tasks extension, `io.modelcontextprotocol/tasks`) live between the
 * call that created them and the client's last `tasks/get`: in this process, or in Redis when
 * replicas share them. Both stores keep the same three promises: a task is readable as soon as
 * `create` resolves; a terminal status is never overwritten; and a task whose replica stopped
 * renewing its lease reads `failed`.
 */

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

export interface TaskError {
  code: number;
  message: string;
  data?: unknown;
}

export interface TaskRecord {
  taskId: string;
  /** Who may see it: a digest of the caller (see TaskRuntime); never shown to clients. */
  principal: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  /** The tool and its arguments, so that any replica can run it again once input arrives. */
  tool: string;
  arguments: Record<string, unknown>;
  /** The client's answers so far (input_required rounds), by the keys the tool asked with. */
  answers?: Record<string, unknown>;
  /** What the tool waits for while `input_required`, by key. */
  inputRequests?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: TaskError;
}

/** What a write may change: anything but who owns the task and when it began. */
export type TaskPatch = Partial<Omit<TaskRecord, 'taskId' | 'principal' | 'createdAt' | 'ttlMs' | 'tool'>>;

export interface TaskStore {
  /** Stores a new task and this replica's lease on it; resolves once any replica can read it. */
  create(record: TaskRecord): Promise<void>;
  /** The task as stored, or undefined when unknown or expired. */
  get(taskId: string): Promise<TaskRecord | undefined>;
  /**
   * Applies `patch` unless the task is already terminal (compare-and-set); the record as written,
   * or undefined when nothing was written (terminal, unknown, expired).
   */
  update(taskId: string, patch: TaskPatch): Promise<TaskRecord | undefined>;
  /** Whether a replica still holds the task's lease (it is running it). */
  leased(taskId: string): Promise<boolean>;
  /** Renews this replica's leases on the tasks it runs (and their retention). */
  renew(tasks: readonly { taskId: string; ttlMs: number }[]): Promise<void>;
  /** Drops this replica's lease (the task is terminal, or waits for input and runs nowhere). */
  release(taskId: string): Promise<void>;
  /** Asks whichever replica runs the task to stop it. */
  announceCancel(taskId: string): void;
  /** Hears cancellations announced by any replica (this one included); returns how to stop. */
  onCancel(handler: (taskId: string) => void): () => void;
  /**
   * Hears every write that changed a task, made by any replica (this one included), once the
   * change is readable: the listen streams following the task read it then. Returns how to stop.
   */
  onChange(handler: (taskId: string) => void): () => void;
  close(): Promise<void>;
}

/** The record with `patch` applied, its update time now. */
export function patched(record: TaskRecord, patch: TaskPatch): TaskRecord {
  const next: TaskRecord = { ...record, ...patch, lastUpdatedAt: new Date().toISOString() };
  for (const key of Object.keys(patch) as (keyof TaskPatch)[]) if (patch[key] === undefined) delete next[key];
  return next;
}

/**
 * The store of a single process (stdio, or HTTP without Redis). Retention is checked on read and
 * swept once a minute; the process holding the lease is this one, so a task is never orphaned
 * while it is readable.
 */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, { record: TaskRecord; expiresAt: number }>();
  private readonly cancelHandlers = new Set<(taskId: string) => void>();
  private readonly changeHandlers = new Set<(taskId: string) => void>();
  private readonly sweeper: NodeJS.Timeout;

  /** @param maxTasks most tasks kept at once; past it the oldest finished ones go first (then the oldest). */
  constructor(private readonly maxTasks = 10_000) {
    this.sweeper = setInterval(() => {
      const now = Date.now();
      for (const [id, entry] of this.tasks) if (entry.expiresAt <= now) this.tasks.delete(id);
    }, 60_000);
    this.sweeper.unref();
  }

  async create(record: TaskRecord): Promise<void> {
    if (this.tasks.size >= this.maxTasks) this.evict();
    this.tasks.set(record.taskId, { record: structuredClone(record), expiresAt: Date.now() + record.ttlMs });
  }

  /** Makes room for one task: the oldest finished one, else the oldest (a task never read back is lost, not memory). */
  private evict(): void {
    for (const [id, entry] of this.tasks) {
      if (TERMINAL.has(entry.record.status)) {
        this.tasks.delete(id);
        return;
      }
    }
    const oldest = this.tasks.keys().next();
    if (!oldest.done) this.tasks.delete(oldest.value);
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const entry = this.tasks.get(taskId);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.tasks.delete(taskId);
      return undefined;
    }
    return structuredClone(entry.record);
  }

  async update(taskId: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    const entry = this.tasks.get(taskId);
    if (!entry || entry.expiresAt <= Date.now() || TERMINAL.has(entry.record.status)) return undefined;
    entry.record = patched(entry.record, structuredClone(patch));
    // A finished task is kept for its whole TTL from the moment it finished.
    if (TERMINAL.has(entry.record.status)) entry.expiresAt = Date.now() + entry.record.ttlMs;
    for (const handler of this.changeHandlers) handler(taskId);
    return structuredClone(entry.record);
  }

  async leased(): Promise<boolean> {
    return true;
  }

  async renew(tasks: readonly { taskId: string; ttlMs: number }[]): Promise<void> {
    for (const { taskId, ttlMs } of tasks) {
      const entry = this.tasks.get(taskId);
      if (entry) entry.expiresAt = Math.max(entry.expiresAt, Date.now() + ttlMs);
    }
  }

  async release(): Promise<void> {}

  announceCancel(taskId: string): void {
    for (const handler of this.cancelHandlers) handler(taskId);
  }

  onCancel(handler: (taskId: string) => void): () => void {
    this.cancelHandlers.add(handler);
    return () => void this.cancelHandlers.delete(handler);
  }

  onChange(handler: (taskId: string) => void): () => void {
    this.changeHandlers.add(handler);
    return () => void this.changeHandlers.delete(handler);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.cancelHandlers.clear();
    this.changeHandlers.clear();
  }
}
