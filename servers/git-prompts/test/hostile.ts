import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, makeRepo, writeFiles } from './helpers.js';

/** Every hook name git knows: each one, if it ever ran, would leave its name in the marker file. */
const HOOKS = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit',
  'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update', 'proc-receive', 'post-receive', 'post-update',
  'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman', 'p4-changelist',
  'p4-prepare-changelist', 'p4-post-changelist', 'p4-pre-submit', 'post-index-change',
];

/**
 * Appends `key = value` entries to a git configuration file, as `git config key value` would write
 * them (one git process each would cost more than the rest of the fixture).
 */
function appendConfig(file: string, entries: readonly (readonly [string, string])[]): void {
  const text = entries
    .map(([key, value]) => {
      const first = key.indexOf('.');
      const last = key.lastIndexOf('.');
      const section = first === last ? key.slice(0, first) : `${key.slice(0, first)} "${key.slice(first + 1, last).replace(/["\\]/g, '\\$&')}"`;
      return `[${section}]\n\t${key.slice(last + 1)} = "${value.replace(/["\\]/g, '\\$&')}"\n`;
    })
    .join('');
  appendFileSync(file, text);
}

export interface HostileRepo {
  repo: string;
  /** Lines "<what ran> <its arguments>", one per program run; absent while nothing ran. */
  marker: string;
  ran(): string;
}

/**
 * A repository whose own configuration tries every way git has of running a program on its behalf.
 * Each program is a copy of one script under a telling name that appends that name to `marker` and
 * passes its input through (so a filter that ran would not even break the command).
 */
export function makeHostileRepo(base: string): HostileRepo {
  const repo = path.join(base, 'hostile');
  const bin = path.join(base, 'hostile-bin');
  const marker = path.join(base, 'MARKER');
  mkdirSync(bin, { recursive: true });
  const script = (name: string): string => {
    const file = path.join(bin, name);
    writeFileSync(file, `#!/bin/sh\necho "${name} $*" >> '${marker}'\ncat\n`);
    chmodSync(file, 0o755);
    return file;
  };

  const commitFiles = (dir: string, files: Record<string, string>, message: string): void => {
    writeFiles(dir, files);
    git(dir, ['add', '--', ...Object.keys(files)]);
    git(dir, ['commit', '--quiet', '--no-verify', '-m', message]);
  };
  makeRepo(repo, { 'README.md': '# hostile\n', 'src/app.txt': 'one\ntwo\n', 'data.proc': 'processed\n' });
  // A commit with a signature header: with log.showSignature, git would run gpg.program to verify it.
  const head = git(repo, ['rev-parse', 'HEAD']).trim();
  const tree = git(repo, ['rev-parse', 'HEAD^{tree}']).trim();
  const signed = [
    `tree ${tree}`,
    `parent ${head}`,
    'author Mallory <m@example.com> 1714564800 +0000',
    'committer Mallory <m@example.com> 1714564800 +0000',
    'gpgsig -----BEGIN PGP SIGNATURE-----',
    ' ',
    ' iQEzBAABCAAdFiEEfakefakefakefakefakefakefakefakeFAmYyZ2AACgkQfake',
    ' =fake',
    ' -----END PGP SIGNATURE-----',
    '',
    'A signed commit',
    '',
  ].join('\n');
  const signedOid = git(repo, ['hash-object', '-t', 'commit', '-w', '--stdin'], { input: signed }).trim();
  git(repo, ['update-ref', 'HEAD', signedOid]);

  writeFiles(repo, { '.gitattributes': '* diff=evil filter=evil merge=evil\n*.proc filter=proc\n' });
  git(repo, ['add', '.gitattributes']);
  git(repo, ['commit', '--quiet', '--no-verify', '-m', 'attributes']);

  commitFiles(repo, { 'notes.wt': 'worktree\n', 'later.ob': 'on branch\n' }, 'files under the worktree and branch drivers');

  // A submodule (its git directory absorbed into .git/modules/sub) and an embedded repository (a gitlink
  // with its .git inside its directory), each with a configuration of its own that names programs.
  for (const [name, absorbed] of [['sub', true], ['vendored', false]] as const) {
    const dir = path.join(repo, name);
    makeRepo(dir, { 'f.txt': 'one\n', '.gitattributes': `* filter=${name}f diff=${name}d merge=${name}m\n` });
    if (absorbed) {
      // What `git submodule add` then `git submodule absorbgitdirs` leave, without their processes.
      const modules = path.join(repo, '.git', 'modules');
      mkdirSync(modules, { recursive: true });
      renameSync(path.join(dir, '.git'), path.join(modules, name));
      writeFileSync(path.join(dir, '.git'), `gitdir: ../.git/modules/${name}\n`);
      appendConfig(path.join(modules, name, 'config'), [['core.worktree', `../../../${name}`]]);
      writeFileSync(path.join(repo, '.gitmodules'), `[submodule "${name}"]\n\tpath = ${name}\n\turl = ./${name}\n`);
    }
    const subInclude = path.join(base, `${name}-include.cfg`);
    writeFileSync(subInclude, `[filter "${name}inc"]\n\tclean = ${script(`${name}-filter-clean-included`)}\n`);
    appendConfig(path.join(absorbed ? path.join(repo, '.git', 'modules', name) : path.join(dir, '.git'), 'config'), [
      [`filter.${name}f.clean`, script(`${name}-filter-clean`)],
      [`filter.${name}f.smudge`, script(`${name}-filter-smudge`)],
      [`diff.${name}d.textconv`, script(`${name}-textconv`)],
      [`diff.${name}d.command`, script(`${name}-diff-command`)],
      [`merge.${name}m.driver`, script(`${name}-merge-driver`)],
      ['core.fsmonitor', script(`${name}-fsmonitor`)],
      ['core.pager', script(`${name}-pager`)],
      ['include.path', subInclude],
    ]);
    // Changed at the same size: only the content, through the clean filter, tells whether it differs.
    writeFileSync(path.join(dir, 'f.txt'), 'two\n');
  }
  git(repo, ['add', '.gitmodules', 'sub', 'vendored']);
  git(repo, ['commit', '--quiet', '--no-verify', '-m', 'submodules']);

  // Hooks last: the set-up's own commits above must not run them.
  const hooksPath = path.join(repo, '.hooks');
  for (const dir of [hooksPath, path.join(repo, '.git', 'hooks')]) {
    mkdirSync(dir, { recursive: true });
    for (const hook of HOOKS) {
      const file = path.join(dir, hook);
      writeFileSync(file, `#!/bin/sh\necho "hook:${hook} $*" >> '${marker}'\nexit 0\n`);
      chmodSync(file, 0o755);
    }
  }

  // More configuration through include.path, as a repository would hide it.
  const extra = path.join(repo, '.git', 'extra.cfg');
  writeFileSync(
    extra,
    [
      '[log]', '\tshowSignature = true',
      '[gpg]', `\tprogram = ${script('gpg-program')}`,
      '[gpg "ssh"]', `\tprogram = ${script('gpg-ssh-program')}`, `\tdefaultKeyCommand = ${script('gpg-ssh-default-key')}`,
      '[diff "evil2"]', `\ttextconv = ${script('textconv-included')}`,
      '[trailer "x"]', `\tcommand = ${script('trailer-command')}`,
      '',
    ].join('\n'),
  );

  // Configuration git reads only in some states: a file included on another branch, the worktree's own
  // file, attributes files outside the tree. Each names a driver under a name of its own.
  const onBranch = path.join(repo, '.git', 'on-branch.cfg');
  writeFileSync(onBranch, `[filter "onbranch"]\n\tclean = ${script('filter-clean-onbranch')}\n\tsmudge = ${script('filter-smudge-onbranch')}\n\trequired = true\n`);
  const nested = path.join(repo, '.git', 'nested.cfg');
  writeFileSync(nested, `[diff "nested"]\n\ttextconv = ${script('textconv-nested-include')}\n\tcommand = ${script('diff-command-nested-include')}\n`);
  writeFileSync(path.join(repo, '.git', 'gitdir-include.cfg'), `[include]\n\tpath = ${nested}\n`);
  appendConfig(path.join(repo, '.git', 'config.worktree'), [
    ['filter.wt.clean', script('filter-clean-worktree')],
    ['filter.wt.smudge', script('filter-smudge-worktree')],
    ['filter.wt.required', 'true'],
  ]);
  const attributesFile = path.join(base, 'hostile-attributes');
  writeFileSync(attributesFile, '*.md diff=evil2\n');
  mkdirSync(path.join(repo, '.git', 'info'), { recursive: true });
  writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '*.wt filter=wt\n*.ob filter=onbranch\n');
  git(repo, ['config', 'core.repositoryFormatVersion', '1']);
  appendConfig(path.join(repo, '.git', 'config'), [
    ['core.fsmonitor', script('fsmonitor')],
    ['core.pager', script('core-pager')],
    ...['log', 'diff', 'show', 'status', 'branch'].map((cmd) => [`pager.${cmd}`, script(`pager-${cmd}`)] as const),
    ['core.editor', script('core-editor')],
    ['sequence.editor', script('sequence-editor')],
    ['core.askPass', script('askpass')],
    ['core.sshCommand', script('ssh-command')],
    ['core.gitProxy', script('git-proxy')],
    ['core.alternateRefsCommand', script('alternate-refs')],
    ['core.hooksPath', hooksPath],
    ['diff.external', script('diff-external')],
    ['diff.evil.textconv', script('textconv')],
    ['diff.evil.command', script('diff-driver-command')],
    ['filter.evil.clean', script('filter-clean')],
    ['filter.evil.smudge', script('filter-smudge')],
    ['filter.evil.required', 'true'],
    ['filter.proc.process', script('filter-process')],
    ['merge.evil.driver', script('merge-driver')],
    ['credential.helper', `!${script('credential-helper')}`],
    ['protocol.allow', 'always'],
    ['remote.origin.url', `ext::${script('ext-transport')}`],
    ['remote.origin.uploadpack', script('upload-pack')],
    ['commit.gpgSign', 'true'],
    ['tag.gpgSign', 'true'],
    ['gc.auto', '1'],
    ['status.submoduleSummary', 'true'],
    ['include.path', extra],
    ['includeIf.onbranch:older.path', onBranch],
    ['includeIf.gitdir:/nowhere/**.path', path.join(repo, '.git', 'gitdir-include.cfg')],
    ['extensions.worktreeConfig', 'true'],
    ['core.attributesFile', attributesFile],
  ]);
  // Work in progress, so that status, diffs and add have content to filter and convert.
  writeFiles(repo, { 'src/app.txt': 'one\ntwo\nthree\n', 'data.proc': 'processed again\n', 'new.txt': 'new\n', 'notes.wt': 'worktree again\n', 'later.ob': 'on branch again\n' });
  return { repo, marker, ran: () => (existsSync(marker) ? readFileSync(marker, 'utf8') : '') };
}
