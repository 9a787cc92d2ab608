#!/usr/bin/env node
// pnpm check:bundles: proves every MCP Bundle in dist-bundles/ (made by pnpm bundle) installs and
// runs the way Claude Desktop runs it. For each server:
//   1. `mcpb validate` on servers/<name>/manifest.json and on the manifest inside the bundle;
//   2. `mcpb unpack` into a temporary directory; the bundle's manifest must be the committed one
//      (compatibility aside, which pack narrows for a compiled addon) and its version the package's;
//   3. server.mcp_config resolved by the MCPB library's own resolver with a sample user_config
//      (${__dirname} the unpacked directory, ${user_config.x} substituted, defaults applied), then
//      started with node and connected over stdio with an SDK client;
//   4. initialize answers with the package's name and version; tools/list and prompts/list match the
//      manifest's tools and prompts exactly (pnpm bundle:catalog rewrites them after a change);
//   5. one real call (a file read, a SQLite query through the addon and the query process, a
//      PostgreSQL query, a log search in the scan worker, git status, a GitHub call with the token).
//   node scripts/check-bundles.mjs [server...]
//   node scripts/check-bundles.mjs --self-test   (broken variants of a bundle must each be refused)
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { bundledServers, catalogDrift, connect, launchConfig, liveCatalog, packQuietly, readJson, root, satisfies, serverDir } from './mcpb-kit.mjs';
import { sampleConfig } from './mcpb-samples.mjs';

const mcpb = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'mcpb.cmd' : 'mcpb');

function runMcpb(args) {
  const r = spawnSync(mcpb, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mcpb ${args[0]} failed (exit ${r.status}):\n${(r.stdout + r.stderr).trim()}`);
  return r.stdout;
}

function withoutCompatibility(manifest) {
  const { compatibility: _compatibility, ...rest } = manifest;
  return JSON.stringify(rest);
}

async function checkBundle(name, { bundle = path.join(root, 'dist-bundles', `${name}.mcpb`), committedFile = path.join(serverDir(name), 'manifest.json') } = {}) {
  const notes = [];
  runMcpb(['validate', committedFile]);
  if (!existsSync(bundle)) throw new Error(`dist-bundles/${name}.mcpb is missing: run pnpm bundle`);

  const dir = realpathSync(await mkdtemp(path.join(os.tmpdir(), `suite-mcpb-unpacked-${name}-`)));
  let sample;
  let session;
  try {
    runMcpb(['unpack', bundle, dir]);
    runMcpb(['validate', path.join(dir, 'manifest.json')]);
    const manifest = readJson(path.join(dir, 'manifest.json'));
    const committed = readJson(committedFile);
    const pkg = readJson(path.join(serverDir(name), 'package.json'));
    if (withoutCompatibility(manifest) !== withoutCompatibility(committed)) throw new Error(`the bundle's manifest is not servers/${name}/manifest.json: run pnpm bundle`);
    if (manifest.version !== pkg.version) throw new Error(`manifest version ${manifest.version}, package ${pkg.version}`);

    const { platforms, runtimes } = manifest.compatibility ?? {};
    if (platforms && !platforms.includes(process.platform)) throw new Error(`the bundle claims ${platforms.join(', ')}, so it cannot be checked on ${process.platform}`);
    if (runtimes?.node && !satisfies(process.versions.node, runtimes.node)) throw new Error(`the bundle claims node ${runtimes.node}, this is ${process.versions.node}`);
    const entry = path.join(dir, manifest.server.entry_point);
    if (!existsSync(entry)) throw new Error(`server.entry_point ${manifest.server.entry_point} is not in the bundle`);

    sample = await sampleConfig(name);
    const launch = await launchConfig(manifest, dir, sample.userConfig);
    if (!launch.args.includes(entry)) throw new Error(`mcp_config runs ${JSON.stringify(launch.args)}, not the entry point ${manifest.server.entry_point}`);
    session = await connect(launch);
    const info = session.client.getServerVersion();
    if (info?.version !== pkg.version) throw new Error(`initialize says version ${info?.version}, the package is ${pkg.version}`);

    const live = await liveCatalog(session.client);
    const drift = catalogDrift(manifest, live);
    if (drift.length) throw new Error(`the manifest's tools/prompts drifted from the server (run pnpm bundle:catalog, then pnpm bundle):\n  ${drift.join('\n  ')}`);
    notes.push(`${live.tools.length} tools, ${live.prompts.length} prompts as listed`);
    notes.push(await sample.probe(session.client));
    return notes;
  } catch (error) {
    if (session) error.message += `\n--- server stderr ---\n${session.stderr().trim()}`;
    throw error;
  } finally {
    await session?.close().catch(() => {});
    await sample?.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The check must be able to fail: each variant of a good bundle, broken in one way a real mistake
 * would break it, has to be refused with the matching complaint.
 */
async function selfTest() {
  const name = 'logs';
  const variants = [
    { what: 'a manifest the validator rejects', expect: /mcpb validate failed[\s\S]*author/, manifestOnly: true, change: (m) => delete m.author },
    { what: 'a tool the server does not have', expect: /the manifest lists "no_such_tool"/, change: (m) => m.tools.push({ name: 'no_such_tool', description: 'x' }) },
    { what: 'a tool description out of date', expect: /"tail_log" differs/, change: (m) => (m.tools.find((t) => t.name === 'tail_log').description += ' Now with colours.') },
    { what: 'the scan worker left out', expect: /search_logs answered an error/, change: () => rm(path.join(work, 'server', 'worker', 'scan-worker.js')) },
    { what: 'an optional setting without a default', expect: /would reach the server unresolved/, change: (m) => { m.user_config.level = { type: 'string', title: 'Level', description: 'x' }; m.server.mcp_config.env = { LOGS_LEVEL: '${user_config.level}' }; } },
    { what: 'a version other than the package\'s', expect: /manifest version 9\.9\.9/, change: (m) => (m.version = '9.9.9') },
    { what: 'an entry point that is not in the bundle', expect: /entry_point server\/main\.js is not in the bundle/, change: (m) => (m.server.entry_point = 'server/main.js') },
  ];
  const work = realpathSync(await mkdtemp(path.join(os.tmpdir(), 'suite-mcpb-selftest-')));
  let failures = 0;
  try {
    for (const variant of variants) {
      await rm(work, { recursive: true, force: true });
      runMcpb(['unpack', path.join(root, 'dist-bundles', `${name}.mcpb`), work]);
      const manifest = readJson(path.join(work, 'manifest.json'));
      await variant.change(manifest);
      await writeFile(path.join(work, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
      const broken = variant.manifestOnly ? path.join(root, 'dist-bundles', `${name}.mcpb`) : `${work}.mcpb`;
      if (!variant.manifestOnly && !(await packQuietly(work, broken))) throw new Error(`self-test: could not pack the variant with ${variant.what}`);
      // The variant's manifest stands in for the committed one, so only the one change is seen.
      const committedFile = `${work}.manifest.json`;
      await writeFile(committedFile, `${JSON.stringify(manifest, null, 2)}\n`);
      try {
        await checkBundle(name, { bundle: broken, committedFile });
        failures++;
        console.error(`FAIL self-test: a bundle with ${variant.what} passed the check`);
      } catch (error) {
        if (variant.expect.test(error.message)) console.log(`ok   self-test: a bundle with ${variant.what} is refused`);
        else {
          failures++;
          console.error(`FAIL self-test: a bundle with ${variant.what} was refused for another reason: ${error.message}`);
        }
      } finally {
        if (!variant.manifestOnly) await rm(broken, { force: true });
        await rm(committedFile, { force: true });
      }
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  console.log(`bundle check self-test: ${variants.length - failures} of ${variants.length} broken bundles refused`);
  process.exit(failures ? 1 : 0);
}

if (process.argv[2] === '--self-test') await selfTest();

const names = process.argv.slice(2).length ? process.argv.slice(2) : bundledServers();
let failed = 0;
for (const name of names) {
  try {
    const notes = await checkBundle(name);
    console.log(`ok   ${name}.mcpb: valid, unpacked and started; ${notes.join('; ')}`);
  } catch (error) {
    failed++;
    console.error(`FAIL ${name}.mcpb: ${error.message}`);
  }
}
console.log(`bundle check: ${names.length - failed} of ${names.length} bundles pass`);
process.exit(failed ? 1 : 0);
