#!/usr/bin/env node
// pnpm bench <server>: runs servers/<server>/bench/bench.mjs against the built packages.
import { existsSync, readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const name = process.argv[2];
const available = readdirSync(path.join(root, 'servers')).filter((s) => existsSync(path.join(root, 'servers', s, 'bench', 'bench.mjs')));
if (!name || !available.includes(name)) {
  console.error(`Usage: pnpm bench <server> [args...]\nServers with a benchmark: ${available.join(', ') || '(none)'}`);
  process.exit(2);
}
const dir = path.join(root, 'servers', name);
if (!existsSync(path.join(dir, 'dist', 'index.js'))) {
  console.error(`servers/${name} is not built. Run: npx pnpm@10 build`);
  process.exit(2);
}
const result = spawnSync(process.execPath, ['--expose-gc', path.join(dir, 'bench', 'bench.mjs'), ...process.argv.slice(3)], { stdio: 'inherit', cwd: dir });
process.exit(result.status ?? 1);
