import { promises as fs } from 'node:fs';
import path from 'node:path';
import { formatBytes, runProcess, ToolError, type ProcessResult } from '@suite/shared';
import { gitFailure } from './errors.js';
import { configArguments, isCommandKey, remoteCallConfig, parseConfigFile, parseConfigListing, readCallConfig, repositoryOverrides, writeCallConfig, type ConfigEntry, type ConfigPair } from './hardening.js';

/** Process-wide settings of every git call. */
export interface GitSettings {
  gitBinary: string;
  timeoutMs: number;
  safeDirectories: readonly string[];
  /** --allow-signing: a repository that asks for signed commits gets them, with the user's own signing program. */
  allowSigning?: boolean;
}

export interface GitCallOptions {
  /** The request's signal: cancelling the request stops git. */
  signal?: AbortSignal;
  input?: string;
  /** Per stream; past it git is stopped and the output ends with a marker (default 10 MiB). */
  maxOutputBytes?: number;
  okExitCodes?: readonly number[];
  timeoutMs?: number;
  /**
   * Writes only: a commit git would open an editor for (a merge's, a cherry-pick's or revert's
   * after a conflict) takes the message git prepared. GIT_EDITOR=":" is git's own "do not edit":
   * no program runs.
   */
  acceptMessage?: boolean;
  /** Writes only: the call talks to a remote (--allow-remote): only file, https and ssh, the user's ssh and credential helpers. */
  remote?: boolean;
}

/**
 * The environment of every call: no system configuration, no prompts, no pager, no editor, no
 * optional locks (a read never takes the index lock from the user's own git), English messages.
 * Everything else of the server's environment is already scrubbed by runProcess.
 */
const BASE_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  GIT_EDITOR: 'false',
  GIT_ATTR_NOSYSTEM: '1',
  // A partial clone would fetch a missing object from its promisor remote: no network, ever.
  GIT_NO_LAZY_FETCH: '1',
  LC_ALL: 'C',
};

/** Read calls ignore the user's global configuration too: their output is then the same for everyone. */
const READ_ENV: Record<string, string> = { ...BASE_ENV, GIT_CONFIG_GLOBAL: '/dev/null' };

/** Where a write call finds the user's global configuration and signing agents. */
const WRITE_PASS_ENV = ['XDG_CONFIG_HOME'];
const SIGNING_PASS_ENV = ['GNUPGHOME', 'SSH_AUTH_SOCK', 'GPG_AGENT_INFO'];

/**
 * Runs git with the hardening every call gets. `reads` marks a command that changes nothing: it
 * may share one git run with identical calls queued beside it (runProcess's shareQueued), which
 * keeps 1,000 concurrent `git status` calls from starting 1,000 processes.
 */
async function run(settings: GitSettings, args: readonly string[], pairs: readonly ConfigPair[], env: Record<string, string>, options: GitCallOptions & { cwd: string; passEnv?: string[]; reads: boolean }): Promise<ProcessResult> {
  const config = configArguments(pairs);
  return runProcess(settings.gitBinary, ['--no-pager', ...config.args, ...args], {
    cwd: options.cwd,
    env: { ...env, ...config.env },
    ...(options.passEnv ? { passEnv: options.passEnv } : {}),
    timeoutMs: options.timeoutMs ?? settings.timeoutMs,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.maxOutputBytes !== undefined ? { maxOutputBytes: options.maxOutputBytes } : {}),
    ...(options.okExitCodes ? { okExitCodes: options.okExitCodes } : {}),
    label: 'git',
    shareQueued: options.reads,
  });
}

/** The default cap of one git call's output (runProcess's default). */
export const DEFAULT_GIT_OUTPUT_BYTES = 10 * 1024 * 1024;

export function outputTooLarge(what: string, cap = DEFAULT_GIT_OUTPUT_BYTES): ToolError {
  return new ToolError(`${what} printed more than ${formatBytes(cap)}, so its output was cut and is not shown as if it were whole. Narrow the request (a path, a range, fewer entries).`, 'failed');
}

/**
 * The usable part of a call's stdout: without the cap's marker and, when the output was cut, without
 * the last record (which may be incomplete). `separator` ends each record ('\0' for -z output).
 */
export function cutOutput(result: Pick<ProcessResult, 'stdout' | 'truncated'>, separator: string): { text: string; cut: boolean } {
  if (!result.truncated.stdout) return { text: result.stdout, cut: false };
  const marker = result.stdout.lastIndexOf('\n[… output truncated');
  const body = marker === -1 ? result.stdout : result.stdout.slice(0, marker);
  const end = body.lastIndexOf(separator);
  return { text: end === -1 ? '' : body.slice(0, end + separator.length), cut: true };
}

/** What discovery found about a directory: the repository's real locations and its configuration. */
export interface Discovery {
  top: string;
  gitDir: string;
  commonDir: string;
  config: ConfigEntry[];
  /** What `otherConfiguration` found: entries that name programs, and every file and directory it looked at. */
  other: ConfigEntry[];
  otherFiles: string[];
  /**
   * Every object store git reads for this repository: its own `objects` (real path) and each
   * alternate (`objects/info/alternates`, followed as git does, alternates of alternates too).
   * `unreadable` names an alternates file git would block on or cannot read. The caller checks
   * that all of them lie inside the roots.
   */
  objectStores: string[];
  objectStoreFiles: string[];
  unreadableStores: boolean;
}

/** git follows alternates five levels deep. */
const MAX_ALTERNATE_DEPTH = 5;

/** One line of an alternates file: C-quoted (octal escapes are bytes of UTF-8) when it starts with `"`. */
function unquoteAlternate(line: string): string {
  if (!line.startsWith('"') || !line.endsWith('"') || line.length < 2) return line;
  const escapes: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
  const bytes: number[] = [];
  const body = [...line.slice(1, -1)];
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== '\\') {
      bytes.push(...Buffer.from(char, 'utf8'));
      continue;
    }
    const octal = /^[0-3][0-7]{2}/.exec(body.slice(i + 1, i + 4).join(''));
    if (octal) {
      bytes.push(Number.parseInt(octal[0], 8));
      i += 3;
    } else {
      const next = body[i + 1] ?? '';
      bytes.push(escapes[next] ?? next.charCodeAt(0));
      i += 1;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The object stores of a repository (see Discovery.objectStores). */
async function objectStores(commonDir: string): Promise<{ stores: string[]; files: string[]; unreadable: boolean }> {
  const stores: string[] = [];
  const files: string[] = [];
  let unreadable = false;
  const visit = async (objects: string, depth: number): Promise<void> => {
    const real = await fs.realpath(objects).catch(() => path.resolve(objects));
    if (stores.includes(real)) return;
    stores.push(real);
    const file = path.join(real, 'info', 'alternates');
    files.push(file);
    if (depth >= MAX_ALTERNATE_DEPTH) return;
    const stat = await fs.stat(file).catch(() => undefined);
    if (!stat) return;
    const text = stat.isFile() ? await fs.readFile(file, 'utf8').catch(() => undefined) : undefined;
    if (text === undefined) {
      unreadable = true;
      return;
    }
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      await visit(path.resolve(real, unquoteAlternate(line)), depth + 1);
    }
  };
  await visit(path.join(commonDir, 'objects'), 0);
  return { stores, files, unreadable };
}

/** Bounds of the search for other configuration files: a repository cannot make discovery slow with thousands of them. */
const MAX_OTHER_FILES = 200;
const MAX_MODULE_DEPTH = 8;
const INCLUDE_KEY = /^include(if\..*)?\.path$/i;

/**
 * Every configuration file a git started in this repository could read besides what its own
 * listing shows: files included under a condition that does not hold now (another branch, a
 * `hasconfig:` that a later edit makes true), the `config.worktree` of each worktree, and each
 * submodule's configuration under `<common dir>/modules` (nested ones too) with what it includes.
 * Each is read with `git config --file` (which runs nothing); what names a program is kept, so
 * that every call can override it whatever git ends up reading. `files` lists what was looked at
 * (existing or not), for noticing a change.
 */
async function otherConfiguration(
  settings: GitSettings,
  found: { top: string; gitDir: string; commonDir: string },
  listing: readonly ConfigEntry[],
  env: Record<string, string>,
  signal?: AbortSignal,
): Promise<{ entries: ConfigEntry[]; files: string[] }> {
  const seen = new Set<string>();
  const files: string[] = [];
  const entries: ConfigEntry[] = [];
  const home = process.env.HOME ?? '/';
  const includeTarget = (value: string, from: string): string | undefined => {
    if (value.startsWith('~/')) return path.join(home, value.slice(2));
    if (value.startsWith('%(prefix)/')) return undefined;
    return path.resolve(path.dirname(from), value);
  };
  const pending: string[] = [];
  for (const entry of listing) {
    if (!entry.value || !INCLUDE_KEY.test(entry.key) || !entry.origin.startsWith('file:')) continue;
    const target = includeTarget(entry.value, path.resolve(found.top, entry.origin.slice(5)));
    if (target) pending.push(target);
  }
  pending.push(path.join(found.commonDir, 'config.worktree'));
  const worktrees = await fs.readdir(path.join(found.commonDir, 'worktrees')).catch(() => [] as string[]);
  for (const id of worktrees) pending.push(path.join(found.commonDir, 'worktrees', id, 'config.worktree'));
  // Submodules' git directories: `modules/<name>` (a name may hold slashes), nested under each one's own `modules`.
  const modules = async (dir: string, depth: number): Promise<void> => {
    if (depth > MAX_MODULE_DEPTH || files.length >= MAX_OTHER_FILES) return;
    files.push(dir);
    const children = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    const isGitDir = children.some((c) => c.name === 'HEAD') && children.some((c) => c.name === 'config');
    if (isGitDir) {
      pending.push(path.join(dir, 'config'), path.join(dir, 'config.worktree'));
      for (const id of await fs.readdir(path.join(dir, 'worktrees')).catch(() => [] as string[])) pending.push(path.join(dir, 'worktrees', id, 'config.worktree'));
      await modules(path.join(dir, 'modules'), depth + 1);
      return;
    }
    for (const child of children) if (child.isDirectory()) await modules(path.join(dir, child.name), depth + 1);
  };
  await modules(path.join(found.commonDir, 'modules'), 0);

  while (pending.length > 0 && seen.size < MAX_OTHER_FILES) {
    const batch = pending.splice(0).filter((file) => !seen.has(file));
    for (const file of batch) seen.add(file);
    files.push(...batch);
    await Promise.all(
      batch.map(async (file) => {
        // A FIFO or a device would make `git config` wait: only regular files are read.
        const stat = await fs.stat(file).catch(() => undefined);
        if (!stat?.isFile()) return;
        const listed = await run(settings, ['config', '--file', file, '--list', '-z', '--no-includes'], readCallConfig(settings.safeDirectories), env, {
          cwd: found.top,
          reads: true,
          ...(signal ? { signal } : {}),
        });
        if (!listed.ok) return;
        if (listed.truncated.stdout) throw ToolError.invalidArgument(`A configuration file of this repository is larger than ${formatBytes(DEFAULT_GIT_OUTPUT_BYTES)} when listed, so it cannot be checked for programs it would run; it is not opened.`);
        for (const entry of parseConfigFile(listed.stdout, `file:${file}`)) {
          if (isCommandKey(entry.key)) entries.push(entry);
          else if (entry.value && INCLUDE_KEY.test(entry.key)) {
            const target = includeTarget(entry.value, file);
            if (target) pending.push(target);
          }
        }
      }),
    );
  }
  return { entries, files };
}

/**
 * Finds the repository a directory belongs to. `ceilings` stops git's upward search at the parents
 * of the roots, so a repository above every root (a dotfiles repository in the home directory) is
 * never even opened. Reading the configuration runs nothing; the caller checks containment.
 */
export async function discover(settings: GitSettings, dir: string, ceilings: readonly string[], signal?: AbortSignal): Promise<Discovery> {
  const env: Record<string, string> = { ...READ_ENV };
  // GIT_CEILING_DIRECTORIES is colon-separated: a root whose parent holds one cannot be listed.
  if (ceilings.length > 0 && ceilings.every((c) => !c.includes(':'))) env.GIT_CEILING_DIRECTORIES = ceilings.join(':');
  const pairs = readCallConfig(settings.safeDirectories);
  const located = await run(settings, ['rev-parse', '--path-format=absolute', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], pairs, env, {
    cwd: dir,
    reads: true,
    ...(signal ? { signal } : {}),
  });
  if (!located.ok) {
    if (/must be run in a work tree/.test(located.stderr)) throw ToolError.invalidArgument('This is a bare repository (it has no working tree); this server works with repositories that have one.');
    throw gitFailure(located, 'Opening the repository');
  }
  const [top, gitDir, commonDir] = located.stdout.replace(/\n$/, '').split('\n');
  if (!top || !gitDir || !commonDir) throw ToolError.invalidArgument('The repository path cannot be handled (it contains a line break).');
  const listing = await run(settings, ['config', '--list', '-z', '--show-scope', '--show-origin'], pairs, { ...env, GIT_DIR: gitDir, GIT_WORK_TREE: top }, {
    cwd: top,
    reads: true,
    ...(signal ? { signal } : {}),
  });
  if (!listing.ok) throw gitFailure(listing, 'Reading the repository configuration', { top, gitDir });
  // A listing cut short could hide a key naming a program, which would then go unneutralised.
  if (listing.truncated.stdout) throw ToolError.invalidArgument(`This repository's configuration is larger than ${formatBytes(DEFAULT_GIT_OUTPUT_BYTES)} when listed, so it cannot be checked for programs it would run; it is not opened.`);
  const config = parseConfigListing(listing.stdout);
  const other = await otherConfiguration(settings, { top, gitDir, commonDir }, config, { ...env, GIT_DIR: gitDir, GIT_WORK_TREE: top }, signal);
  const stores = await objectStores(commonDir);
  return { top, gitDir, commonDir, config, other: other.entries, otherFiles: other.files, objectStores: stores.stores, objectStoreFiles: stores.files, unreadableStores: stores.unreadable };
}

/**
 * A repository that passed discovery and the roots check. Every call runs with the work tree and
 * git directory pinned (no second discovery that could land elsewhere) and the overrides of
 * hardening.ts.
 */
export class GitRepository {
  private readonly readPairs: ConfigPair[];

  constructor(
    /** The name in git:// URIs. */
    readonly name: string,
    readonly top: string,
    readonly gitDir: string,
    readonly commonDir: string,
    config: readonly ConfigEntry[],
    /** Programs named by the repository's other configuration files (submodules, worktrees, conditional includes). */
    private readonly other: readonly ConfigEntry[],
    private readonly settings: GitSettings,
  ) {
    this.readPairs = [...readCallConfig(settings.safeDirectories), ...repositoryOverrides([...config, ...other])];
  }

  /** The git program, for a command git itself starts (a local remote's pack programs). */
  get gitBinary(): string {
    return this.settings.gitBinary;
  }

  private pinned(env: Record<string, string>): Record<string, string> {
    return { ...env, GIT_DIR: this.gitDir, GIT_WORK_TREE: this.top };
  }

  /** A read call: the repository's configuration with every program it names neutralised, no global configuration. */
  run(args: readonly string[], options: GitCallOptions = {}): Promise<ProcessResult> {
    return run(this.settings, args, this.readPairs, this.pinned(READ_ENV), { ...options, cwd: this.top, reads: true });
  }

  /**
   * A read call whose failure is an error for the user; resolves with all of stdout. Output past
   * the cap is never returned as if it were whole: that is an error saying so (callers that can
   * use a part say so themselves, with `run` and `cutOutput`).
   */
  async read(args: readonly string[], what: string, options: GitCallOptions = {}): Promise<string> {
    const result = await this.run(args, options);
    if (!result.ok) throw this.failure(result, what);
    if (result.truncated.stdout) throw outputTooLarge(what, options.maxOutputBytes);
    return result.stdout;
  }

  /**
   * A write call: the user's global configuration is read (identity, signing, their filters) and
   * the repository's programs are still overridden. The configuration is listed again first, so
   * an edit made since the last call cannot slip through.
   */
  async write(args: readonly string[], what: string, options: GitCallOptions = {}): Promise<ProcessResult & { unsignedAsked: boolean }> {
    const writeEnv = this.pinned(options.acceptMessage ? { ...BASE_ENV, GIT_EDITOR: ':' } : BASE_ENV);
    const listing = await run(this.settings, ['config', '--list', '-z', '--show-scope', '--show-origin'], readCallConfig(this.settings.safeDirectories), writeEnv, {
      cwd: this.top,
      passEnv: WRITE_PASS_ENV,
      reads: true,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!listing.ok) throw this.failure(listing, what);
    if (listing.truncated.stdout) throw outputTooLarge(`${what}: listing the configuration`);
    const entries = [...parseConfigListing(listing.stdout), ...this.other];
    const { pairs: writePairs, signs, unsignedAsked } = writeCallConfig(entries, this.settings.safeDirectories, this.settings.gitBinary, this.settings.allowSigning);
    // git keeps the first remote.<name>.uploadpack/receivepack it reads (the repository's) and fails on a second
    // one: a remote call leaves them out and the tool passes --upload-pack/--receive-pack, which outrank them.
    const pairs = options.remote ? [...writePairs.filter((p) => !/^remote\..+\.(uploadpack|receivepack)$/i.test(p.key)), ...remoteCallConfig(entries)] : writePairs;
    const result = await run(this.settings, args, pairs, writeEnv, { ...options, cwd: this.top, passEnv: [...WRITE_PASS_ENV, ...(signs ? SIGNING_PASS_ENV : []), ...(options.remote ? ['SSH_AUTH_SOCK'] : [])], reads: false });
    // Whether a commit it made is unsigned although the repository asks for signed commits (no --allow-signing).
    return { ...result, unsignedAsked };
  }

  failure(result: Pick<ProcessResult, 'stderr' | 'exitCode'>, what: string): ToolError {
    return gitFailure(result, what, { top: this.top, gitDir: this.gitDir });
  }
}
