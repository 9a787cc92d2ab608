import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Readable, Writable } from 'node:stream';
import { ConcurrencyLimit } from './concurrency.js';
import { CancelledError } from '../core/progress.js';
import { ToolError } from '../core/errors.js';
import { formatBytes } from '../text/sizes.js';

/** What every child gets, whether it runs for one call or for the life of the server. */
export interface ChildEnvironmentOptions {
  cwd?: string;
  /** Added to the scrubbed environment (which keeps only PATH, HOME, LANG, LC_*, TZ, TMPDIR, USER, and names in `passEnv`). */
  env?: Record<string, string>;
  /** Names of further variables of the server's environment the child may see. */
  passEnv?: readonly string[];
  /** What messages call the program (default: the command's file name, never its directory). */
  label?: string;
}

export interface RunProcessOptions extends ChildEnvironmentOptions {
  /** Written to the child's stdin, which is then closed. Without it the child reads an empty stdin. */
  input?: string | Uint8Array;
  /** Default 30 s. On expiry the whole process group is stopped and a ToolError('timeout') is thrown. */
  timeoutMs?: number;
  /** Per stream; default 10 MiB. Past it the process group is stopped and the text ends with a marker. */
  maxOutputBytes?: number;
  /** The request's signal: aborting stops the process group and throws CancelledError. */
  signal?: AbortSignal;
  /** Exit codes that are not failures (default [0]); others still resolve, with ok: false. */
  okExitCodes?: readonly number[];
  /**
   * How long a group being stopped (time limit, cancellation, output cap) gets between SIGTERM
   * and SIGKILL. Default 1 s: enough for git to remove its lock files, which SIGKILL would leave.
   */
  killGraceMs?: number;
  /**
   * For commands that change nothing (`git status`, `git log`): while a run with the same command,
   * arguments, directory, environment, input and limits still waits for its turn, this run joins
   * it instead of queueing a child of its own, and both get its result. The joined run has not
   * started yet, so its output reflects a state later than both requests: what either caller
   * would have seen had it run alone. It is cancelled only when every caller has cancelled.
   * Under 1,000 identical calls in flight the server then starts a handful of children, not 1,000.
   */
  shareQueued?: boolean;
}

export interface ProcessResult {
  /**
   * The exit code is one of `okExitCodes`, or the run was stopped at the output cap (more output
   * than wanted is not a failure of the command: look at `truncated`).
   */
  ok: boolean;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** UTF-8, never split inside a multi-byte character; a truncated stream ends with a marker line. */
  stdout: string;
  stderr: string;
  truncated: { stdout: boolean; stderr: boolean };
  durationMs: number;
}

export interface ManagedProcessOptions extends ChildEnvironmentOptions {
  /** Where the child's stderr goes: the server's own stderr (the default, so it lands in the server's log), a pipe, or nowhere. */
  stderr?: 'inherit' | 'pipe' | 'ignore';
}

export interface ManagedExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Set when the process never started (command missing, working directory missing). */
  error?: ToolError;
}

/** A long-lived child (a query process, a language server) in its own process group. */
export interface ManagedProcess {
  /** Undefined when the process could not be started (then `exited` carries the error). */
  readonly pid: number | undefined;
  readonly stdin: Writable;
  readonly stdout: Readable;
  /** Only with `stderr: 'pipe'`. */
  readonly stderr: Readable | null;
  /** Settles once the process has exited and been reaped (or failed to start); never rejects. */
  readonly exited: Promise<ManagedExit>;
  readonly hasExited: boolean;
  /** Signals the whole process group (default SIGTERM); does nothing once the process has exited. */
  kill(signal?: NodeJS.Signals): void;
  /** SIGTERM to the group, SIGKILL after `graceMs` (default 1 s), and waits for the exit. */
  terminate(graceMs?: number): Promise<ManagedExit>;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 1000;
/** How long to wait for a SIGKILLed group to be gone before giving up (a process stuck in the kernel). */
const KILL_WAIT_MS = 5000;
const KEPT_VARIABLES = new Set(['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'USER']);

/** A child of this process, from spawn until it has exited and been reaped. */
interface Tracked {
  /** The child's pid, which is also its process group id (it was spawned as a group leader). */
  pgid: number;
  exited: Promise<void>;
  hasExited: boolean;
  /** Called by terminateAllProcesses before the group gets SIGTERM, so a run can say why it stopped. */
  onShutdown?: () => void;
}

const live = new Set<Tracked>();

/**
 * Most runProcess children alive at once, process-wide; later runs wait their turn in order.
 * Unbounded, 1,000 concurrent git calls had 500 git processes alive at once.
 */
export const MAX_CONCURRENT_PROCESSES = Math.max(8, 2 * os.availableParallelism());
const turns = new ConcurrencyLimit(MAX_CONCURRENT_PROCESSES);

/** runProcess children running now, and runs waiting for a turn. */
export function processCounts(): { running: number; waiting: number } {
  return { running: turns.active, waiting: turns.queued };
}

let exitHookInstalled = false;

/**
 * Runs a program to completion and collects its output. Never through a shell: `args` reach the
 * program exactly as given, so `$(…)`, `;`, quotes and globs in them are plain text. The child
 * leads its own process group (a new session, so it has no terminal to prompt on), and every stop
 * (time limit, cancellation, output cap, server shutdown) signals the whole group, so the
 * grandchildren a command starts stop with it. When the command exits, whatever it left running
 * in its group is killed: the promise settles only once nothing of the group is left alive.
 * At most MAX_CONCURRENT_PROCESSES run at once; a run waits for its turn in arrival order (the
 * signal cancels the wait too), and its time limit starts when it does.
 */
export async function runProcess(command: string, args: readonly string[], options: RunProcessOptions = {}): Promise<ProcessResult> {
  if (!options.shareQueued) return turns.run(() => runNow(command, args, options), options.signal);
  if (options.signal?.aborted) throw new CancelledError();
  const key = shareKey(command, args, options);
  let run = queuedRuns.get(key);
  if (!run) {
    const controller = new AbortController();
    // The task runs after at least one await inside turns.run, so `created` exists by then.
    const result = turns.run(() => {
      // Started: a later caller must not join a run that may already have read the state.
      if (queuedRuns.get(key) === created) queuedRuns.delete(key);
      return runNow(command, args, { ...options, signal: controller.signal });
    }, controller.signal);
    const created: QueuedRun = { controller, callers: 0, result };
    // Every caller handles the outcome through its own promise; this keeps an abandoned run quiet.
    result.catch(() => undefined);
    queuedRuns.set(key, created);
    run = created;
  }
  return joinQueuedRun(run, () => {
    if (queuedRuns.get(key) === run) queuedRuns.delete(key);
  }, options.signal);
}

/** A shareQueued run: one child for every caller that asked before it started. */
interface QueuedRun {
  result: Promise<ProcessResult>;
  /** Aborted when the last caller cancels. */
  controller: AbortController;
  callers: number;
}

/** shareQueued runs that have not started yet, by shareKey. */
const queuedRuns = new Map<string, QueuedRun>();

function shareKey(command: string, args: readonly string[], options: RunProcessOptions): string {
  const input = options.input === undefined ? null : typeof options.input === 'string' ? `s${options.input}` : `b${Buffer.from(options.input).toString('base64')}`;
  const env = Object.entries(options.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    command,
    args,
    options.cwd ?? null,
    env,
    [...(options.passEnv ?? [])].sort(),
    input,
    options.timeoutMs ?? null,
    options.maxOutputBytes ?? null,
    options.okExitCodes ?? null,
    options.killGraceMs ?? null,
    options.label ?? null,
  ]);
}

/** One caller's share of a QueuedRun: its own cancellation, its own copy of the result. */
function joinQueuedRun(run: QueuedRun, forget: () => void, signal: AbortSignal | undefined): Promise<ProcessResult> {
  run.callers += 1;
  return new Promise<ProcessResult>((resolve, reject) => {
    let settled = false;
    const onAbort = (): void => {
      if (settled) return;
      settled = true;
      run.callers -= 1;
      if (run.callers === 0) {
        forget();
        run.controller.abort();
      }
      reject(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    run.result.then(
      (result) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        resolve({ ...result, truncated: { ...result.truncated } });
      },
      (error: unknown) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** runProcess once its turn has come: `durationMs` and the time limit count from here. */
async function runNow(command: string, args: readonly string[], options: RunProcessOptions): Promise<ProcessResult> {
  const label = options.label ?? labelFor(command);
  const timeoutMs = positiveLimit(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs');
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  if (!Number.isInteger(maxOutputBytes) || maxOutputBytes < 0) throw new RangeError(`maxOutputBytes must be a whole number of bytes, got ${maxOutputBytes}.`);
  const killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const okExitCodes = options.okExitCodes ?? [0];
  if (options.signal?.aborted) throw new CancelledError();

  const startedAt = performance.now();
  const child = startChild(command, args, options, label, [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe']);
  const stdout = new CappedOutput(maxOutputBytes);
  const stderr = new CappedOutput(maxOutputBytes);

  return new Promise<ProcessResult>((resolve, reject) => {
    let stopReason: 'timeout' | 'cancelled' | 'output cap' | 'shutdown' | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

    const stop = (reason: NonNullable<typeof stopReason>): void => {
      if (stopReason || exit || child.pid === undefined) return;
      stopReason = reason;
      const pgid = child.pid;
      signalGroup(pgid, 'SIGTERM');
      killTimer = setTimeout(() => signalGroup(pgid, 'SIGKILL'), killGraceMs);
    };
    const onAbort = (): void => stop('cancelled');
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const cleanUp = (): void => {
      clearTimeout(timer);
      clearTimeout(killTimer);
      options.signal?.removeEventListener('abort', onAbort);
    };

    child.on('error', (error: NodeJS.ErrnoException) => {
      // After a successful start, 'error' only reports a failed kill, which the exit handling covers.
      if (child.pid !== undefined) return;
      cleanUp();
      reject(startFailure(error, label, options.cwd));
    });
    if (child.pid === undefined) return;
    const tracked = track(child, child.pid);
    // terminateAllProcesses signals the group itself; the run only needs to know why it ended.
    tracked.onShutdown = () => {
      if (!stopReason && !exit) stopReason = 'shutdown';
    };

    child.stdout!.on('data', (chunk: Buffer) => {
      if (stdout.push(chunk)) stop('output cap');
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (stderr.push(chunk)) stop('output cap');
    });
    if (child.stdin) {
      // A program that exits without reading its input closes the pipe under us: not an error.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
    child.once('exit', (code, signal) => {
      exit = { code, signal };
    });
    // 'close' comes after 'exit', once the output pipes are drained and closed.
    child.once('close', () => {
      const pgid = child.pid!;
      void groupGone(pgid).then(() => {
        cleanUp();
        const durationMs = performance.now() - startedAt;
        if (stopReason === 'timeout') {
          return reject(
            ToolError.timeout(`${label} did not finish within ${formatDuration(timeoutMs)} (its time limit) and was stopped. Try a smaller request, or a longer time limit if the server allows one.`),
          );
        }
        if (stopReason === 'cancelled') return reject(new CancelledError());
        if (stopReason === 'shutdown') return reject(ToolError.unavailable(`${label} was stopped because the server is shutting down.`));
        const exitCode = exit?.code ?? null;
        resolve({
          ok: stopReason === 'output cap' || (exitCode !== null && okExitCodes.includes(exitCode)),
          exitCode,
          signal: exit?.signal ?? null,
          stdout: stdout.text(),
          stderr: stderr.text(),
          truncated: { stdout: stdout.truncated, stderr: stderr.truncated },
          durationMs,
        });
      });
    });
  });
}

/**
 * Starts a long-lived child with the same environment scrub, process group and reaping as
 * runProcess; the caller talks to it over stdin and stdout. It is tracked until it exits, so
 * terminateAllProcesses stops it at shutdown even if its owner forgot.
 */
export function spawnManaged(command: string, args: readonly string[], options: ManagedProcessOptions = {}): ManagedProcess {
  const label = options.label ?? labelFor(command);
  const child = startChild(command, args, options, label, ['pipe', 'pipe', options.stderr ?? 'inherit']);
  let hasExited = false;
  const exited = new Promise<ManagedExit>((resolve) => {
    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      hasExited = true;
      resolve({ exitCode: null, signal: null, error: startFailure(error, label, options.cwd) });
    });
    child.once('exit', (exitCode, signal) => {
      hasExited = true;
      resolve({ exitCode, signal });
    });
  });
  // A child killed mid-write makes its pipes fail; the exit reports what happened.
  child.stdin!.on('error', () => undefined);
  child.stdout!.on('error', () => undefined);
  child.stderr?.on('error', () => undefined);
  if (child.pid !== undefined) track(child, child.pid);
  const kill = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    if (!hasExited && child.pid !== undefined) signalGroup(child.pid, signal);
  };
  return {
    pid: child.pid,
    stdin: child.stdin!,
    stdout: child.stdout!,
    stderr: child.stderr,
    exited,
    get hasExited() {
      return hasExited;
    },
    kill,
    async terminate(graceMs = DEFAULT_KILL_GRACE_MS) {
      kill('SIGTERM');
      const timer = setTimeout(() => kill('SIGKILL'), graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/**
 * Stops every child still running: SIGTERM to each process group, SIGKILL to the groups still
 * there after `graceMs`, and resolves once every child has exited and been reaped by this process
 * (no zombies left for init). runServer calls it on shutdown, after the server's own close.
 */
export async function terminateAllProcesses(graceMs = DEFAULT_KILL_GRACE_MS): Promise<void> {
  // Children started while earlier ones were being stopped (a request still in flight) are stopped too.
  for (let round = 0; live.size > 0 && round < 10; round++) {
    const batch = [...live];
    for (const child of batch) {
      child.onShutdown?.();
      signalGroup(child.pgid, 'SIGTERM');
    }
    const allExited = Promise.all(batch.map((child) => child.exited));
    if (!(await settlesWithin(allExited, graceMs))) {
      for (const child of batch) if (!child.hasExited) signalGroup(child.pgid, 'SIGKILL');
      await settlesWithin(allExited, KILL_WAIT_MS);
    }
  }
  await guard.stop();
}

function startChild(command: string, args: readonly string[], options: ChildEnvironmentOptions, label: string, stdio: ['pipe' | 'ignore', 'pipe', 'pipe' | 'inherit' | 'ignore']): ChildProcess {
  if (typeof command !== 'string' || command === '') throw new TypeError('The command must be a non-empty string.');
  if ([command, ...args].some((arg) => arg.includes('\0'))) {
    // A NUL cannot be passed to exec(); hostile input should fail as the caller's mistake, not crash.
    throw ToolError.invalidArgument(`An argument for ${label} contains a NUL character, which a program cannot receive.`);
  }
  try {
    return spawn(command, [...args], {
      cwd: options.cwd,
      env: childEnvironment(options),
      // Its own session and process group: kill(-pid) then reaches every process it starts, and
      // it has no controlling terminal on which to prompt for a password and hang.
      detached: true,
      shell: false,
      stdio,
      windowsHide: true,
    });
  } catch (error) {
    // Node's own argument checks (ERR_INVALID_ARG_TYPE, …) are mistakes of the calling code.
    if ((error as NodeJS.ErrnoException).code?.startsWith('ERR_')) throw error;
    throw startFailure(error as NodeJS.ErrnoException, label, options.cwd);
  }
}

/** The scrubbed environment: tokens and passwords of the server stay out of its children. */
function childEnvironment(options: ChildEnvironmentOptions): Record<string, string> {
  const passed = new Set(options.passEnv ?? []);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (KEPT_VARIABLES.has(name) || name.startsWith('LC_') || passed.has(name)) env[name] = value;
  }
  return { ...env, ...options.env };
}

function track(child: ChildProcess, pgid: number): Tracked {
  installExitHook();
  const entry: Tracked = { pgid, hasExited: false, exited: Promise.resolve() };
  guard.watch(pgid);
  entry.exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      entry.hasExited = true;
      live.delete(entry);
      guard.unwatch(pgid);
      // Node has reaped the leader; anything still in its group was left behind (a background
      // job of a script) and would outlive the command. It goes now.
      if (signalGroup(pgid, 0)) signalGroup(pgid, 'SIGKILL');
      resolve();
    });
  });
  live.add(entry);
  return entry;
}

/**
 * The watchdog that stops this process's children when it dies without a word (SIGKILL, the OOM
 * killer, a crash in native code). The children lead process groups of their own, so nothing of
 * the kernel's would stop them: re-parented to init, a query process ran on for a minute holding
 * SQLite's write lock. Node cannot ask for PR_SET_PDEATHSIG without native code; what it can do is
 * hold the only writing end of a pipe. The watchdog is one small `sh` per server process (no Node,
 * a few hundred kilobytes) reading that pipe: `+pgid` when a child starts, `-pgid` when it has
 * gone. When the pipe reaches end of input (this process has died, whatever the way, and the
 * kernel closed its end), it sends SIGKILL to every group still on its list and exits. It ignores
 * the terminal's signals, so a Ctrl-C that reaches the whole foreground group leaves it to do its
 * job. A group number cannot be reused while any member of the group lives, so a listed group
 * that is still there is still ours.
 */
const GUARD_SCRIPT = `trap '' INT TERM HUP QUIT PIPE
set --
while IFS= read -r line; do
  case $line in
    +*) set -- "$@" "\${line#+}" ;;
    -*) p=\${line#-}; n=$#; while [ "$n" -gt 0 ]; do x=$1; shift; [ "$x" = "$p" ] || set -- "$@" "$x"; n=$((n-1)); done ;;
  esac
done
for p in "$@"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "-$p" 2>/dev/null; done
`;

class ChildGuard {
  private watchdog: ChildProcess | undefined;
  private readonly watched = new Set<number>();
  private unavailable = process.platform === 'win32';

  /** The watchdog's pid (for tests), undefined before the first child or where there is none. */
  get pid(): number | undefined {
    return this.watchdog?.pid;
  }

  watch(pgid: number): void {
    this.watched.add(pgid);
    this.send(`+${pgid}\n`);
  }

  unwatch(pgid: number): void {
    if (this.watched.delete(pgid)) this.send(`-${pgid}\n`);
  }

  /**
   * Ends the watchdog (the server is shutting down and has stopped its children): it reads end of
   * input, kills any group still listed, and exits; waiting for that lets this process reap it, so
   * a clean exit leaves no process, not even a zombie, for init. The next child starts a new one.
   */
  async stop(waitMs = 500): Promise<void> {
    const watchdog = this.watchdog;
    if (!watchdog) return;
    this.watchdog = undefined;
    const exited = new Promise<void>((resolve) => {
      if (watchdog.exitCode !== null || watchdog.signalCode !== null) resolve();
      else watchdog.once('exit', () => resolve());
    });
    watchdog.stdin?.end();
    await settlesWithin(exited, waitMs);
  }

  private send(line: string): void {
    const watchdog = this.start();
    watchdog?.stdin?.write(line);
  }

  /** The running watchdog, started (or restarted, with every group still listed) when needed. */
  private start(): ChildProcess | undefined {
    if (this.watchdog || this.unavailable) return this.watchdog;
    let watchdog: ChildProcess;
    try {
      // Not detached: it stays in the server's group and needs no stop of its own; the server's
      // environment is not its business either.
      watchdog = spawn('/bin/sh', ['-c', GUARD_SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    } catch {
      this.unavailable = true;
      return undefined;
    }
    if (watchdog.pid === undefined) {
      this.unavailable = true;
      watchdog.on('error', () => undefined);
      return undefined;
    }
    this.watchdog = watchdog;
    watchdog.on('error', () => undefined);
    watchdog.stdin!.on('error', () => undefined);
    // Someone killed it: the next child starts a new one, which learns every group still listed.
    watchdog.once('exit', () => {
      if (this.watchdog === watchdog) this.watchdog = undefined;
    });
    // Neither the watchdog nor its pipe may keep the server's event loop alive.
    watchdog.unref();
    (watchdog.stdin as unknown as { unref?: () => void }).unref?.();
    if (this.watched.size > 0) watchdog.stdin!.write([...this.watched].map((pgid) => `+${pgid}\n`).join(''));
    return watchdog;
  }
}

const guard = new ChildGuard();

/** The pid of the watchdog that stops this process's children if it dies (see ChildGuard); for tests. */
export function childGuardPid(): number | undefined {
  return guard.pid;
}

/** If the server exits without shutting down (an uncaught error, a hard exit timer), its children do not outlive it. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of live) signalGroup(child.pgid, 'SIGKILL');
  });
}

/** Sends a signal to a process group; false when the group no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  // kill(-1) would signal every process we may signal, kill(-0) our own group: never.
  if (!Number.isInteger(pgid) || pgid <= 1) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolves once no process of the group is alive. The leader is gone by now; members it left were
 * sent SIGKILL when it exited, and a killed process may take a moment to be scheduled and die.
 * Dead members waiting for init to reap them (zombies) do not count.
 */
async function groupGone(pgid: number): Promise<void> {
  if (!signalGroup(pgid, 0)) return;
  const deadline = performance.now() + KILL_WAIT_MS;
  while (livingMembers(pgid) > 0 && performance.now() < deadline) {
    signalGroup(pgid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Members of a process group that are not zombies, from /proc (0 where there is no /proc to read). */
function livingMembers(pgid: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  let count = 0;
  for (const entry of entries) {
    if (entry.charCodeAt(0) < 48 || entry.charCodeAt(0) > 57) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses; the fields after the last ')' are fixed.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') count++;
    } catch {
      // It exited while we looked.
    }
  }
  return count;
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([promise.then(() => true), timedOut]);
  clearTimeout(timer);
  return settled;
}

/** Collects one output stream up to its cap; everything after the cap is dropped. */
class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  /** Returns true the moment the cap is passed (once). */
  push(chunk: Buffer): boolean {
    if (this.truncated) return false;
    const room = this.cap - this.size;
    if (chunk.length <= room) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return false;
    }
    if (room > 0) this.chunks.push(chunk.subarray(0, room));
    this.size = this.cap;
    this.truncated = true;
    return true;
  }

  text(): string {
    const bytes = Buffer.concat(this.chunks, this.size);
    if (!this.truncated) return bytes.toString('utf8');
    return `${bytes.subarray(0, completeUtf8Length(bytes)).toString('utf8')}\n[… output truncated at ${formatBytes(this.cap)}]`;
  }
}

/**
 * The length of the longest prefix that does not end inside a multi-byte UTF-8 character: a cut
 * in the middle of one would decode as U+FFFD. Invalid bytes are left for the decoder.
 */
function completeUtf8Length(bytes: Uint8Array): number {
  const end = bytes.length;
  let lead = end - 1;
  // Continuation bytes (10xxxxxx) at the end belong to the character whose lead byte precedes them.
  while (lead >= 0 && end - lead <= 4 && ((bytes[lead] ?? 0) & 0xc0) === 0x80) lead--;
  if (lead < 0) return end;
  const first = bytes[lead] ?? 0;
  const length = first >= 0xf0 ? 4 : first >= 0xe0 ? 3 : first >= 0xc0 ? 2 : 1;
  return lead + length > end ? lead : end;
}

function startFailure(error: NodeJS.ErrnoException, label: string, cwd: string | undefined): ToolError {
  // A missing working directory is reported as ENOENT for the command too: tell the two apart.
  if ((error.code === 'ENOENT' || error.code === 'ENOTDIR') && cwd !== undefined && !isDirectory(cwd)) {
    return ToolError.notFound(`${label} could not be started: its working directory does not exist.`);
  }
  switch (error.code) {
    case 'ENOENT':
      return ToolError.unavailable(`${label} is not installed or not on PATH.`);
    case 'EACCES':
    case 'EPERM':
      return ToolError.unavailable(`${label} could not be started: permission denied (is it an executable file?).`);
    case 'EAGAIN':
    case 'EMFILE':
    case 'ENFILE':
    case 'ENOMEM':
      return ToolError.unavailable(`${label} could not be started: the system is out of processes or open files. Try again in a moment.`);
    default:
      return ToolError.unavailable(`${label} could not be started (${error.code ?? 'unknown error'}).`);
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

/** The program's file name: a configured absolute path is the operator's business, not the model's. */
function labelFor(command: string): string {
  return path.basename(command) || command;
}

function positiveLimit(ms: number, name: string): number {
  // setTimeout treats anything above 2^31 - 1 (and Infinity) as 1 ms.
  if (!Number.isFinite(ms) || ms <= 0 || ms > 2 ** 31 - 1) throw new RangeError(`${name} must be between 1 and ${2 ** 31 - 1} ms, got ${ms}.`);
  return ms;
}

function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

