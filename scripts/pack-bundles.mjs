#!/usr/bin/env node
// pnpm bundle: packs every server that has a servers/<name>/manifest.json into an MCP Bundle for
// Claude Desktop, dist-bundles/<name>.mcpb, from the built bin (run pnpm build first).
//   node scripts/pack-bundles.mjs [server...]
// The bundle holds the manifest, a package.json, server/ (the bundled bin and the worker or child
// scripts it starts) and node_modules/ with only the packages the bin leaves external (SQLite's
// compiled addon). A bundle with a compiled addon is marked for this platform and Node major only.
import { statSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundledServers, narrowForAddons, packQuietly, readJson, root, serverDir, stageServer } from './mcpb-kit.mjs';

const names = process.argv.slice(2).length ? process.argv.slice(2) : bundledServers();
const outDir = path.join(root, 'dist-bundles');
await mkdir(outDir, { recursive: true });

const rows = [];
let failed = false;
for (const name of names) {
  const stage = path.join(os.tmpdir(), `suite-mcpb-stage-${name}-${process.pid}`);
  const out = path.join(outDir, `${name}.mcpb`);
  try {
    const committed = readJson(path.join(serverDir(name), 'manifest.json'));
    // Stage once to learn what the bin loads, then write the manifest that fits it.
    const staged = await stageServer(name, stage, committed);
    const manifest = narrowForAddons(committed, staged.addons);
    if (manifest !== committed) await stageServer(name, stage, manifest);
    await rm(out, { force: true });
    if (!(await packQuietly(stage, out))) throw new Error(`mcpb pack refused the staged directory (run npx mcpb validate servers/${name}/manifest.json)`);
    rows.push({ name, bytes: statSync(out).size, staged, compatibility: manifest.compatibility });
  } catch (error) {
    failed = true;
    console.error(`${name}: ${error.message}`);
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}

for (const { name, bytes, staged, compatibility } of rows) {
  const extras = [
    staged.packages.length ? `node_modules: ${staged.packages.join(', ')}` : 'no node_modules',
    staged.addons.length ? `addon for ${compatibility.platforms.join('/')}-${process.arch}, node ${compatibility.runtimes.node}` : '',
    staged.skipped.length ? `not installed, left out: ${staged.skipped.join(', ')}` : '',
  ].filter(Boolean);
  console.log(`dist-bundles/${name}.mcpb  ${(bytes / 1024).toFixed(0)} KiB  (${staged.files} server file${staged.files === 1 ? '' : 's'}; ${extras.join('; ')})`);
}
process.exit(failed ? 1 : 0);
