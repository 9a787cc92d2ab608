#!/usr/bin/env node
// pnpm bench <name>: a suite-wide benchmark scripts/bench-<name>.mjs (e.g. startup), or the
// benchmark of one server, servers/<name>/bench/bench.mjs, run against the built packages.
import { existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2];
const suiteWide = readdirSync(path.join(root, 'scripts'))
  .map((f) => /^bench-(?!kit\.)(.+)\.mjs$/.exec(f)?.[1])
  .filter(Boolean);
const servers = readdirSync(path.join(root, 'servers')).filter((s) => existsSync(path.join(root, 'servers', s, 'bench', 'bench.mjs')));

if (name && suiteWide.includes(name)) {
  const result = spawnSync(process.execPath, ['--expose-gc', path.join(root, 'scripts', `bench-${name}.mjs`), ...process.argv.slice(3)], { stdio: 'inherit', cwd: root });
  process.exit(result.status ?? 1);
}
if (!name || !servers.includes(name)) {
  console.error(`Usage: pnpm bench <name> [args...]\nSuite-wide benchmarks: ${suiteWide.join(', ') || '(none)'}\nServers with a benchmark: ${servers.join(', ') || '(none)'}`);
  process.exit(2);
}
const dir = path.join(root, 'servers', name);
if (!existsSync(path.join(dir, 'dist', 'index.js'))) {
  console.error(`servers/${name} is not built. Run: npx pnpm@10 build`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ['--expose-gc', path.join(dir, 'bench', 'bench.mjs'), ...process.argv.slice(3)], { stdio: 'inherit', cwd: dir });
process.exit(result.status ?? 1);
