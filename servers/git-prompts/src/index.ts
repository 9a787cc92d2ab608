#!/usr/bin/env node
import { ChangeHub, integerFlag, resolveCliDirectories, runProcess, runServer, UsageError } from '@suite/shared';
import { DEFAULT_BUDGET, DEFAULT_EXCLUDES, DEFAULTS, TOOLSETS, type GitPromptsConfig } from './config.js';
import { VERSION, Workspace, buildServer } from './server.js';

/**
 * The user's own `safe.directory` entries (global configuration): read calls do not read that file,
 * so they are handed to git explicitly. Read once at start-up, without a repository.
 */
async function userSafeDirectories(gitBinary: string): Promise<string[]> {
  try {
    const result = await runProcess(gitBinary, ['config', '--global', '--get-all', 'safe.directory'], {
      cwd: '/',
      env: { GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', GIT_CEILING_DIRECTORIES: '/' },
      passEnv: ['XDG_CONFIG_HOME'],
      okExitCodes: [0, 1],
      timeoutMs: 10_000,
    });
    // Ten MiB of safe.directory entries is no real configuration; a cut list would drop the last ones silently.
    if (result.truncated.stdout) throw new Error('safe.directory list cut');
    return result.stdout.split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

await runServer({
  bin: 'mcp-server-git-prompts',
  packageName: '@suite/server-git-prompts',
  version: VERSION,
  description: 'prompts, git:// resources and hardened tools for the git repositories you allow',
  usage: '[--allow-write] [--allow-remote] [REPO_OR_DIR...]',
  writes: 'read-only',
  toolsets: TOOLSETS,
  envPrefix: 'GIT_PROMPTS',
  flags: {
    exclude: { type: 'string', multiple: true, valueName: 'GLOB', description: 'Leave files matching this git glob out of diffs too (repeatable), e.g. "**/*.svg".' },
    'no-default-excludes': { type: 'boolean', description: 'Show lock files and generated files in diffs (they are left out by default).' },
    'file-budget': { type: 'string', valueName: 'KIB', description: `Most of one file's diff shown (default ${DEFAULT_BUDGET.perFileBytes / 1024} KiB).` },
    'diff-budget': { type: 'string', valueName: 'KIB', description: `Most of a whole diff shown (default ${DEFAULT_BUDGET.totalBytes / 1024} KiB).` },
    timeout: { type: 'string', valueName: 'SECONDS', description: `Time limit of one git command (default ${DEFAULTS.timeoutMs / 1000}).` },
    'scan-depth': { type: 'string', valueName: 'N', description: `How deep below each directory to look for repositories (default ${DEFAULTS.scanDepth}; 0: the directories themselves).` },
    git: { type: 'string', valueName: 'PATH', description: 'The git program (default: git on PATH).' },
    'allow-author': { type: 'boolean', description: 'git_commit takes an author ("Name <email>") other than your own identity (you stay the committer).' },
    'allow-signing': { type: 'boolean', description: "Sign commits when the repository asks for it (commit.gpgSign), with your own signing program; without it such commits are made unsigned, and the answer says so." },
    'allow-remote': { type: 'boolean', description: 'Also register git_fetch, git_pull and git_push (with --allow-write): named remotes, file://, https:// and ssh:// only.' },
  },
  positionals: { name: 'REPO_OR_DIR', min: 0 },
  environment: [{ name: 'GIT_PROMPTS_ALLOW_WRITE', description: 'Set to 1 for --allow-write.' }],
  examples: [
    'mcp-server-git-prompts ~/code/app',
    'mcp-server-git-prompts --allow-write ~/code          # every repository up to two levels below ~/code',
    'mcp-server-git-prompts --exclude "**/*.svg" --diff-budget 128 .',
  ],
  async prepare({ flags, positionals, selection }) {
    let directories: string[];
    try {
      directories = await resolveCliDirectories(positionals);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    const gitBinary = flags.git ?? DEFAULTS.gitBinary;
    const probe = await runProcess(gitBinary, ['--version'], { timeoutMs: 10_000 }).catch(() => undefined);
    if (!probe?.ok) throw new Error(`${gitBinary} could not be run: install git, or give its path with --git.`);
    // --end-of-options, --path-format, config --show-scope and GIT_CONFIG_COUNT: the hardening needs all four.
    const [major = 0, minor = 0] = (/(\d+)\.(\d+)/.exec(probe.stdout) ?? []).slice(1).map(Number);
    if (major < 2 || (major === 2 && minor < 31)) throw new Error(`git 2.31 or newer is needed; ${probe.stdout.trim() || 'this git'} is too old.`);
    const exclude = [...(flags['no-default-excludes'] ? [] : DEFAULT_EXCLUDES), ...(flags.exclude ?? [])];
    const config: GitPromptsConfig = {
      directories,
      aliases: positionals,
      budget: {
        perFileBytes: integerFlag(flags['file-budget'], 'file-budget', DEFAULT_BUDGET.perFileBytes / 1024, { min: 1, max: 10_240 }) * 1024,
        totalBytes: integerFlag(flags['diff-budget'], 'diff-budget', DEFAULT_BUDGET.totalBytes / 1024, { min: 1, max: 102_400 }) * 1024,
        exclude,
      },
      timeoutMs: integerFlag(flags.timeout, 'timeout', DEFAULTS.timeoutMs / 1000, { min: 1, max: 3600 }) * 1000,
      scanDepth: integerFlag(flags['scan-depth'], 'scan-depth', DEFAULTS.scanDepth, { min: 0, max: 5 }),
      safeDirectories: await userSafeDirectories(gitBinary),
      gitBinary,
      allowRemote: flags['allow-remote'] === true,
      allowAuthor: flags['allow-author'] === true,
      allowSigning: flags['allow-signing'] === true,
    };
    const workspace = new Workspace(config);
    const changes = new ChangeHub();
    return {
      createSession: (session) => buildServer(workspace, { selection, session, changes }),
      close: () => changes.close(),
    };
  },
});
