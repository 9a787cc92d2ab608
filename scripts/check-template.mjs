#!/usr/bin/env node
// Proves that a freshly scaffolded server builds and passes its tests with no edits.
// Scaffolds servers/template-check, installs (from the store where it can, from the registry where it must: a fresh machine's store lacks the metadata an --offline install needs), builds, typechecks, tests, removes.
import { spawnSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { npmEnv } from './npm-env.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const name = 'template-check';
const dir = path.join(root, 'servers', name);
const pnpm = (args) => ['npx', ['-y', 'pnpm@10', ...args]];

function step(label, [cmd, args], cwd = root) {
  console.log(`\n== ${label}`);
  const r = spawnSync(cmd, args, { cwd, stdio: 'inherit', env: npmEnv() });
  if (r.status !== 0) throw new Error(`${label} failed (exit ${r.status})`);
}

await rm(dir, { recursive: true, force: true });
// The lockfile as it is now (perhaps with changes not yet committed), to put back afterwards.
const lockfile = path.join(root, 'pnpm-lock.yaml');
const lockfileBefore = await readFile(lockfile, 'utf8');
let failed = false;
try {
  step('scaffold', ['node', ['scripts/new-server.mjs', name, 'A scaffolded server, built and tested by CI']]);
  step('install', pnpm(['install', '--prefer-offline', '--no-frozen-lockfile']));
  step('build', pnpm(['--filter', `@suite/server-${name}`, 'build']));
  step('typecheck', pnpm(['--filter', `@suite/server-${name}`, 'typecheck']));
  step('test', pnpm(['--filter', `@suite/server-${name}`, 'test']));
  step('lint', pnpm(['exec', 'eslint', `servers/${name}`]));
} catch (error) {
  console.error(error.message);
  failed = true;
} finally {
  await rm(dir, { recursive: true, force: true });
  // Put the lockfile and node_modules back as they were without the scaffolded package.
  await writeFile(lockfile, lockfileBefore);
  spawnSync('npx', ['-y', 'pnpm@10', 'install', '--prefer-offline', '--no-frozen-lockfile'], { cwd: root, stdio: 'ignore', env: npmEnv() });
}
console.log(failed ? '\ntemplate check: FAILED' : '\ntemplate check: passed');
process.exit(failed ? 1 : 0);
