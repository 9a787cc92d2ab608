import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../src/core/progress.js';
import { MAX_CONCURRENT_PROCESSES, childGuardPid, processCounts, runProcess, spawnManaged, terminateAllProcesses } from '../src/process/process.js';
import { ToolError } from '../src/core/errors.js';
import { descendantsOf, expectAllGone, waitUntil, type ProcessIdentity } from '@suite/test-kit';

/** The server's watchdog among its children: the `sh -c` whose script reads the pipe. */
function childGuardPidOf(children: readonly ProcessIdentity[]): number | undefined {
  return children.find((c) => c.command.startsWith('/bin/sh -c') && c.command.includes('read -r line'))?.pid;
}

const NODE = process.execPath;
const PROBE_BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'process-bin.mjs');

/** State, parent and process group of a pid, from /proc; undefined once it has no entry (reaped). */
function procStat(pid: number): { state: string; ppid: number; pgrp: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** Running (not zombie) processes whose process group is `pgid`. */
function livingGroupMembers(pgid: number): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter((pid) => {
      const stat = procStat(pid);
      return stat !== undefined && stat.pgrp === pgid && stat.state !== 'Z';
    });
}

const isRunning = (pid: number): boolean => {
  const stat = procStat(pid);
  return stat !== undefined && stat.state !== 'Z';
};

/**
 * A shell script that records its own pid (the group leader) and its background child's pid in
 * `file` (written whole, by rename), then runs `rest`.
 */
function treeScript(file: string, rest: string, options: { ignoreTerm?: boolean } = {}): string[] {
  return ['-c', `${options.ignoreTerm ? 'trap "" TERM; ' : ''}sleep 100 & echo $$ $! > '${file}.tmp' && mv '${file}.tmp' '${file}'; ${rest}`];
}

async function pidsIn(file: string): Promise<{ leader: number; background: number }> {
  await waitUntil(() => existsSync(file), { what: `pids in ${path.basename(file)}`, timeoutMs: 20_000 });
  const [leader, background] = (await readFile(file, 'utf8')).trim().split(' ').map(Number);
  return { leader: leader!, background: background! };
}

/** The run failed with a ToolError of this kind whose message matches. */
async function expectToolError(run: Promise<unknown>, kind: string, message: RegExp): Promise<void> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ToolError);
  expect((error as ToolError).kind).toBe(kind);
  expect((error as ToolError).message).toMatch(message);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'suite-run-process-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

// Generous limits: the suite must pass on a loaded 2-core machine; no test asserts on speed.
describe('runProcess', { timeout: 60_000 }, () => {
  it('passes every argument to the program literally: no shell, no expansion', async () => {
    const pwned = path.join(dir, 'pwned');
    const hostile = [
      `--output=${path.join(dir, 'x')}`,
      `$(touch ${pwned})`,
      `\`touch ${pwned}\``,
      `; touch ${pwned}`,
      `&& touch ${pwned} ||`,
      `| touch ${pwned}`,
      '*',
      '~',
      '$HOME',
      '"quoted" \'single\'',
      'two words',
      'line\nbreak',
      '',
      '-e',
    ];
    // node's own `--` ends its options; everything after it is the script's argv.
    const result = await runProcess(NODE, ['-e', 'process.stdout.write(JSON.stringify(process.argv.slice(1)))', '--', ...hostile], { cwd: dir });
    expect(JSON.parse(result.stdout)).toEqual(hostile);
    // Even a shell receives them as data when they are arguments rather than its script.
    const viaSh = await runProcess('sh', ['-c', 'printf "%s\\n" "$@"', 'sh', ...hostile.slice(0, 7)], { cwd: dir });
    expect(viaSh.stdout).toBe(hostile.slice(0, 7).join('\n') + '\n');
    // And git (the program this is for) gets them exactly as given too.
    const git = await runProcess('git', ['rev-parse', '--sq-quote', ...hostile.slice(0, 4)], { cwd: dir });
    expect(git.stdout).toContain(`'--output=${path.join(dir, 'x')}'`);
    expect(git.stdout).toContain(`'$(touch ${pwned})'`);
    expect(existsSync(pwned)).toBe(false);
    expect(existsSync(path.join(dir, 'x'))).toBe(false);
  });

  it('refuses an argument with a NUL character as invalid, without starting anything', async () => {
    await expectToolError(runProcess(NODE, ['-e', '1', 'a\0b']), 'invalid_argument', /NUL/);
  });

  it('gives the child a scrubbed environment: no tokens or passwords of the server', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      GITHUB_TOKEN: 'ghp_this-must-not-leak',
      PGPASSWORD: 'pg-secret-must-not-leak',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      NODE_OPTIONS: '--no-warnings',
      LC_SUITE_TEST: 'kept',
      TZ: 'Europe/Berlin',
      SUITE_PASSED: 'passed through',
    });
    try {
      const printEnv = ['-e', 'process.stdout.write(JSON.stringify(process.env))'];
      const env = JSON.parse((await runProcess(NODE, printEnv, { passEnv: ['SUITE_PASSED'], env: { GIT_TERMINAL_PROMPT: '0', TZ: 'UTC' } })).stdout) as Record<string, string>;
      expect(env).not.toHaveProperty('GITHUB_TOKEN');
      expect(env).not.toHaveProperty('PGPASSWORD');
      expect(env).not.toHaveProperty('AWS_SECRET_ACCESS_KEY');
      expect(env).not.toHaveProperty('NODE_OPTIONS');
      expect(JSON.stringify(env)).not.toMatch(/must-not-leak|aws-secret/);
      expect(env).toMatchObject({ PATH: process.env.PATH, LC_SUITE_TEST: 'kept', SUITE_PASSED: 'passed through', GIT_TERMINAL_PROMPT: '0', TZ: 'UTC' });
      const allowed = new Set(['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'USER', 'SUITE_PASSED', 'GIT_TERMINAL_PROMPT']);
      expect(Object.keys(env).filter((name) => !allowed.has(name) && !name.startsWith('LC_'))).toEqual([]);
      // The same through a program that is not node, and for a long-lived child.
      const viaEnv = await runProcess('env', []);
      expect(viaEnv.stdout).not.toMatch(/GITHUB_TOKEN|PGPASSWORD|must-not-leak/);
      expect(viaEnv.stdout).toContain('LC_SUITE_TEST=kept');
      const managed = spawnManaged('env', [], { stderr: 'ignore' });
      let managedOut = '';
      managed.stdout.on('data', (chunk: Buffer) => (managedOut += chunk.toString()));
      managed.stdin.end();
      expect(await managed.exited).toMatchObject({ exitCode: 0 });
      await waitUntil(() => managedOut.includes('LC_SUITE_TEST=kept'), { what: 'the managed env output' });
      expect(managedOut).not.toMatch(/GITHUB_TOKEN|PGPASSWORD|must-not-leak/);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });

  it('writes input to stdin, and gives an empty stdin without it', async () => {
    const upper = ['-e', "let s='';process.stdin.setEncoding('utf8').on('data',d=>s+=d).on('end',()=>process.stdout.write(s.toUpperCase()))"];
    expect((await runProcess(NODE, upper, { input: 'héllo\nwörld' })).stdout).toBe('HÉLLO\nWÖRLD');
    expect((await runProcess(NODE, upper, { input: new TextEncoder().encode('bytes') })).stdout).toBe('BYTES');
    // cat would wait forever on an open terminal or pipe; it ends at once on the empty stdin.
    const cat = await runProcess('cat', [], { timeoutMs: 20_000 });
    expect(cat).toMatchObject({ ok: true, exitCode: 0, stdout: '' });
    // A program that exits without reading a large input is not an error.
    const ignoring = await runProcess('true', [], { input: 'x'.repeat(4 * 1024 * 1024) });
    expect(ignoring.ok).toBe(true);
  });

  it('reports exit codes and signals; okExitCodes decides what is ok', async () => {
    const failing = await runProcess('sh', ['-c', 'echo out; echo problem >&2; exit 3']);
    expect(failing).toMatchObject({ ok: false, exitCode: 3, signal: null, stdout: 'out\n', stderr: 'problem\n', truncated: { stdout: false, stderr: false } });
    expect(failing.durationMs).toBeGreaterThan(0);
    expect(await runProcess('sh', ['-c', 'exit 1'], { okExitCodes: [0, 1] })).toMatchObject({ ok: true, exitCode: 1 });
    expect(await runProcess('sh', ['-c', 'exit 0'], { okExitCodes: [1] })).toMatchObject({ ok: false, exitCode: 0 });
    expect(await runProcess('sh', ['-c', 'kill -KILL $$'])).toMatchObject({ ok: false, exitCode: null, signal: 'SIGKILL' });
  });

  it('says which command is missing, and tells a missing working directory apart', async () => {
    await expectToolError(runProcess('suite-no-such-command', ['--version']), 'unavailable', /^suite-no-such-command is not installed or not on PATH\.$/);
    await expectToolError(runProcess('/opt/nowhere/bin/git', []), 'unavailable', /^git is not installed or not on PATH\.$/);
    await expectToolError(runProcess('ls', [], { cwd: path.join(dir, 'no-such-dir') }), 'not_found', /ls could not be started: its working directory does not exist/);
    const notExecutable = path.join(dir, 'script.sh');
    await writeFile(notExecutable, '#!/bin/sh\necho hi\n');
    await chmod(notExecutable, 0o644);
    await expectToolError(runProcess(notExecutable, []), 'unavailable', /script\.sh could not be started: permission denied/);
    // Messages never show the directory of the command.
    await expectToolError(runProcess(notExecutable, []), 'unavailable', new RegExp(`^(?!.*${dir})`));
    const managed = spawnManaged('suite-no-such-command', []);
    const exit = await managed.exited;
    expect(managed.pid).toBeUndefined();
    expect(exit.error?.kind).toBe('unavailable');
    expect(exit.error?.message).toBe('suite-no-such-command is not installed or not on PATH.');
  });

  it('stops the whole process group at the time limit, grandchildren included', async () => {
    const file = path.join(dir, 'timeout-pids');
    const run = runProcess('sh', treeScript(file, 'sleep 100'), { timeoutMs: 1500 });
    const { leader, background } = await pidsIn(file);
    expect(procStat(background)?.pgrp).toBe(leader);
    expect(isRunning(background)).toBe(true);
    const startedAt = Date.now();
    await expectToolError(run, 'timeout', /^sh did not finish within 1\.5 s \(its time limit\) and was stopped\. Try a smaller request/);
    expect(Date.now() - startedAt).toBeLessThan(30_000);
    // When the promise settles nothing of the group runs any more, and the leader has been reaped.
    expect(livingGroupMembers(leader)).toEqual([]);
    expect(isRunning(background)).toBe(false);
    expect(procStat(leader)).toBeUndefined();
  });

  it('follows SIGTERM with SIGKILL for a group that ignores it', async () => {
    const file = path.join(dir, 'stubborn-pids');
    const run = runProcess('sh', treeScript(file, 'sleep 100', { ignoreTerm: true }), { timeoutMs: 1000, killGraceMs: 300, label: 'stubborn job' });
    const { leader, background } = await pidsIn(file);
    await expectToolError(run, 'timeout', /^stubborn job did not finish within 1 s/);
    expect(livingGroupMembers(leader)).toEqual([]);
    expect(isRunning(background)).toBe(false);
    expect(procStat(leader)).toBeUndefined();
  });

  it('cancels through the AbortSignal: the group is stopped and CancelledError thrown', async () => {
    const file = path.join(dir, 'cancel-pids');
    const controller = new AbortController();
    const run = runProcess('sh', treeScript(file, 'sleep 100'), { signal: controller.signal });
    const { leader, background } = await pidsIn(file);
    controller.abort();
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(livingGroupMembers(leader)).toEqual([]);
    expect(isRunning(background)).toBe(false);
    expect(procStat(leader)).toBeUndefined();
  });

  it('does not start anything when the signal has already fired', async () => {
    const marker = path.join(dir, 'started-anyway');
    const controller = new AbortController();
    controller.abort();
    await expect(runProcess('touch', [marker], { signal: controller.signal })).rejects.toBeInstanceOf(CancelledError);
    // Give a wrongly started touch every chance to have run.
    await runProcess('true', []);
    expect(existsSync(marker)).toBe(false);
  });

  it('stops a program that does not stop writing once the cap is passed, and marks the cut', async () => {
    const yes = await runProcess('yes', [], { maxOutputBytes: 64 * 1024 });
    expect(yes.truncated).toEqual({ stdout: true, stderr: false });
    expect(yes.ok).toBe(true);
    expect(yes.signal).toBe('SIGTERM');
    expect(yes.stdout.endsWith('\n[… output truncated at 64 KiB]')).toBe(true);
    const kept = yes.stdout.slice(0, -'\n[… output truncated at 64 KiB]'.length);
    expect(kept).toBe('y\n'.repeat(32 * 1024));
    // The same for stderr, on its own cap; stdout is untouched by it.
    const noisy = await runProcess(NODE, ['-e', "process.stdout.write('fine');for(;;)process.stderr.write('e'.repeat(65536))"], { maxOutputBytes: 100_000 });
    expect(noisy.truncated).toEqual({ stdout: false, stderr: true });
    expect(noisy.stdout).toBe('fine');
    expect(noisy.stderr).toBe(`${'e'.repeat(100_000)}\n[… output truncated at 97.7 KiB]`);
    // Output of exactly the cap is complete, not truncated.
    const exact = await runProcess(NODE, ['-e', "process.stdout.write('z'.repeat(1024))"], { maxOutputBytes: 1024 });
    expect(exact).toMatchObject({ ok: true, stdout: 'z'.repeat(1024), truncated: { stdout: false, stderr: false } });
  });

  it('never splits a multi-byte character at the cap or between reads', async () => {
    // 2-, 3- and 4-byte characters; every cap from 1 to 12 bytes lands at each position inside one.
    for (const char of ['é', '€', '😀']) {
      const bytes = Buffer.byteLength(char);
      for (let cap = 1; cap <= 12; cap++) {
        const result = await runProcess(NODE, ['-e', `process.stdout.write(${JSON.stringify(char)}.repeat(10))`], { maxOutputBytes: cap });
        const kept = result.stdout.slice(0, result.stdout.indexOf('\n[… output truncated'));
        expect(kept, `${char} with a cap of ${cap}`).toBe(char.repeat(Math.floor(cap / bytes)));
        expect(result.stdout).not.toContain('\uFFFD');
      }
    }
    // A character whose bytes arrive in two separate writes (two pipe reads) stays whole.
    const split = await runProcess(NODE, ['-e', 'process.stdout.write(Buffer.from([0xe2, 0x82]));setTimeout(()=>process.stdout.write(Buffer.from([0xac, 0x0a])),200)']);
    expect(split.stdout).toBe('€\n');
  });

  it('kills what a command left running in its group when it exits', async () => {
    const file = path.join(dir, 'leftover-pids');
    const result = await runProcess('sh', treeScript(file, 'echo done'), { timeoutMs: 50_000 });
    expect(result).toMatchObject({ ok: true, stdout: 'done\n' });
    const { leader, background } = await pidsIn(file);
    expect(isRunning(background)).toBe(false);
    expect(livingGroupMembers(leader)).toEqual([]);
  });

  it(`keeps at most ${MAX_CONCURRENT_PROCESSES} children alive at once; the other runs wait their turn and all complete`, async () => {
    const runs = 3 * MAX_CONCURRENT_PROCESSES;
    let most = 0;
    // The watchdog that stops the children should this process die is not one of the runs.
    const children = (): number =>
      readFileSync(`/proc/self/task/${process.pid}/children`, 'utf8')
        .trim()
        .split(/\s+/)
        .filter((pid) => pid !== '' && Number(pid) !== childGuardPid()).length;
    const sampler = setInterval(() => {
      most = Math.max(most, children());
      expect(processCounts().running).toBeLessThanOrEqual(MAX_CONCURRENT_PROCESSES);
    }, 5);
    try {
      const pending = Array.from({ length: runs }, (_, i) => runProcess('sh', ['-c', `sleep 0.2; echo ${i}`]));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(processCounts()).toEqual({ running: MAX_CONCURRENT_PROCESSES, waiting: runs - MAX_CONCURRENT_PROCESSES });
      const results = await Promise.all(pending);
      expect(results.map((r) => r.stdout.trim())).toEqual(Array.from({ length: runs }, (_, i) => String(i)));
      // Each result's duration is its own run, not its wait.
      expect(Math.max(...results.map((r) => r.durationMs))).toBeLessThan(5000);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(MAX_CONCURRENT_PROCESSES);
    expect(processCounts()).toEqual({ running: 0, waiting: 0 });
  });

  it('cancels a run still waiting for its turn without starting it', async () => {
    const blockers = Array.from({ length: MAX_CONCURRENT_PROCESSES }, () => runProcess('sleep', ['0.5']));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'turn-'));
    try {
      const controller = new AbortController();
      const waiting = runProcess('sh', ['-c', `touch ${dir}/started`], { signal: controller.signal });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(processCounts().waiting).toBe(1);
      controller.abort();
      await expect(waiting).rejects.toBeInstanceOf(CancelledError);
      expect(processCounts().waiting).toBe(0);
      await Promise.all(blockers);
      expect(existsSync(path.join(dir, 'started'))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  describe('shareQueued', () => {
    /** Fills every turn with a sleeper, so the runs under test queue; resolves when they are done. */
    const occupyEveryTurn = (seconds: number): Promise<unknown> => Promise.all(Array.from({ length: MAX_CONCURRENT_PROCESSES }, () => runProcess('sleep', [String(seconds)])));
    /** A command that appends a line to `file` each time it really runs, and prints how many lines it holds. */
    const counting = (file: string): [string, string[]] => ['sh', ['-c', `echo run >> ${file}; wc -l < ${file}`]];

    it('identical runs queued together start one child and all get its result; a run that differs gets its own', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'share-'));
      try {
        const file = path.join(dir, 'runs');
        const [command, args] = counting(file);
        const blockers = occupyEveryTurn(0.3);
        const shared = Array.from({ length: 50 }, () => runProcess(command, args, { shareQueued: true }));
        const unshared = runProcess(command, args);
        const otherEnv = runProcess(command, args, { shareQueued: true, env: { DIFFERENT: '1' } });
        expect(processCounts().waiting).toBe(3);
        await blockers;
        const results = await Promise.all(shared);
        await Promise.all([unshared, otherEnv]);
        expect(new Set(results.map((r) => r.stdout.trim())).size).toBe(1);
        expect(results.every((r) => r.ok && r.exitCode === 0)).toBe(true);
        // Each caller has a result of its own: changing one leaves the others as they were.
        results[0]!.truncated.stdout = true;
        expect(results[1]!.truncated.stdout).toBe(false);
        expect((await readFile(file, 'utf8')).trim().split('\n')).toHaveLength(3);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('never joins a run that has already started: a later caller sees the state after its own request', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'share-'));
      try {
        const file = path.join(dir, 'runs');
        // Started at once (no queue), then a second identical call while the first still runs.
        const first = runProcess('sh', ['-c', `sleep 0.3; echo run >> ${file}; wc -l < ${file}`], { shareQueued: true });
        await new Promise((resolve) => setTimeout(resolve, 50));
        const second = runProcess('sh', ['-c', `sleep 0.3; echo run >> ${file}; wc -l < ${file}`], { shareQueued: true });
        expect([(await first).stdout.trim(), (await second).stdout.trim()]).toEqual(['1', '2']);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('one caller cancelling leaves the others their result; the run stops only when every caller has cancelled', async () => {
      const dir = await mkdtemp(path.join(os.tmpdir(), 'share-'));
      try {
        const file = path.join(dir, 'runs');
        const [command, args] = counting(file);
        const blockers = occupyEveryTurn(0.3);
        const cancelled = new AbortController();
        const kept = new AbortController();
        const a = runProcess(command, args, { shareQueued: true, signal: cancelled.signal });
        const b = runProcess(command, args, { shareQueued: true, signal: kept.signal });
        cancelled.abort();
        await expect(a).rejects.toBeInstanceOf(CancelledError);
        await blockers;
        expect((await b).stdout.trim()).toBe('1');

        const moreBlockers = occupyEveryTurn(0.3);
        const all = [new AbortController(), new AbortController()];
        const both = all.map((c) => runProcess(command, args, { shareQueued: true, signal: c.signal }));
        for (const c of all) c.abort();
        const outcomes = await Promise.allSettled(both);
        expect(outcomes.every((o) => o.status === 'rejected' && o.reason instanceof CancelledError)).toBe(true);
        expect(processCounts().waiting).toBe(0);
        await moreBlockers;
        // The abandoned run never started; a new identical call starts a run of its own.
        expect((await runProcess(command, args, { shareQueued: true })).stdout.trim()).toBe('2');
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    it('a failure reaches every caller that joined', async () => {
      const blockers = occupyEveryTurn(0.2);
      const runs = Array.from({ length: 3 }, () => runProcess('sh', ['-c', 'sleep 5'], { shareQueued: true, timeoutMs: 100, killGraceMs: 100 }));
      // Settled from the start: on a loaded machine the runs can fail before the blockers are done.
      const settled = Promise.allSettled(runs);
      await blockers;
      const outcomes = await settled;
      expect(outcomes.map((o) => (o.status === 'rejected' && o.reason instanceof ToolError ? o.reason.kind : o.status))).toEqual(['timeout', 'timeout', 'timeout']);
    });
  });

  it('runs git', async () => {
    const repo = path.join(dir, 'repo');
    const git = (args: string[]) => runProcess('git', args, { cwd: repo, env: { GIT_TERMINAL_PROMPT: '0', GIT_CONFIG_NOSYSTEM: '1' } });
    await runProcess('git', ['init', '-q', repo]);
    await writeFile(path.join(repo, 'a.txt'), 'hello\n');
    await git(['add', 'a.txt']);
    const commit = await git(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'first; $(touch x)']);
    expect(commit.ok).toBe(true);
    const log = await git(['log', '--format=%s']);
    expect(log.stdout).toBe('first; $(touch x)\n');
    // A hostile option-looking value after -- is a path to git, never an option.
    const hostile = await git(['log', '--format=%s', '--', `--output=${path.join(dir, 'git-output')}`]);
    expect(hostile.ok).toBe(true);
    expect(existsSync(path.join(dir, 'git-output'))).toBe(false);
    const bad = await git(['show', 'no-such-ref']);
    expect(bad.ok).toBe(false);
    expect(bad.exitCode).toBe(128);
    expect(bad.stderr).toMatch(/no-such-ref/);
  });
});

describe('spawnManaged', { timeout: 60_000 }, () => {
  it('talks over stdin and stdout, and kill() reaches the whole group', async () => {
    const child = spawnManaged(NODE, ['-e', "process.stdin.setEncoding('utf8').on('data',d=>process.stdout.write('echo:'+d))"]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stdin.write('one\n');
    await waitUntil(() => out === 'echo:one\n', { what: 'the echo' });
    expect(child.hasExited).toBe(false);
    expect(procStat(child.pid!)?.pgrp).toBe(child.pid);
    child.kill('SIGKILL');
    expect(await child.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect(child.hasExited).toBe(true);
    expect(procStat(child.pid!)).toBeUndefined();
    child.kill('SIGKILL'); // after exit: nothing to do, no error
  });

  it('terminate() escalates to SIGKILL after the grace and reaps the group', async () => {
    const file = path.join(dir, 'managed-pids');
    const child = spawnManaged('sh', treeScript(file, 'wait', { ignoreTerm: true }));
    const { leader, background } = await pidsIn(file);
    expect(leader).toBe(child.pid);
    expect(await child.terminate(300)).toEqual({ exitCode: null, signal: 'SIGKILL' });
    expect(procStat(leader)).toBeUndefined();
    await waitUntil(() => !isRunning(background), { what: 'the background sleep to die' });
  });
});

describe('terminateAllProcesses', { timeout: 60_000 }, () => {
  afterEach(async () => {
    await terminateAllProcesses(100);
  });

  it('stops every live child (TERM, then KILL after the grace) and reaps it', async () => {
    const runFile = path.join(dir, 'all-run');
    const politeFile = path.join(dir, 'all-polite');
    const stubbornFile = path.join(dir, 'all-stubborn');
    const run = runProcess('sh', treeScript(runFile, 'sleep 100'), { timeoutMs: 600_000 });
    const runOutcome = run.then(
      () => undefined,
      (e: unknown) => e,
    );
    const polite = spawnManaged('sh', treeScript(politeFile, 'wait'));
    const stubborn = spawnManaged('sh', treeScript(stubbornFile, 'wait', { ignoreTerm: true }));
    const trees = await Promise.all([pidsIn(runFile), pidsIn(politeFile), pidsIn(stubbornFile)]);

    await terminateAllProcesses(500);

    // Every leader is reaped by this process: no /proc entry left, not even a zombie.
    for (const { leader } of trees) expect(procStat(leader), `leader ${leader}`).toBeUndefined();
    expect(await polite.exited).toEqual({ exitCode: null, signal: 'SIGTERM' });
    expect(await stubborn.exited).toEqual({ exitCode: null, signal: 'SIGKILL' });
    const error = await runOutcome;
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).kind).toBe('unavailable');
    expect((error as ToolError).message).toBe('sh was stopped because the server is shutting down.');
    // The rest of each group got SIGKILL too; they are not our children, and on a loaded machine
    // the kernel may take a moment to finish them.
    for (const { leader, background } of trees) {
      await expect.poll(() => livingGroupMembers(leader), { timeout: 2_000 }).toEqual([]);
      expect(isRunning(background)).toBe(false);
    }
  });

  it('returns at once when there is nothing to stop', async () => {
    await terminateAllProcesses(60_000);
  });
});

describe('a server built with runServer', { timeout: 60_000 }, () => {
  /** Starts the probe server and waits until its two process trees are up. */
  async function startProbe(args: string[]) {
    const work = await mkdtemp(path.join(dir, 'probe-'));
    const child = spawn(NODE, [PROBE_BIN, ...args, work], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await waitUntil(() => /tree \d+ \d+\nrun \d+ \d+\n/.test(stderr), { what: 'the probe server to start its children', timeoutMs: 30_000 });
    const [, treeLeader, treeBackground, runLeader, runBackground] = /tree (\d+) (\d+)\nrun (\d+) (\d+)/.exec(stderr)!.map(Number);
    return { child, exited, pids: [treeLeader!, treeBackground!, runLeader!, runBackground!], leaders: [treeLeader!, runLeader!] };
  }

  it('stops and reaps its children when it shuts down', async () => {
    const probe = await startProbe([]);
    // runServer installs its signal handlers once it serves; an answer to initialize means it does.
    let stdout = '';
    probe.child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    probe.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '0' } } })}\n`);
    await waitUntil(() => stdout.includes('"id":1'), { what: 'the answer to initialize', timeoutMs: 30_000 });
    for (const pid of probe.pids) expect(isRunning(pid), `pid ${pid}`).toBe(true);
    for (const leader of probe.leaders) expect(procStat(leader)?.ppid).toBe(probe.child.pid);
    probe.child.kill('SIGTERM');
    expect(await probe.exited).toBe(0);
    // Reaped by the server before it exited: no entry left for init to collect.
    for (const leader of probe.leaders) expect(procStat(leader), `leader ${leader}`).toBeUndefined();
    for (const pid of probe.pids) expect(isRunning(pid), `pid ${pid}`).toBe(false);
  });

  it('does not leave its children running when it is killed with SIGKILL (no shutdown, no exit handler): all gone within 2 s', async () => {
    const probe = await startProbe([]);
    const children = descendantsOf(probe.child.pid!);
    // Both trees (sh and its background sleep, each), and the watchdog that outlives nothing.
    for (const pid of probe.pids) expect(children.map((c) => c.pid)).toContain(pid);
    expect(children.some((c) => c.pid === childGuardPidOf(children))).toBe(true);
    probe.child.kill('SIGKILL');
    await probe.exited;
    await expectAllGone(children, 2_000);
  });

  it('does not leave its children running even when it exits without shutting down', async () => {
    const probe = await startProbe(['--exit-now']);
    expect(await probe.exited).toBe(0);
    await waitUntil(() => probe.pids.every((pid) => !isRunning(pid)), { what: 'the children to die with the server' });
  });
});
