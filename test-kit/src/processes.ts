import { readdirSync, readFileSync } from 'node:fs';

/** A process as /proc shows it: its pid and its start time (which tells it from a later process given the same pid). */
export interface ProcessIdentity {
  pid: number;
  /** Clock ticks after boot at which it started (field 22 of /proc/<pid>/stat). */
  startTime: number;
  /** The command line, for messages. */
  command: string;
}

interface StatLine {
  ppid: number;
  state: string;
  startTime: number;
}

function readStat(pid: number): StatLine | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses; the fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, ppid: Number(fields[1]), startTime: Number(fields[19]) };
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '?';
  }
}

/**
 * Every living descendant of a process (children, their children, …), from /proc: what a fault
 * test records before it kills a server, since once the server is dead its children are
 * re-parented and no longer point at it. Zombies do not count (they are already dead).
 */
export function descendantsOf(pid: number): ProcessIdentity[] {
  const parents = new Map<number, number[]>();
  const stats = new Map<number, StatLine>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (!stat) continue;
    stats.set(Number(entry), stat);
    const siblings = parents.get(stat.ppid) ?? [];
    siblings.push(Number(entry));
    parents.set(stat.ppid, siblings);
  }
  const found: ProcessIdentity[] = [];
  const queue = [...(parents.get(pid) ?? [])];
  while (queue.length > 0) {
    const child = queue.shift()!;
    const stat = stats.get(child)!;
    if (stat.state !== 'Z' && stat.state !== 'X') found.push({ pid: child, startTime: stat.startTime, command: commandOf(child) });
    queue.push(...(parents.get(child) ?? []));
  }
  return found;
}

/** Whether this very process (same pid, same start time) is still alive (a zombie is not). */
export function isAlive(process: ProcessIdentity): boolean {
  const stat = readStat(process.pid);
  return stat !== undefined && stat.startTime === process.startTime && stat.state !== 'Z' && stat.state !== 'X';
}

/**
 * Waits until none of the given processes is alive; fails after `timeoutMs` (default 2 s) naming
 * those still running.
 */
export async function expectAllGone(processes: readonly ProcessIdentity[], timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const alive = processes.filter(isAlive);
    if (alive.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(`${alive.length} process(es) still alive ${timeoutMs} ms after their parent died: ${alive.map((p) => `${p.pid} (${p.command})`).join('; ')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
