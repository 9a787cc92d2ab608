#!/usr/bin/env node
// pnpm bench <name>: a suite-wide benchmark (scripts/bench-<name>.mjs, run from the repository root) or
// one server's (servers/<name>/bench/bench.mjs, run from its package), against the built packages.
import { existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const name = process.argv[2];
const suiteWide = readdirSync(here)
  .map((file) => /^bench-(.+)\.mjs$/.exec(file)?.[1])
  .filter((n) => n !== undefined && n !== 'kit');
const servers = readdirSync(path.join(root, 'servers')).filter((s) => existsSync(path.join(root, 'servers', s, 'bench', 'bench.mjs')));
if (!name || (!suiteWide.includes(name) && !servers.includes(name))) {
  console.error(`Usage: pnpm bench <name> [args...]\nSuite-wide benchmarks: ${suiteWide.join(', ') || '(none)'}\nServers with a benchmark: ${servers.join(', ') || '(none)'}`);
  process.exit(2);
}
// A suite-wide benchmark checks for the builds it needs itself.
const [script, cwd] = suiteWide.includes(name)
  ? [path.join(here, `bench-${name}.mjs`), root]
  : [path.join(root, 'servers', name, 'bench', 'bench.mjs'), path.join(root, 'servers', name)];
if (!suiteWide.includes(name) && !existsSync(path.join(cwd, 'dist', 'index.js'))) {
  console.error(`servers/${name} is not built. Run: npx -y pnpm@10 build`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ['--expose-gc', script, ...process.argv.slice(3)], { stdio: 'inherit', cwd });
process.exit(result.status ?? 1);
