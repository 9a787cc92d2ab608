import vm from 'node:vm';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Logger } from '../src/core/logging.js';
import { MemoryReleaser, fullCollection } from '../src/transports/memory.js';

describe('fullCollection', () => {
  it('collects unreachable objects without --expose-gc, and leaves no gc function to other code', () => {
    const collect = fullCollection();
    expect(collect).toBeTypeOf('function');
    // The flag is set back at once: a context made afterwards has no gc.
    expect(vm.runInNewContext('typeof gc')).toBe('undefined');

    collect!();
    const baseline = process.memoryUsage().heapUsed;
    let garbage: { n: number; s: string }[] | undefined = Array.from({ length: 400_000 }, (_, n) => ({ n, s: `item ${n}` }));
    expect(process.memoryUsage().heapUsed - baseline).toBeGreaterThan(16 * 1024 * 1024);
    garbage.length = 0;
    garbage = undefined;
    collect!();
    expect(process.memoryUsage().heapUsed - baseline).toBeLessThan(4 * 1024 * 1024);
  });
});

describe('MemoryReleaser', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  function releaser(options: { afterSessions?: number; settleMs?: number; minIntervalMs?: number } = {}) {
    const collect = vi.fn();
    const lines: unknown[] = [];
    const log = new Logger('memory-test');
    log.attach((_level, _logger, data) => lines.push(data));
    return { collect, lines, releaser: new MemoryReleaser({ afterSessions: 5, settleMs: 1000, minIntervalMs: 10_000, ...options, collect, log }) };
  }

  it('collects once after enough sessions closed, when the batch has settled, and says so in the log', () => {
    vi.useFakeTimers();
    const { collect, lines, releaser: r } = releaser();
    for (let i = 0; i < 4; i++) r.sessionClosed();
    vi.advanceTimersByTime(60_000);
    expect(collect).not.toHaveBeenCalled();

    r.sessionClosed();
    vi.advanceTimersByTime(900);
    // More of the same sweep: the collection waits for the batch to end.
    r.sessionClosed();
    r.sessionClosed();
    vi.advanceTimersByTime(900);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(200);
    // Two passes make one collection (see MemoryReleaser.run).
    expect(collect).toHaveBeenCalledTimes(2);
    expect(lines).toEqual([expect.objectContaining({ message: 'full garbage collection after 7 sessions closed' })]);

    // The count starts again from zero.
    for (let i = 0; i < 4; i++) r.sessionClosed();
    vi.advanceTimersByTime(60_000);
    expect(collect).toHaveBeenCalledTimes(2);
  });

  it('runs at most once per interval however fast sessions churn', () => {
    vi.useFakeTimers();
    const { collect, releaser: r } = releaser({ minIntervalMs: 10_000 });
    for (let second = 0; second < 30; second++) {
      // A session opened and closed for every request, 20 a second, with a gap so each batch settles.
      for (let i = 0; i < 20; i++) r.sessionClosed();
      vi.advanceTimersByTime(1000);
    }
    vi.advanceTimersByTime(20_000);
    // At 1 s, then no sooner than every 10 s: 1, 11, 21, and once more for the closes after that.
    expect(collect).toHaveBeenCalledTimes(2 * 4);
  });

  it('does nothing after stop, or with afterSessions 0', () => {
    vi.useFakeTimers();
    const stopped = releaser();
    for (let i = 0; i < 5; i++) stopped.releaser.sessionClosed();
    stopped.releaser.stop();
    stopped.releaser.sessionClosed();
    vi.advanceTimersByTime(60_000);
    expect(stopped.collect).not.toHaveBeenCalled();

    const off = releaser({ afterSessions: 0 });
    for (let i = 0; i < 100; i++) off.releaser.sessionClosed();
    vi.advanceTimersByTime(60_000);
    expect(off.collect).not.toHaveBeenCalled();
  });
});
