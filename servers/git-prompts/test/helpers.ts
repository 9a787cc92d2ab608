import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectInProcess, type ClientOptions, type TestSession } from '@suite/test-kit';
import type { ChangeHub } from '@suite/shared';
import { DEFAULT_BUDGET, DEFAULTS, Workspace, buildServer, type GitPromptsConfig } from '../src/server.js';

export const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

/** git as a test runs it to set up fixtures: the test's home, fixed dates, no system configuration. */
export function git(cwd: string, args: string[], options: { env?: Record<string, string>; input?: string } = {}): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    input: options.input ?? '',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_DATE: '2024-05-01T12:00:00Z', GIT_COMMITTER_DATE: '2024-05-01T12:00:00Z', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Writes files (creating directories) relative to a directory. */
export function writeFiles(dir: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content);
  }
}

/** A repository with a first commit of `files`. */
export function makeRepo(dir: string, files: Record<string, string | Buffer> = { 'README.md': '# app\n' }, message = 'Initial commit'): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ['init', '--quiet', '--initial-branch=main']);
  writeFiles(dir, files);
  git(dir, ['add', '--all']);
  git(dir, ['commit', '--quiet', '--message', message]);
  return dir;
}

export function commit(dir: string, files: Record<string, string | Buffer>, message: string, date = '2024-05-02T12:00:00Z'): string {
  writeFiles(dir, files);
  git(dir, ['add', '--all']);
  git(dir, ['commit', '--quiet', '--message', message], { env: { GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date } });
  return git(dir, ['rev-parse', 'HEAD']).trim();
}

export function config(directories: string[], overrides: Partial<GitPromptsConfig> = {}): GitPromptsConfig {
  return { directories, aliases: [], budget: DEFAULT_BUDGET, timeoutMs: DEFAULTS.timeoutMs, scanDepth: DEFAULTS.scanDepth, safeDirectories: [], gitBinary: 'git', ...overrides };
}

export interface OpenOptions extends ClientOptions {
  allowWrite?: boolean;
  config?: Partial<GitPromptsConfig>;
  changes?: ChangeHub;
}

/** An in-process session against a server over these directories. */
export async function open(directories: string[], options: OpenOptions = {}): Promise<TestSession> {
  const workspace = new Workspace(config(directories, options.config));
  const { allowWrite, config: _config, changes, ...client } = options;
  return connectInProcess(buildServer(workspace, { selection: { readOnly: !allowWrite }, ...(changes ? { changes } : {}) }), client);
}
