#!/usr/bin/env node
// pnpm bench startup: what a client waits for when it launches a server. Every server is packed and
// installed with plain npm into an empty directory, as users get it, next to a bare SDK server (one
// tool on @modelcontextprotocol/sdk, the version our bundles hold, packed and installed the same
// way); each is then started cold, again and again in turns, and timed from spawn to the answer to
// its first tools/list (initialize included). Medians. The target: no server slower than 1.1x the
// bare server. CPU time (every thread of the server process until that answer) is shown too: it
// holds still on a busy machine, where the wall-clock time does not.
//
// Options: --runs N (default 21), --tarballs DIR (tarballs packed before), --npx (start through
// npx, as a client config does, instead of node and the bin's path: adds npm's own start-up).
import { readFileSync, readdirSync, mkdtempSync, realpathSync } from 'node:fs';
import { rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { median } from './bench-kit.mjs';
import { installTarballs, packAll, packedIn, root, run } from './packed.mjs';
import { packedServers } from './packed-servers.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const RUNS = Number(option('--runs', '21'));
const tarballsDir = option('--tarballs');
const viaNpx = process.argv.includes('--npx');
const TARGET = 1.1;

const work = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'suite-startup-')));
const installDir = path.join(work, 'install');
const log = (line) => process.stderr.write(`${line}\n`);

/** The bare SDK server as a package: what a minimal server written on the SDK costs to start. */
async function packBareServer(destination) {
  const dir = path.join(work, 'bare-sdk-server');
  await mkdir(dir, { recursive: true });
  const sdk = JSON.parse(readFileSync(path.join(root, 'shared', 'node_modules', '@modelcontextprotocol', 'sdk', 'package.json'), 'utf8')).version;
  const zod = JSON.parse(readFileSync(path.join(root, 'shared', 'node_modules', 'zod', 'package.json'), 'utf8')).version;
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'bare-sdk-server', version: '1.0.0', type: 'module', bin: { 'bare-sdk-server': 'index.js' }, dependencies: { '@modelcontextprotocol/sdk': sdk, zod } }, null, 2),
  );
  await writeFile(
    path.join(dir, 'index.js'),
    [
      '#!/usr/bin/env node',
      "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';",
      "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';",
      "import { z } from 'zod';",
      "const server = new McpServer({ name: 'bare-sdk-server', version: '1.0.0' });",
      "server.registerTool('echo', { description: 'Echoes the text.', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));",
      'await server.connect(new StdioServerTransport());',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  await mkdir(destination, { recursive: true });
  await run('npm', ['pack', '--pack-destination', destination], { cwd: dir });
  return path.join(destination, 'bare-sdk-server-1.0.0.tgz');
}

/** CPU time in ms of every thread of a process so far (from the scheduler's nanosecond counters). */
function cpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1e6;
  } catch {
    return NaN;
  }
}

/** One cold start: spawn, initialize, tools/list; returns the wall time and the server's CPU time. */
async function startOnce(target) {
  const [command, args] = viaNpx ? ['npx', ['-y', target.pkg, ...target.args]] : [process.execPath, [target.bin, ...target.args]];
  const started = performance.now();
  const transport = new StdioClientTransport({ command, args, cwd: installDir, env: { ...getDefaultEnvironment(), ...target.env }, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'suite-bench-startup', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const { tools } = await client.listTools();
    const wall = performance.now() - started;
    if (tools.length === 0) throw new Error(`${target.name}: tools/list is empty`);
    // Through npx the server is a child of npm: count the process that answered, the server.
    return { wall, cpu: viaNpx ? NaN : cpuMs(transport.pid) };
  } catch (error) {
    throw new Error(`${target.name} did not start: ${error.message}\n${stderr.slice(-1000)}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}

const kit = packedServers({ fixtures: path.join(work, 'fixtures'), installDir });
try {
  const packages = tarballsDir ? packedIn(tarballsDir) : (log('packing every package...'), await packAll(path.join(work, 'tarballs')));
  const servers = packages.filter((p) => p.rel.startsWith('servers/'));
  const bare = await packBareServer(path.join(work, 'tarballs'));
  log('installing the tarballs with npm...');
  await installTarballs(installDir, [...servers.map((p) => p.tarball), bare]);
  await kit.start();

  const binOf = (pkg, manifest) => path.join(installDir, 'node_modules', ...pkg.split('/'), Object.values(manifest.bin)[0]);
  const targets = [{ name: 'bare SDK server (1 tool)', pkg: 'bare-sdk-server', bin: binOf('bare-sdk-server', { bin: { x: 'index.js' } }), args: [], env: {} }];
  for (const server of servers) {
    const kind = server.rel.replace(/^servers\//, '');
    const spec = kit.servers[kind];
    if (!spec) throw new Error(`servers/${kind} is not in scripts/packed-servers.mjs`);
    const fixture = await spec.fixture(`startup-${kind}`);
    targets.push({ name: server.name, pkg: server.name, bin: binOf(server.name, server.manifest), args: fixture === undefined ? [] : [fixture], env: spec.env?.() ?? {} });
  }

  // One unmeasured start each (the page cache, npm's first look-ups), then turns: each round starts
  // every target once, so a burst of load elsewhere touches all of them alike.
  for (const t of targets) await startOnce(t);
  const samples = new Map(targets.map((t) => [t, { wall: [], cpu: [] }]));
  for (let round = 0; round < RUNS; round++) {
    for (const t of targets) {
      const { wall, cpu } = await startOnce(t);
      samples.get(t).wall.push(wall);
      samples.get(t).cpu.push(cpu);
    }
    log(`round ${round + 1}/${RUNS}`);
  }

  const base = samples.get(targets[0]);
  const baseWall = median(base.wall);
  const baseCpu = median(base.cpu);
  const fmt = (ms) => (Number.isNaN(ms) ? 'n/a' : `${ms.toFixed(0)} ms`);
  const lines = [
    `\n### Start-up: spawn to the first tools/list answer, installed from the tarballs (${viaNpx ? 'through npx' : 'node and the bin'}, median of ${RUNS}, node ${process.version})\n`,
    '| server | wall clock | vs bare SDK server | CPU time | vs bare SDK server |',
    '|---|---|---|---|---|',
  ];
  const missed = [];
  for (const t of targets) {
    const wall = median(samples.get(t).wall);
    const cpu = median(samples.get(t).cpu);
    const ratio = wall / baseWall;
    if (t !== targets[0] && ratio > TARGET) missed.push(`${t.name} ${ratio.toFixed(2)}x`);
    lines.push(`| ${t.name} | ${fmt(wall)} | ${(wall / baseWall).toFixed(2)}x | ${fmt(cpu)} | ${Number.isNaN(cpu) ? 'n/a' : `${(cpu / baseCpu).toFixed(2)}x`} |`);
  }
  lines.push('', missed.length === 0 ? `- met: no server slower than ${TARGET}x the bare SDK server` : `- MISSED (target ${TARGET}x the bare SDK server): ${missed.join(', ')}`);
  console.log(lines.join('\n'));
} finally {
  await kit.stop().catch(() => undefined);
  await rm(work, { recursive: true, force: true });
}
