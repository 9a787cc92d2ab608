#!/usr/bin/env node
// pnpm release: builds, tests and publishes every package whose version is not on npm yet
// (changeset publish), after the pending changesets were applied with pnpm version-packages.
// pnpm release --dry-run (or pnpm release:dry-run): publishes nothing and leaves the checkout as it
// was. It copies the working tree to a temporary directory, installs there from the store, applies
// the pending changesets (pnpm version-packages), packs every public package as `pnpm publish` would
// and runs `npm publish --dry-run` on each tarball, then checks what a registry would receive:
//   - versions and changelogs: every bumped package has its new version and a CHANGELOG.md entry;
//     a release of @suite/shared bumps every package that bundles it (their bins inline shared);
//   - each tarball: no workspace: range; every dependency on a package of this repository asks for
//     exactly the version published with it (so no server can depend on an unpublished shared);
//     bin, main and exports files present; the bin starts with a shebang;
//   - the server.json and manifest.json of each server follow the new versions.
// It then breaks a copy of one package twice (a bin that is not packed, a dependency on a shared
// version that does not exist) and requires the same checks to refuse both.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { npmEnv } from './npm-env.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dryRun = process.argv.includes('--dry-run');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

/** pnpm as this script was started (pnpm run sets npm_execpath), else through npx. */
function pnpmCommand() {
  const execPath = process.env.npm_execpath;
  if (execPath && /pnpm\.c?js$/.test(execPath)) return [process.execPath, [execPath]];
  return ['npx', ['-y', 'pnpm@10']];
}

function run(label, command, args, { cwd = root, quiet = false, env } = {}) {
  if (!quiet) console.log(`\n== ${label}`);
  const started = Date.now();
  const r = spawnSync(command, args, { cwd, stdio: quiet ? 'pipe' : 'inherit', encoding: 'utf8', env: npmEnv(env) });
  if (r.status !== 0) throw new Error(`${label} failed (exit ${r.status})${quiet ? `:\n${`${r.stdout ?? ''}${r.stderr ?? ''}`.trim().slice(-3000)}` : ''}`);
  if (quiet) console.log(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return r.stdout ?? '';
}

function pnpm(label, args, options) {
  const [command, prefix] = pnpmCommand();
  return run(label, command, [...prefix, ...args], options);
}

/** The workspace's packages: directory, package.json. */
function workspacePackages(dir) {
  const dirs = ['shared', ...readdirSync(path.join(dir, 'servers')).map((n) => path.join('servers', n))];
  return dirs.filter((d) => existsSync(path.join(dir, d, 'package.json'))).map((d) => ({ dir: path.join(dir, d), rel: d, pkg: readJson(path.join(dir, d, 'package.json')) }));
}

function pendingChangesets(dir) {
  return readdirSync(path.join(dir, '.changeset')).filter((f) => f.endsWith('.md') && f !== 'README.md');
}

// ---------------------------------------------------------------------------------------------
// What a registry would receive: checks on a packed tarball.
// ---------------------------------------------------------------------------------------------

function tarList(tarball) {
  return execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
}

function tarRead(tarball, file) {
  return execFileSync('tar', ['-xzOf', tarball, file], { encoding: 'utf8', maxBuffer: 64 << 20 });
}

/** Problems with one tarball; `released` maps each workspace package name to the version published with it. */
function tarballProblems(tarball, released) {
  const problems = [];
  const files = new Set(tarList(tarball));
  const pkg = JSON.parse(tarRead(tarball, 'package/package.json'));
  const has = (p) => files.has(`package/${p.replace(/^\.\//, '')}`);
  for (const field of ['dependencies', 'optionalDependencies', 'peerDependencies']) {
    for (const [dep, range] of Object.entries(pkg[field] ?? {})) {
      if (String(range).startsWith('workspace:')) problems.push(`${field}.${dep} is still ${range}`);
      if (released.has(dep) && range !== `^${released.get(dep)}` && range !== released.get(dep)) {
        problems.push(`${field}.${dep} asks for ${range}, but the version published with it is ${released.get(dep)}`);
      }
    }
  }
  for (const [binName, file] of Object.entries(typeof pkg.bin === 'string' ? { [pkg.name]: pkg.bin } : (pkg.bin ?? {}))) {
    if (!has(file)) problems.push(`bin ${binName} -> ${file} is not in the tarball`);
    else if (!tarRead(tarball, `package/${file.replace(/^\.\//, '')}`).startsWith('#!/usr/bin/env node')) problems.push(`bin ${file} does not start with #!/usr/bin/env node`);
  }
  // The files exports points at: its string leaves (its keys are subpaths, not files).
  const leaves = (value) => (typeof value === 'string' ? [value] : value && typeof value === 'object' ? Object.values(value).flatMap(leaves) : []);
  const targets = [pkg.main, pkg.types, ...leaves(pkg.exports)].filter(Boolean);
  for (const target of new Set(targets)) if (!target.includes('*') && !has(target)) problems.push(`${target} (main/types/exports) is not in the tarball`);
  return { pkg, problems, files: files.size };
}

/** Packs every public package of `dir` (or only the one named) and checks the tarballs, and `npm publish --dry-run` on each. */
function packAndCheck(dir, outDir, { only, publish = true } = {}) {
  const packages = workspacePackages(dir).filter((p) => !p.pkg.private);
  const released = new Map(packages.map((p) => [p.pkg.name, p.pkg.version]));
  const results = [];
  for (const { dir: pkgDir, pkg } of packages) {
    if (only && pkg.name !== only) continue;
    const before = new Set(readdirSync(outDir));
    pnpm(`pack ${pkg.name}`, ['pack', '--pack-destination', outDir], { cwd: pkgDir, quiet: true });
    const tarball = readdirSync(outDir).find((f) => f.endsWith('.tgz') && !before.has(f));
    if (!tarball) throw new Error(`pnpm pack of ${pkg.name} wrote no tarball`);
    const file = path.join(outDir, tarball);
    const checked = tarballProblems(file, released);
    // What the registry would be sent, checked by npm itself (it refuses a bad name or version, for example).
    const published = publish ? spawnSync('npm', ['publish', file, '--dry-run', '--offline', '--access', 'public', '--tag', 'latest'], { encoding: 'utf8', env: npmEnv() }) : { status: 0 };
    if (published.status !== 0) checked.problems.push(`npm publish --dry-run refused it: ${(published.stderr || published.stdout).trim().split('\n').slice(-3).join(' ')}`);
    results.push({ name: pkg.name, version: pkg.version, tarball: file, ...checked });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------

function copyWorkingTree(to) {
  // The files git would commit from here, as they are now (uncommitted changesets included).
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) if (existsSync(path.join(root, file))) cpSync(path.join(root, file), path.join(to, file), { recursive: true });
  // Built output, so that packing finds it even without a prepack step.
  for (const { rel } of workspacePackages(root)) {
    if (existsSync(path.join(root, rel, 'dist'))) cpSync(path.join(root, rel, 'dist'), path.join(to, rel, 'dist'), { recursive: true });
  }
  const git = (...args) => execFileSync('git', args, { cwd: to, stdio: 'pipe' });
  // changeset status wants the base branch; the copy's only commit is it.
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=release dry run', '-c', 'user.email=dry-run@example.invalid', 'commit', '-q', '-m', 'dry run');
}

async function dryRunRelease() {
  const statusBefore = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' });
  const work = mkdtempSync(path.join(os.tmpdir(), 'suite-release-dry-run-'));
  const repo = path.join(work, 'repo');
  const tarballs = path.join(work, 'tarballs');
  let failed = false;
  try {
    copyWorkingTree(repo);
    execFileSync('mkdir', ['-p', tarballs]);
    const before = new Map(workspacePackages(repo).map((p) => [p.pkg.name, p.pkg.version]));
    const changesets = pendingChangesets(repo);
    console.log(`release dry run in ${work}: ${changesets.length} pending changeset${changesets.length === 1 ? '' : 's'} (${changesets.join(', ') || 'none'})`);
    pnpm('install (from the store where it can)', ['install', '--frozen-lockfile', '--prefer-offline'], { cwd: repo, quiet: true });
    // The maintainer's own step: changeset version, then server.json and manifest.json follow.
    pnpm('pnpm version-packages', ['run', 'version-packages'], { cwd: repo, quiet: true });

    const problems = [];
    const after = workspacePackages(repo);
    const bumped = after.filter((p) => before.get(p.pkg.name) !== p.pkg.version);
    if (changesets.length && bumped.length === 0) problems.push('changeset version bumped no package');
    if (pendingChangesets(repo).length) problems.push(`changesets left after changeset version: ${pendingChangesets(repo).join(', ')}`);
    for (const p of bumped) {
      const changelog = path.join(p.dir, 'CHANGELOG.md');
      if (!existsSync(changelog) || !readFileSync(changelog, 'utf8').includes(`## ${p.pkg.version}\n`)) problems.push(`${p.rel}/CHANGELOG.md has no entry for ${p.pkg.version}`);
    }
    // The bins inline @suite/shared: a shared release must reach every bin, so every dependent is bumped with it.
    if (bumped.some((p) => p.pkg.name === '@suite/shared')) {
      for (const p of after) {
        const deps = { ...p.pkg.dependencies, ...p.pkg.devDependencies };
        if (deps['@suite/shared'] && !bumped.includes(p)) problems.push(`${p.pkg.name} bundles @suite/shared, which is released, but is not released with it`);
      }
    }
    run('release files follow the new versions', process.execPath, ['scripts/check-release-files.mjs'], { cwd: repo, quiet: true });

    const results = packAndCheck(repo, tarballs);
    console.log('\n| package | version | tarball | files | problems |\n|---|---|---|---|---|');
    for (const r of results) {
      const from = before.get(r.name);
      console.log(`| ${r.name} | ${from === r.version ? r.version : `${from} -> ${r.version}`} | ${(readFileSync(r.tarball).length / 1024).toFixed(0)} KiB | ${r.files} | ${r.problems.join('; ') || 'none'} |`);
      problems.push(...r.problems.map((p) => `${r.name}: ${p}`));
    }
    for (const r of results) {
      const internal = Object.entries(r.pkg.dependencies ?? {}).filter(([d]) => before.has(d));
      if (internal.length) console.log(`${r.name} depends on ${internal.map(([d, v]) => `${d}@${v}`).join(', ')}`);
    }

    // The checks must refuse a broken package: break a copy of one, twice, and pack again.
    const victim = after.find((p) => p.pkg.dependencies?.['@suite/shared'] && p.pkg.bin) ?? after.find((p) => p.pkg.bin);
    const selfTest = [];
    if (victim) {
      const file = path.join(victim.dir, 'package.json');
      const original = readFileSync(file, 'utf8');
      const broken = [
        ['a bin that is not packed', (pkg) => (pkg.bin = { [Object.keys(pkg.bin)[0]]: 'dist/no-such-bin.js' }), /is not in the tarball/],
        ...(victim.pkg.dependencies?.['@suite/shared'] ? [['a dependency on an unpublished shared version', (pkg) => (pkg.dependencies['@suite/shared'] = '^99.0.0'), /asks for \^99\.0\.0/]] : []),
      ];
      for (const [what, change, expect] of broken) {
        const pkg = JSON.parse(original);
        change(pkg);
        writeFileSync(file, JSON.stringify(pkg, null, 2));
        const out = mkdtempSync(path.join(work, 'broken-'));
        try {
          const [again] = packAndCheck(repo, out, { only: victim.pkg.name, publish: false });
          selfTest.push({ what, ok: again.problems.some((p) => expect.test(p)) });
        } catch (error) {
          // A pack that fails outright also refuses the package.
          selfTest.push({ what, ok: true, note: error.message.split('\n')[0] });
        } finally {
          writeFileSync(file, original);
        }
      }
    }
    for (const t of selfTest) {
      console.log(`${t.ok ? 'ok  ' : 'FAIL'} self-test: ${victim.pkg.name} with ${t.what} ${t.ok ? 'is refused' : 'passed the checks'}${t.note ? ` (${t.note})` : ''}`);
      if (!t.ok) problems.push(`self-test: ${t.what} passed the checks`);
    }

    if (problems.length) {
      failed = true;
      console.error(`\nrelease dry run: FAILED\n  ${problems.join('\n  ')}`);
    } else {
      console.log(`\nrelease dry run: ${results.length} packages would publish (${bumped.length} bumped by ${changesets.length} changesets); nothing was published`);
    }
  } catch (error) {
    failed = true;
    console.error(`\nrelease dry run: FAILED\n${error.message}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const statusAfter = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' });
  if (statusAfter !== statusBefore) {
    failed = true;
    console.error(`release dry run changed the checkout:\n${statusAfter}`);
  }
  process.exit(failed ? 1 : 0);
}

async function release() {
  const pending = pendingChangesets(root);
  if (pending.length) throw new Error(`pending changesets (${pending.join(', ')}): run pnpm version-packages, review and commit, then pnpm release`);
  if (execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8' }).trim()) throw new Error('the checkout has uncommitted changes: commit them first');
  // changeset publish starts `pnpm publish` by name.
  if (spawnSync('pnpm', ['--version'], { stdio: 'ignore' }).status !== 0) throw new Error('pnpm is not on PATH: run this as npx -y pnpm@10 release');
  pnpm('build', ['build']);
  pnpm('test', ['test']);
  run('release files', process.execPath, ['scripts/check-release-files.mjs']);
  const released = new Map(workspacePackages(root).filter((p) => !p.pkg.private).map((p) => [p.pkg.name, p.pkg.version]));
  // changeset publish runs `pnpm publish` in each package whose version npm does not have yet;
  // pnpm turns workspace:^ into ^<the version in this checkout>, which is published in the same run.
  pnpm('changeset publish', ['exec', 'changeset', 'publish']);
  // changeset publish works in parallel: if it stopped part-way, a server may be on npm before the
  // shared version it names. Say so; running pnpm release again publishes what is missing.
  const missing = [...released].filter(([name, version]) => spawnSync('npm', ['view', `${name}@${version}`, 'version'], { encoding: 'utf8', env: npmEnv() }).stdout.trim() !== version);
  if (missing.length) throw new Error(`not on npm after publishing: ${missing.map(([n, v]) => `${n}@${v}`).join(', ')}. Run pnpm release again to publish them.`);
  console.log('\nreleased; push the commit and its tags (git push --follow-tags).');
}

try {
  if (dryRun) await dryRunRelease();
  else await release();
} catch (error) {
  console.error(`release: ${error.message}`);
  process.exit(1);
}
