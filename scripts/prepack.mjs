#!/usr/bin/env node
// The prepack of every package (`node ../../scripts/prepack.mjs`, shared's `node ../scripts/prepack.mjs`):
// builds the package and the workspace packages it depends on (a server builds @suite/shared first),
// so that a tarball holds what the sources say. With the pnpm that runs the pack (pnpm pack, pnpm
// publish: it sets npm_execpath), else through `npx -y pnpm@10`: `npm pack` works for someone who has
// only npm.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { npmEnv } from './npm-env.mjs';

const { name } = JSON.parse(readFileSync('package.json', 'utf8'));
const execPath = process.env.npm_execpath;
const [command, prefix] = execPath && /pnpm\.c?js$/.test(execPath) ? [process.execPath, [execPath]] : ['npx', ['-y', 'pnpm@10']];
const r = spawnSync(command, [...prefix, '--filter', `${name}...`, 'build'], { stdio: 'inherit', env: npmEnv() });
if (r.error) console.error(`prepack of ${name}: could not run ${command}: ${r.error.message}`);
process.exit(r.status ?? 1);
