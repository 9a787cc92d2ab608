import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git, makeRepo, writeFiles } from './helpers.js';

/** Every hook name git knows: each one, if it ever ran, would leave its name in the marker file. */
const HOOKS = [
  'applypatch-msg', 'pre-applypatch', 'post-applypatch', 'pre-commit', 'pre-merge-commit', 'prepare-commit-msg', 'commit-msg', 'post-commit',
  'pre-rebase', 'post-checkout', 'post-merge', 'pre-push', 'pre-receive', 'update', 'proc-receive', 'post-receive', 'post-update',
  'reference-transaction', 'push-to-checkout', 'pre-auto-gc', 'post-rewrite', 'sendemail-validate', 'fsmonitor-watchman', 'p4-changelist',
  'p4-prepare-changelist', 'p4-post-changelist', 'p4-pre-submit', 'post-index-change',
];

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
    git(repo, absorbed ? ['submodule', '--quiet', 'add', `./${name}`, name] : ['add', name]);
    if (absorbed) git(repo, ['submodule', '--quiet', 'absorbgitdirs']);
    const subInclude = path.join(base, `${name}-include.cfg`);
    writeFileSync(subInclude, `[filter "${name}inc"]\n\tclean = ${script(`${name}-filter-clean-included`)}\n`);
    const inSub = (key: string, value: string): void => void git(dir, ['config', key, value]);
    inSub(`filter.${name}f.clean`, script(`${name}-filter-clean`));
    inSub(`filter.${name}f.smudge`, script(`${name}-filter-smudge`));
    inSub(`diff.${name}d.textconv`, script(`${name}-textconv`));
    inSub(`diff.${name}d.command`, script(`${name}-diff-command`));
    inSub(`merge.${name}m.driver`, script(`${name}-merge-driver`));
    inSub('core.fsmonitor', script(`${name}-fsmonitor`));
    inSub('core.pager', script(`${name}-pager`));
    inSub('include.path', subInclude);
    // Changed at the same size: only the content, through the clean filter, tells whether it differs.
    writeFileSync(path.join(dir, 'f.txt'), 'two\n');
  }
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
  const set = (key: string, value: string): void => void git(repo, ['config', key, value]);
  set('core.fsmonitor', script('fsmonitor'));
  set('core.pager', script('core-pager'));
  for (const cmd of ['log', 'diff', 'show', 'status', 'branch']) set(`pager.${cmd}`, script(`pager-${cmd}`));
  set('core.editor', script('core-editor'));
  set('sequence.editor', script('sequence-editor'));
  set('core.askPass', script('askpass'));
  set('core.sshCommand', script('ssh-command'));
  set('core.gitProxy', script('git-proxy'));
  set('core.alternateRefsCommand', script('alternate-refs'));
  set('core.hooksPath', hooksPath);
  set('diff.external', script('diff-external'));
  set('diff.evil.textconv', script('textconv'));
  set('diff.evil.command', script('diff-driver-command'));
  set('filter.evil.clean', script('filter-clean'));
  set('filter.evil.smudge', script('filter-smudge'));
  set('filter.evil.required', 'true');
  set('filter.proc.process', script('filter-process'));
  set('merge.evil.driver', script('merge-driver'));
  set('credential.helper', `!${script('credential-helper')}`);
  set('protocol.allow', 'always');
  set('remote.origin.url', `ext::${script('ext-transport')}`);
  set('remote.origin.uploadpack', script('upload-pack'));
  set('commit.gpgSign', 'true');
  set('tag.gpgSign', 'true');
  set('gc.auto', '1');
  set('status.submoduleSummary', 'true');
  set('include.path', extra);

  // Configuration git reads only in some states: a file included on another branch, the worktree's own
  // file, attributes files outside the tree. Each names a driver under a name of its own.
  const onBranch = path.join(repo, '.git', 'on-branch.cfg');
  writeFileSync(onBranch, `[filter "onbranch"]\n\tclean = ${script('filter-clean-onbranch')}\n\tsmudge = ${script('filter-smudge-onbranch')}\n\trequired = true\n`);
  set('includeIf.onbranch:older.path', onBranch);
  const nested = path.join(repo, '.git', 'nested.cfg');
  writeFileSync(nested, `[diff "nested"]\n\ttextconv = ${script('textconv-nested-include')}\n\tcommand = ${script('diff-command-nested-include')}\n`);
  writeFileSync(path.join(repo, '.git', 'gitdir-include.cfg'), `[include]\n\tpath = ${nested}\n`);
  set('includeIf.gitdir:/nowhere/**.path', path.join(repo, '.git', 'gitdir-include.cfg'));
  set('core.repositoryFormatVersion', '1');
  set('extensions.worktreeConfig', 'true');
  git(repo, ['config', '--worktree', 'filter.wt.clean', script('filter-clean-worktree')]);
  git(repo, ['config', '--worktree', 'filter.wt.smudge', script('filter-smudge-worktree')]);
  git(repo, ['config', '--worktree', 'filter.wt.required', 'true']);
  const attributesFile = path.join(base, 'hostile-attributes');
  writeFileSync(attributesFile, '*.md diff=evil2\n');
  set('core.attributesFile', attributesFile);
  mkdirSync(path.join(repo, '.git', 'info'), { recursive: true });
  writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '*.wt filter=wt\n*.ob filter=onbranch\n');
  // Work in progress, so that status, diffs and add have content to filter and convert.
  writeFiles(repo, { 'src/app.txt': 'one\ntwo\nthree\n', 'data.proc': 'processed again\n', 'new.txt': 'new\n', 'notes.wt': 'worktree again\n', 'later.ob': 'on branch again\n' });
  return { repo, marker, ran: () => (existsSync(marker) ? readFileSync(marker, 'utf8') : '') };
}
