import type { Redis } from 'ioredis';
import type { RedisLink } from '../replicas/redis-link.js';
import { UNAVAILABLE } from '../replicas/redis-link.js';
import { TERMINAL, patched, type TaskPatch, type TaskRecord, type TaskStore } from './store.js';

/**
 * Tasks shared by replicas through Redis. A task is a hash (`status`, `version`, `record`) kept for
 * its TTL, and a lease key the replica running it renews: once the lease lapses (the replica died),
 * a read turns the task `failed`. Every write is a compare-and-set in Lua on the version, refused
 * once the status is terminal, so a late result never overwrites a cancellation and two replicas
 * never both finish one task.
 */

/** How long a lease lasts unrenewed: a dead replica's task reads `failed` within this (plus one read). */
export const LEASE_MS = 15_000;

const CAS = `
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return 0 end
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
if redis.call('HGET', KEYS[1], 'version') ~= ARGV[1] then return -1 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'version', tostring(tonumber(ARGV[1]) + 1), 'record', ARGV[3])
if ARGV[2] == 'completed' or ARGV[2] == 'failed' or ARGV[2] == 'cancelled' then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
  redis.call('DEL', KEYS[2])
end
return 1
`;

/** Thrown when Redis cannot be reached: a task call then fails rather than pretend. */
export class TaskStoreUnavailable extends Error {
  constructor() {
    super('The task store (Redis) is unreachable.');
    this.name = 'TaskStoreUnavailable';
  }
}

export class RedisTaskStore implements TaskStore {
  private readonly stopCancel: () => void;
  private readonly cancelHandlers = new Set<(taskId: string) => void>();
  private readonly stopChange: () => void;
  private readonly changeHandlers = new Set<(taskId: string) => void>();

  constructor(private readonly link: RedisLink) {
    this.stopCancel = link.subscribe('tasks:cancel', (message) => {
      const taskId = (message as { taskId?: unknown } | null)?.taskId;
      if (typeof taskId === 'string') for (const handler of this.cancelHandlers) handler(taskId);
    });
    // Every replica hears every write (its own too, through Redis): a listen stream on any replica
    // follows a task that runs on another.
    this.stopChange = link.subscribe('tasks:changed', (message) => {
      const taskId = (message as { taskId?: unknown } | null)?.taskId;
      if (typeof taskId === 'string') for (const handler of this.changeHandlers) handler(taskId);
    });
  }

  private key(taskId: string): string {
    return `${this.link.prefix}task:${taskId}`;
  }

  private leaseKey(taskId: string): string {
    return `${this.link.prefix}task:${taskId}:lease`;
  }

  private async must<T>(command: (redis: Redis) => Promise<T>): Promise<T> {
    const answer = await this.link.run(command);
    if (answer === UNAVAILABLE) throw new TaskStoreUnavailable();
    return answer as T;
  }

  async create(record: TaskRecord): Promise<void> {
    await this.must((redis) =>
      redis
        .multi()
        .hset(this.key(record.taskId), 'status', record.status, 'version', '0', 'record', JSON.stringify(record))
        .pexpire(this.key(record.taskId), record.ttlMs)
        .set(this.leaseKey(record.taskId), this.link.replicaId, 'PX', LEASE_MS)
        .exec(),
    );
  }

  async get(taskId: string): Promise<TaskRecord | undefined> {
    const text = await this.must((redis) => redis.hget(this.key(taskId), 'record'));
    return text === null ? undefined : (JSON.parse(text) as TaskRecord);
  }

  async update(taskId: string, patch: TaskPatch): Promise<TaskRecord | undefined> {
    // Optimistic: read, apply, write if nobody wrote in between. Each round some writer wins, so
    // the rounds bound the writers racing on one task (a handful in practice: result, cancel, updates).
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const [version, text] = await this.must((redis) => redis.hmget(this.key(taskId), 'version', 'record'));
      if (version === null || version === undefined || text === null || text === undefined) return undefined;
      const current = JSON.parse(text) as TaskRecord;
      if (TERMINAL.has(current.status)) return undefined;
      const next = patched(current, patch);
      const written = await this.must((redis) => redis.eval(CAS, 2, this.key(taskId), this.leaseKey(taskId), version, next.status, JSON.stringify(next), String(next.ttlMs)));
      if (written === 1) {
        this.link.publish('tasks:changed', { taskId });
        return next;
      }
      if (written === 0) return undefined;
    }
    return undefined;
  }

  async leased(taskId: string): Promise<boolean> {
    return (await this.must((redis) => redis.exists(this.leaseKey(taskId)))) === 1;
  }

  async renew(tasks: readonly { taskId: string; ttlMs: number }[]): Promise<void> {
    if (tasks.length === 0) return;
    await this.link.run(async (redis) => {
      const batch = redis.pipeline();
      for (const { taskId, ttlMs } of tasks) {
        batch.set(this.leaseKey(taskId), this.link.replicaId, 'PX', LEASE_MS);
        // A task that runs longer than its TTL is kept while it runs (the TTL counts from its end).
        batch.pexpire(this.key(taskId), ttlMs);
      }
      return batch.exec();
    });
  }

  async release(taskId: string): Promise<void> {
    await this.link.run((redis) => redis.del(this.leaseKey(taskId)));
  }

  announceCancel(taskId: string): void {
    this.link.publish('tasks:cancel', { taskId });
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
    this.stopCancel();
    this.stopChange();
    this.cancelHandlers.clear();
    this.changeHandlers.clear();
  }
}
