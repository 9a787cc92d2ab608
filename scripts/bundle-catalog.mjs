#!/usr/bin/env node
// Writes the `tools` and `prompts` of every servers/<name>/manifest.json from what the built server
// lists when started the way its bundle starts it (staged from dist/, with a sample configuration).
// pnpm check:bundles fails when a packed bundle's server and its manifest disagree; this script is
// how the manifest is brought back in step after a tool or prompt changes.
//   node scripts/bundle-catalog.mjs [server...]
import { rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundledServers, catalogDrift, connect, launchConfig, liveCatalog, readJson, serverDir, stageServer } from './mcpb-kit.mjs';
import { sampleConfig } from './mcpb-samples.mjs';

const names = process.argv.slice(2).length ? process.argv.slice(2) : bundledServers();
let failed = false;
for (const name of names) {
  const file = path.join(serverDir(name), 'manifest.json');
  const manifest = readJson(file);
  const stage = path.join(os.tmpdir(), `suite-mcpb-catalog-${name}-${process.pid}`);
  const sample = await sampleConfig(name);
  let session;
  try {
    await stageServer(name, stage, manifest);
    session = await connect(await launchConfig(manifest, stage, sample.userConfig));
    const live = await liveCatalog(session.client);
    const drift = catalogDrift(manifest, live);
    // Keep the manifest's key order: tools and prompts are replaced where they stand.
    const updated = Object.fromEntries(Object.entries(manifest).map(([key, value]) => [key, key === 'tools' || key === 'prompts' ? live[key] : value]));
    await writeFile(file, `${JSON.stringify(updated, null, 2)}\n`);
    console.log(`${name}: ${live.tools.length} tools, ${live.prompts.length} prompts${drift.length ? ` (${drift.length} changes)` : ', unchanged'}`);
  } catch (error) {
    failed = true;
    console.error(`${name}: ${error.message}${session ? `\n${session.stderr()}` : ''}`);
  } finally {
    await session?.close().catch(() => {});
    await sample.cleanup();
    await rm(stage, { recursive: true, force: true });
  }
}
process.exit(failed ? 1 : 0);
