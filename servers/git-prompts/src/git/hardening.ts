/**
 * What keeps a hostile repository from running a command through git.
 *
 * A repository's own configuration (`.git/config`, `config.worktree`, anything it includes with
 * `include.path`) can name programs git runs on its behalf: an fsmonitor hook, a pager, diff and
 * filter drivers, hooks, a credential helper, a signing program. Cloning a repository is not
 * consent to run its programs, so every call overrides them on the command line, which outranks
 * every configuration file:
 *
 * 1. a fixed list of `-c` overrides for the keys git knows by name (core.fsmonitor, core.hooksPath,
 *    core.pager, ...), on every call;
 * 2. for the keys whose names the repository chooses (`filter.<driver>.clean`, `diff.<driver>.textconv`,
 *    `merge.<driver>.driver`, ...), the repository's configuration is listed once (reading it runs
 *    nothing) and each such key found is overridden with an empty value, through
 *    GIT_CONFIG_COUNT/KEY/VALUE (the same command-line scope as `-c`, and a key may hold `=`);
 * 3. the diff commands also get `--no-ext-diff --no-textconv`, so a driver named only in
 *    `.gitattributes` cannot matter either.
 *
 * The drivers of step 2 are collected from every configuration file a git started here could
 * read (repository.ts, `otherConfiguration`): the files the repository includes whatever their
 * condition, the other worktrees' `config.worktree`, and every submodule's own configuration under
 * `.git/modules`. On top of that, no git the server starts ever enters a submodule (the diff and
 * status commands ignore submodule work trees, `git add` stages a submodule by its commit only),
 * so no git runs with a submodule's configuration at all.
 */

/** One `name=value` override, in the command-line scope. */
export interface ConfigPair {
  key: string;
  value: string;
}

/** One entry of `git config --list -z --show-scope --show-origin`. */
export interface ConfigEntry {
  scope: string;
  origin: string;
  key: string;
  value: string | undefined;
}

/** Every call, read or write: programs and behaviours a repository may not choose. */
const ALWAYS: readonly ConfigPair[] = [
  { key: 'core.fsmonitor', value: 'false' },
  // A directory that cannot exist: no hook of the repository (or of the user) ever runs.
  { key: 'core.hooksPath', value: '/dev/null' },
  { key: 'core.pager', value: 'cat' },
  { key: 'core.editor', value: 'false' },
  { key: 'sequence.editor', value: 'false' },
  { key: 'core.askPass', value: 'false' },
  { key: 'core.sshCommand', value: 'false' },
  { key: 'credential.helper', value: '' },
  { key: 'protocol.allow', value: 'never' },
  { key: 'log.showSignature', value: 'false' },
  { key: 'tag.gpgSign', value: 'false' },
  // Submodules are not entered: a submodule's configuration would be read by a git we do not control.
  { key: 'submodule.recurse', value: 'false' },
  { key: 'status.submoduleSummary', value: 'false' },
  { key: 'diff.submodule', value: 'short' },
  // Porcelain diffs and status, and the `git status` a `git add` starts inside a submodule, never look into submodule work trees.
  { key: 'diff.ignoreSubmodules', value: 'dirty' },
  // No background maintenance (gc --auto runs a pre-auto-gc hook and long work after a commit).
  { key: 'gc.auto', value: '0' },
  { key: 'maintenance.auto', value: 'false' },
  // Output this server parses.
  { key: 'color.ui', value: 'never' },
  { key: 'core.quotePath', value: 'false' },
  { key: 'i18n.logOutputEncoding', value: 'UTF-8' },
  { key: 'diff.noprefix', value: 'false' },
  { key: 'diff.mnemonicPrefix', value: 'false' },
  { key: 'diff.relative', value: 'false' },
  { key: 'diff.orderFile', value: '/dev/null' },
];

/** Signing programs for read calls, which never sign or verify: anything that tried would fail closed. */
const NO_SIGNING: readonly ConfigPair[] = [
  { key: 'commit.gpgSign', value: 'false' },
  { key: 'gpg.program', value: 'false' },
  { key: 'gpg.openpgp.program', value: 'false' },
  { key: 'gpg.x509.program', value: 'false' },
  { key: 'gpg.ssh.program', value: 'false' },
  { key: 'gpg.ssh.defaultKeyCommand', value: '' },
];

const FIXED_KEYS = new Set([...ALWAYS, ...NO_SIGNING].map((p) => p.key.toLowerCase()));

/**
 * Configuration keys that name a program (or a shell command) git may run. The driver sections
 * take any name a repository likes, hence patterns.
 */
const COMMAND_KEYS: readonly RegExp[] = [
  /^core\.(fsmonitor|hookspath|pager|editor|askpass|sshcommand|gitproxy|alternaterefscommand)$/,
  /^sequence\.editor$/,
  /^diff\.external$/,
  /^diff\..+\.(command|textconv)$/,
  /^filter\..+\.(clean|smudge|process)$/,
  /^merge\..+\.driver$/,
  /^(merge|diff)tool\..+\.(cmd|path)$/,
  /^pager\..+$/,
  /^credential\.(.+\.)?helper$/,
  /^gpg\.(.+\.)?program$/,
  /^gpg\.ssh\.defaultkeycommand$/,
  /^trailer\..+\.(command|cmd)$/,
  /^remote\..+\.(uploadpack|receivepack|proxy|vcs)$/,
  /^submodule\..+\.update$/,
  /^uploadpack\.packobjectshook$/,
  /^web\.browser$/,
  /^(browser|man)\..+\.(cmd|path)$/,
  /^sendemail\..+$/,
  // Configuration-defined hooks (newer git) and archive filters: no command this server runs uses them today.
  /^hook\..+\.command$/,
  /^tar\..+\.command$/,
];

/** Whether git could run a program named by this key (section and variable compared case-insensitively). */
export function isCommandKey(key: string): boolean {
  const normalized = normalizeKey(key);
  return COMMAND_KEYS.some((pattern) => pattern.test(normalized));
}

/** Sections and variable names are case-insensitive; a subsection keeps its case. */
function normalizeKey(key: string): string {
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first === last) return key.toLowerCase();
  return `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`;
}

/**
 * Parses `git config --list -z --show-scope --show-origin`: `scope NUL origin NUL key LF value NUL`,
 * or `key NUL` for a key without a value.
 */
export function parseConfigListing(text: string): ConfigEntry[] {
  const fields = text.split('\0');
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    const scope = fields[i]!;
    const origin = fields[i + 1]!;
    const item = fields[i + 2]!;
    const newline = item.indexOf('\n');
    entries.push(newline === -1 ? { scope, origin, key: item, value: undefined } : { scope, origin, key: item.slice(0, newline), value: item.slice(newline + 1) });
  }
  return entries;
}

/**
 * Parses `git config --file F --list -z`: `key LF value NUL`, or `key NUL`. The entries get the scope
 * `other`: a file of the repository that the listing of its own configuration does not show (a
 * submodule's configuration, another worktree's, a file included under a condition not met now).
 */
export function parseConfigFile(text: string, origin: string): ConfigEntry[] {
  return text
    .split('\0')
    .filter((item) => item !== '')
    .map((item) => {
      const newline = item.indexOf('\n');
      return newline === -1 ? { scope: 'other', origin, key: item, value: undefined } : { scope: 'other', origin, key: item.slice(0, newline), value: item.slice(newline + 1) };
    });
}

/** What the repository (not the user) configured: its own files, the files they include, its submodules' and worktrees' files. */
function fromRepository(entry: ConfigEntry): boolean {
  return entry.scope === 'local' || entry.scope === 'worktree' || entry.scope === 'other';
}

/**
 * The fixed `-c` arguments of every read call. `safeDirectories` come from the user's global
 * configuration, which read calls otherwise ignore: git's ownership check stays as the user set it.
 */
export function readCallConfig(safeDirectories: readonly string[]): ConfigPair[] {
  return [...ALWAYS, ...NO_SIGNING, ...safeDirectories.map((value) => ({ key: 'safe.directory', value }))];
}

/**
 * The per-repository overrides of a read call: every key the repository's configuration holds that
 * names a program gets an empty value (no driver, no command).
 */
export function repositoryOverrides(entries: readonly ConfigEntry[]): ConfigPair[] {
  const out = new Map<string, ConfigPair>();
  for (const entry of entries) {
    if (!isCommandKey(entry.key) || FIXED_KEYS.has(normalizeKey(entry.key).toLowerCase())) continue;
    out.set(entry.key, { key: entry.key, value: '' });
    const filter = /^filter\.(.+)\.[^.]+$/i.exec(entry.key);
    // An emptied driver that is `required` makes git fail instead of passing the content through.
    if (filter) out.set(`filter.${filter[1]}.required`, { key: `filter.${filter[1]}.required`, value: 'false' });
  }
  return [...out.values()];
}

/** Git's own default for each signing setting, used where the user's global configuration says nothing. */
const SIGNING_DEFAULTS: Record<string, string> = {
  'commit.gpgsign': 'false',
  'gpg.format': 'openpgp',
  'gpg.x509.program': 'gpgsm',
  'gpg.ssh.program': 'ssh-keygen',
  'gpg.ssh.defaultkeycommand': '',
};

/**
 * A write call reads the user's global configuration too (their identity, their signing set-up,
 * filters such as git-lfs they installed). Programs the repository names are still overridden:
 * with the user's own global value where there is one, otherwise emptied. Signing follows the
 * user's global configuration only: a repository cannot switch it on or pick the program.
 */
export function writeCallConfig(
  entries: readonly ConfigEntry[],
  safeDirectories: readonly string[],
  gitBinary = 'git',
  allowSigning = false,
): { pairs: ConfigPair[]; signs: boolean; unsignedAsked: boolean } {
  const globalValue = (key: string): string | undefined => {
    let value: string | undefined;
    for (const e of entries) if (e.scope === 'global' && e.key.toLowerCase() === key.toLowerCase()) value = e.value ?? 'true';
    return value;
  };
  const signing: ConfigPair[] = [];
  for (const [key, fallback] of Object.entries(SIGNING_DEFAULTS)) signing.push({ key, value: globalValue(key) ?? fallback });
  // gpg.program and gpg.openpgp.program set the same program; the one git reads last wins.
  const openpgp = globalValue('gpg.openpgp.program') ?? globalValue('gpg.program') ?? 'gpg';
  signing.push({ key: 'gpg.program', value: openpgp }, { key: 'gpg.openpgp.program', value: openpgp });
  const truthy = (value: string | undefined): boolean => value !== undefined && /^(true|yes|on|1)$/i.test(value);
  // The repository may ask for signed commits (its own commit.gpgSign); the program is still the user's.
  const repositoryAsks = entries.some((e) => fromRepository(e) && e.key.toLowerCase() === 'commit.gpgsign' && truthy(e.value ?? 'true'));
  const userSigns = truthy(signing[0]!.value);
  if (!userSigns && repositoryAsks && allowSigning) signing[0] = { key: 'commit.gpgsign', value: 'true' };
  const signs = truthy(signing[0]!.value);
  const unsignedAsked = repositoryAsks && !signs;

  const overrides = new Map<string, ConfigPair>();
  for (const entry of entries) {
    if (!fromRepository(entry) || !isCommandKey(entry.key) || FIXED_KEYS.has(normalizeKey(entry.key).toLowerCase())) continue;
    overrides.set(entry.key, { key: entry.key, value: globalValue(entry.key) ?? safeReplacement(entry.key, gitBinary) });
    const filter = /^filter\.(.+)\.[^.]+$/i.exec(entry.key);
    if (filter && globalValue(entry.key) === undefined) {
      overrides.set(`filter.${filter[1]}.required`, { key: `filter.${filter[1]}.required`, value: 'false' });
    }
  }
  // A commit carries the identity the user configured, never one guessed from the host name.
  const identity: ConfigPair = { key: 'user.useConfigOnly', value: 'true' };
  return { pairs: [...ALWAYS, ...signing, identity, ...safeDirectories.map((value) => ({ key: 'safe.directory', value })), ...overrides.values()], signs, unsignedAsked };
}

/**
 * What a merge driver the repository names becomes in a write (a merge, rebase, cherry-pick,
 * revert or stash apply): git's own three-way merge of the three files git hands a driver, with
 * conflict markers and the base (diff3). An empty driver would make git fail ("cannot run"), and
 * a fixed `false` would leave every such file conflicted without markers.
 */
export function threeWayMerge(gitBinary: string): string {
  const quoted = `'${gitBinary.replace(/'/g, "'\\''")}'`;
  return `${quoted} merge-file --diff3 -L ours -L base -L theirs %A %O %B`;
}

/** What a program-naming key of the repository becomes in a write when the user has no value of their own. */
function safeReplacement(key: string, gitBinary: string): string {
  if (/^merge\..+\.driver$/i.test(key)) return threeWayMerge(gitBinary);
  // git's defaults: an empty value would make a fetch or push fail, not fall back.
  if (/^remote\..+\.uploadpack$/i.test(key)) return 'git-upload-pack';
  if (/^remote\..+\.receivepack$/i.test(key)) return 'git-receive-pack';
  return '';
}

/** The transports a remote call may use; every other one (ext::, fd::, git://, http://, …) is refused by git itself. */
const ALLOWED_PROTOCOLS = ['file', 'https', 'ssh'];
const REFUSED_PROTOCOLS = ['ext', 'fd', 'git', 'http', 'ftp', 'ftps', 'rsync'];

/**
 * The overrides of a call that talks to a remote (`--allow-remote`), on top of a write's: only
 * file, https and ssh, whatever `protocol.<name>.allow` the repository sets (a named protocol's
 * setting outranks `protocol.allow`, so each one the repository names is set again here); ssh
 * with the user's own `core.sshCommand` or plain `ssh`; the user's own credential helpers only.
 */
export function remoteCallConfig(entries: readonly ConfigEntry[]): ConfigPair[] {
  const global = (key: string): string[] => entries.filter((e) => e.scope === 'global' && e.key.toLowerCase() === key).map((e) => e.value ?? '');
  const pairs: ConfigPair[] = [];
  const named = new Set([...ALLOWED_PROTOCOLS, ...REFUSED_PROTOCOLS]);
  for (const e of entries) {
    const m = /^protocol\.(.+)\.allow$/i.exec(e.key);
    if (m) named.add(m[1]!);
  }
  for (const name of named) pairs.push({ key: `protocol.${name}.allow`, value: ALLOWED_PROTOCOLS.includes(name.toLowerCase()) ? 'always' : 'never' });
  pairs.push({ key: 'core.sshCommand', value: global('core.sshcommand').at(-1) ?? 'ssh' });
  // An empty value empties the list git has read so far; the user's own helpers follow it.
  pairs.push({ key: 'credential.helper', value: '' }, ...global('credential.helper').map((value) => ({ key: 'credential.helper', value })));
  return pairs;
}

/** `-c key=value` arguments; keys with `=` (a subsection may hold one) cannot be written so and go through the environment. */
export function configArguments(pairs: readonly ConfigPair[]): { args: string[]; env: Record<string, string> } {
  const args: string[] = [];
  const env: Record<string, string> = {};
  let count = 0;
  for (const { key, value } of pairs) {
    if (key.includes('=')) {
      env[`GIT_CONFIG_KEY_${count}`] = key;
      env[`GIT_CONFIG_VALUE_${count}`] = value;
      count++;
    } else {
      args.push('-c', `${key}=${value}`);
    }
  }
  if (count > 0) env.GIT_CONFIG_COUNT = String(count);
  return { args, env };
}
