import { execFileSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTempDir, protocolError, spawnServer, waitUntil, type TestSession } from '@suite/test-kit';
import { DEFAULT_BUDGET } from '../src/server.js';
import { BIN, git, makeRepo, open, writeFiles } from './helpers.js';

/**
 * The processes (zombies aside) whose working directory is inside `dir`. Every git call runs in
 * its repository, so after a call has been answered this is whatever of it is still alive.
 */
function processesIn(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cwd = readlinkSync(`/proc/${entry}/cwd`);
      if (cwd !== dir && !cwd.startsWith(`${dir}/`)) continue;
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.charAt(stat.lastIndexOf(')') + 2);
      if (state === 'Z' || state === 'X') continue;
      found.push(`${entry} ${readFileSync(`/proc/${entry}/comm`, 'utf8').trim()}`);
    } catch {
      // It exited while we looked.
    }
  }
  return found;
}

const gitRunning = (dir: string) => (): boolean => processesIn(dir).some((p) => p.endsWith(' git'));

/**
 * A FIFO in place of the HEAD commit's object: every command that reads it (log, status, diff)
 * blocks opening it, as on a hung network filesystem, while discovery (which reads no object)
 * still works. The include.path variant blocks discovery itself. (An alternates file that is a FIFO
 * is refused before git runs: see the object-store check.) Returns what puts the object back.
 */
function hangObjectReads(repo: string): () => void {
  const oid = git(repo, ['rev-parse', 'HEAD']).trim();
  const file = path.join(repo, '.git', 'objects', oid.slice(0, 2), oid.slice(2));
  const content = readFileSync(file);
  rmSync(file);
  execFileSync('mkfifo', [file]);
  return () => {
    rmSync(file);
    writeFileSync(file, content);
  };
}
function hangConfigReads(repo: string): void {
  execFileSync('mkfifo', [path.join(repo, '.git', 'hang')]);
  git(repo, ['config', 'include.path', 'hang']);
}

describe('git time limit, cancellation and output cap', () => {
  let base: string;
  let repo: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;

  beforeEach(async () => {
    const made = await makeTempDir('git-prompts-limits-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
    repo = makeRepo(path.join(base, 'app'), { 'src/a.ts': 'export const a = 1;\n' });
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await cleanup();
  });

  it('stops a git that hangs at the --timeout limit, says so, leaves no git running, and serves on', async () => {
    const release = hangObjectReads(repo);
    session = await spawnServer(BIN, ['--timeout', '1', repo]);
    const log = await session.callTool('git_log');
    expect(log).toMatchObject({
      isError: true,
      text: 'git did not finish within 1 s (its time limit) and was stopped. Try a smaller request, or a longer time limit if the server allows one.',
    });
    expect(processesIn(repo)).toEqual([]);
    // Resources and prompts report the same as a timeout (-32001), not as the client's mistake.
    expect(await protocolError(session.readResource('git://app/status'))).toMatchObject({ code: -32001, data: { kind: 'timeout' } });
    expect(await protocolError(session.getPrompt('git-commit'))).toMatchObject({ code: -32001, data: { kind: 'timeout' } });
    // The prompt runs two git calls side by side: the answer leaves with the first timeout, and the
    // other, started at the same moment with the same 1 s limit, is stopped at its own.
    await waitUntil(() => processesIn(repo).length === 0, { what: 'the prompt\'s second git call to be stopped too', timeoutMs: 10_000 });
    // Nothing stays stuck: once the repository is readable again, so are the answers.
    release();
    expect(await session.callTool('git_log')).toMatchObject({ isError: false, text: expect.stringContaining('Initial commit') });
  }, 60_000);

  it('stops a discovery that hangs (an include.path FIFO, the case the README leaves undefended) at the limit', async () => {
    hangConfigReads(repo);
    session = await spawnServer(BIN, ['--timeout', '1', repo]);
    expect(await session.callTool('git_status')).toMatchObject({ isError: true, text: expect.stringMatching(/^git did not finish within 1 s \(its time limit\) and was stopped\./) });
    expect(processesIn(repo)).toEqual([]);
  }, 60_000);

  it('stops git when the tool call is cancelled', async () => {
    session = await open([repo]);
    expect((await session.callTool('git_status')).isError).toBe(false);
    const release = hangObjectReads(repo);
    const controller = new AbortController();
    const call = session.callTool('git_log', {}, { signal: controller.signal });
    call.catch(() => undefined);
    await waitUntil(gitRunning(repo), { what: 'git log to be running', timeoutMs: 20_000 });
    controller.abort();
    await expect(call).rejects.toThrow();
    // The server's time limit is 30 s: git going away now is the cancellation's doing.
    await waitUntil(() => processesIn(repo).length === 0, { what: 'no git left after the cancellation', timeoutMs: 10_000 });
    release();
    expect((await session.callTool('git_log')).isError).toBe(false);
  }, 60_000);

  it('stops a shared discovery only when every call waiting for it was cancelled', async () => {
    hangConfigReads(repo);
    session = await open([repo]);
    const first = new AbortController();
    const second = new AbortController();
    const calls = [session.callTool('git_status', {}, { signal: first.signal }), session.callTool('git_log', {}, { signal: second.signal })];
    for (const call of calls) call.catch(() => undefined);
    await waitUntil(gitRunning(repo), { what: 'the discovery to be running', timeoutMs: 20_000 });
    first.abort();
    await expect(calls[0]).rejects.toThrow();
    // The other call still waits for it: the discovery goes on.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(gitRunning(repo)()).toBe(true);
    second.abort();
    await expect(calls[1]).rejects.toThrow();
    await waitUntil(() => processesIn(repo).length === 0, { what: 'no git left after both cancellations', timeoutMs: 10_000 });
  }, 60_000);

  it('stops git once a patch passes its output cap, and still answers within the budget', async () => {
    // 400 files of 8 KiB each: a 3 MiB patch, where the cap is 256 KiB.
    const line = (i: number, n: number): string => `export const value_${i}_${n} = '${'x'.repeat(80)}';\n`;
    writeFiles(repo, Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`src/gen/file${String(i).padStart(3, '0')}.ts`, Array.from({ length: 80 }, (_, n) => line(i, n)).join('')])));
    git(repo, ['add', '--all']);
    // A git that says how each call ended: stopped by a signal (the trap), or exited.
    const record = path.join(base, 'calls.log');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const wrapper = path.join(base, 'recording-git');
    writeFileSync(
      wrapper,
      [
        '#!/bin/bash',
        `trap 'echo "stopped $*" >> ${JSON.stringify(record)}; exit 143' TERM`,
        // In the background (so the trap runs at once), with stdin kept (cat-file --batch-check reads it).
        `${JSON.stringify(realGit)} "$@" <&0 &`,
        'wait $!',
        'code=$?',
        `echo "exited $code $*" >> ${JSON.stringify(record)}`,
        'exit $code',
        '',
      ].join('\n'),
    );
    chmodSync(wrapper, 0o755);
    session = await open([repo], { config: { gitBinary: wrapper, budget: { ...DEFAULT_BUDGET, perFileBytes: 4096, totalBytes: 16_384 } } });
    const { text } = await session.readResource('git://app/diff/staged');
    expect(Buffer.byteLength(text)).toBeLessThan(40_000);
    expect(text).toMatch(/^diff --git a\/src\/gen\/file000\.ts/);
    expect(text).toMatch(/# \d+ files past the size budget \(16 KiB for the whole diff\):/);
    const calls = readFileSync(record, 'utf8').trim().split('\n');
    const patch = calls.filter((c) => / diff --cached .* -p -U3 /.test(c));
    const lists = calls.filter((c) => / diff --cached .* --raw /.test(c));
    expect(patch, calls.join('\n')).toHaveLength(1);
    expect(patch[0]).toMatch(/^stopped /);
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) expect(list).toMatch(/^exited 0 /);
    expect(processesIn(repo)).toEqual([]);
  }, 60_000);
});

describe('git under many calls at once', () => {
  let base: string;
  let cleanup: () => Promise<void>;
  let session: TestSession | undefined;

  beforeEach(async () => {
    const made = await makeTempDir('git-prompts-load-');
    cleanup = made.cleanup;
    base = realpathSync(made.dir);
  });
  afterEach(async () => {
    await session?.close();
    session = undefined;
    await cleanup();
  });

  it('identical read calls queued together share one git run; each answer is right, and a call after a change sees it', async () => {
    const repo = makeRepo(path.join(base, 'app'), { 'src/a.ts': 'export const a = 1;\n' });
    const record = path.join(base, 'calls.log');
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const wrapper = path.join(base, 'recording-git');
    writeFileSync(wrapper, ['#!/bin/sh', `echo "$*" >> ${JSON.stringify(record)}`, `exec ${JSON.stringify(realGit)} "$@"`, ''].join('\n'));
    chmodSync(wrapper, 0o755);
    session = await open([repo], { config: { gitBinary: wrapper } });
    writeFiles(repo, { 'src/a.ts': 'export const a = 2;\n' });
    const alone = await session.callTool('git_status');
    expect(alone.text).toContain('src/a.ts');
    writeFileSync(record, '');

    const answers = await Promise.all(Array.from({ length: 300 }, () => session!.callTool('git_status')));
    expect(answers.every((a) => !a.isError && a.text === alone.text)).toBe(true);
    const statusRuns = readFileSync(record, 'utf8').split('\n').filter((line) => / status /.test(line)).length;
    // One run per turn at most (8 git processes at once on this machine): far fewer than 300.
    expect(statusRuns).toBeGreaterThan(0);
    expect(statusRuns).toBeLessThan(60);

    // A change made after those answers is in the next one: nothing is served from an earlier run.
    writeFiles(repo, { 'src/b.ts': 'export const b = 1;\n' });
    const after = await Promise.all(Array.from({ length: 50 }, () => session!.callTool('git_status')));
    for (const answer of after) expect(answer.text).toContain('src/b.ts');
  }, 120_000);
});
