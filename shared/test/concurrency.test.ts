import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit } from '../src/process/concurrency.js';
import { CancelledError } from '../src/core/progress.js';

/** A task that runs until released, recording when it started. */
function gate(log: string[], name: string): { task: () => Promise<string>; release: () => void } {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return {
    release: () => release(),
    task: async () => {
      log.push(`start ${name}`);
      await done;
      return name;
    },
  };
}

describe('ConcurrencyLimit', () => {
  it('runs at most `limit` tasks at once and starts the others in arrival order as turns free up', async () => {
    const limit = new ConcurrencyLimit(2);
    const log: string[] = [];
    const tasks = ['a', 'b', 'c', 'd'].map((name) => gate(log, name));
    const results = tasks.map((t) => limit.run(t.task));
    await Promise.resolve();
    expect(log).toEqual(['start a', 'start b']);
    expect([limit.active, limit.queued]).toEqual([2, 2]);

    tasks[1]!.release();
    await expect(results[1]).resolves.toBe('b');
    await new Promise((resolve) => setImmediate(resolve));
    expect(log).toEqual(['start a', 'start b', 'start c']);
    for (const t of tasks) t.release();
    expect(await Promise.all(results)).toEqual(['a', 'b', 'c', 'd']);
    expect([limit.active, limit.queued]).toEqual([0, 0]);
  });

  it('frees the turn of a task that throws', async () => {
    const limit = new ConcurrencyLimit(1);
    await expect(limit.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(limit.run(async () => 'next')).resolves.toBe('next');
    expect(limit.active).toBe(0);
  });

  it('drops a waiter whose signal aborts, with CancelledError, and never starts its task', async () => {
    const limit = new ConcurrencyLimit(1);
    const log: string[] = [];
    const first = gate(log, 'first');
    const running = limit.run(first.task);
    const controller = new AbortController();
    const cancelled = limit.run(gate(log, 'cancelled').task, controller.signal);
    const after = gate(log, 'after');
    const later = limit.run(after.task);
    controller.abort();
    await expect(cancelled).rejects.toBeInstanceOf(CancelledError);
    expect(limit.queued).toBe(1);
    first.release();
    after.release();
    await Promise.all([running, later]);
    expect(log).toEqual(['start first', 'start after']);
    await expect(limit.run(async () => 'x', AbortSignal.abort())).rejects.toBeInstanceOf(CancelledError);
  });

  it('refuses a limit below 1', () => {
    expect(() => new ConcurrencyLimit(0)).toThrow(RangeError);
    expect(() => new ConcurrencyLimit(1.5)).toThrow(RangeError);
  });
});
