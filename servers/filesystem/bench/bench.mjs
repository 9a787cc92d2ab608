// pnpm bench filesystem: the same workload through the real SDK client (stdio) against our built
// server, the official @modelcontextprotocol/server-filesystem, and (for small reads) a bare SDK
// server doing fs.readFile. Every figure is a median. Fixtures live in a temp dir removed at the end.
import { createRequire } from 'node:module';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectStdio, median, printTable, resultBytes } from '../../../scripts/bench-kit.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OURS = path.resolve(here, '..', 'dist', 'index.js');
const OFFICIAL = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json')), 'dist', 'index.js');
const BARE = path.join(here, 'bare-server.mjs');

const TREE_TOP = 25;
const TREE_MID = 20;
const TREE_LEAF_FILES = 50; // 25 * 20 * 50 = 25,000 files
const NODE_MODULES_PACKAGES = 100;
const NODE_MODULES_FILES = 50; // 5,000 files
const FLAT_FILES = 10_000;
const BIG_LOG_BYTES = 200 * 1024 * 1024;
const SMALL_READS = 1000;
const EXTENSIONS = ['ts', 'md', 'json', 'txt', 'js'];

const args = new Set(process.argv.slice(2));
const RUNS = args.has('--quick') ? 3 : 5;

function log(message) {
  process.stderr.write(`${message}\n`);
}

async function inBatches(items, size, fn) {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(fn));
}

async function buildFixture(root) {
  const started = performance.now();
  const tree = path.join(root, 'tree');
  const files = [];
  for (let a = 0; a < TREE_TOP; a++) {
    for (let b = 0; b < TREE_MID; b++) {
      const dir = path.join(tree, `pkg-${a}`, `module-${b}`);
      await mkdir(dir, { recursive: true });
      for (let f = 0; f < TREE_LEAF_FILES; f++) {
        const ext = EXTENSIONS[f % EXTENSIONS.length];
        const body = f === 7 && b % 4 === 0 ? `// TODO(bench): remove the fallback in pkg-${a}/module-${b}\n` : '';
        files.push([path.join(dir, `file-${f}.${ext}`), `${body}export const value${f} = ${a * 1000 + b * 10 + f};\n${'// filler line for a realistic small source file\n'.repeat(4)}`]);
      }
    }
  }
  for (let p = 0; p < NODE_MODULES_PACKAGES; p++) {
    const dir = path.join(tree, 'node_modules', `dep-${p}`, 'lib');
    await mkdir(dir, { recursive: true });
    for (let f = 0; f < NODE_MODULES_FILES; f++) files.push([path.join(dir, `file-${f}.js`), `module.exports = ${f}; // TODO(bench) in a dependency\n`]);
  }
  const flat = path.join(root, 'flat');
  await mkdir(flat);
  for (let f = 0; f < FLAT_FILES; f++) files.push([path.join(flat, `entry-${String(f).padStart(5, '0')}.dat`), 'x'.repeat(f % 997)]);
  await inBatches(files, 256, ([file, content]) => writeFile(file, content));

  const big = path.join(root, 'big.log');
  const stream = createWriteStream(big);
  const line = (n) => `2026-11-21T04:00:00.000Z INFO request ${String(n).padStart(9, '0')} served in 12ms by worker-3 ok\n`;
  let written = 0;
  let n = 0;
  while (written < BIG_LOG_BYTES) {
    let chunk = '';
    for (let i = 0; i < 10_000; i++) chunk += line(++n);
    written += Buffer.byteLength(chunk);
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once('drain', resolve));
  }
  await new Promise((resolve, reject) => stream.end((error) => (error ? reject(error) : resolve())));
  log(`fixture: ${files.length} files and a ${(written / 1048576).toFixed(0)} MiB log in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { tree, flat, big, smallFiles: files.slice(0, SMALL_READS).map(([file]) => file) };
}

async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
  if (result.isError) throw new Error(`${name} failed: ${result.content?.[0]?.text}`);
  return result;
}

function peakRssKiB(pid) {
  return readFile(`/proc/${pid}/status`, 'utf8').then(
    (status) => Number(/VmHWM:\s+(\d+)/.exec(status)?.[1]),
    () => undefined,
  );
}

const SERVERS = { ours: OURS, official: OFFICIAL, bare: BARE };

/**
 * Start-up, measured in alternation (ours, official, bare, ours, ...) so that load from other
 * processes on the machine affects every server alike.
 */
async function startupTimes(root) {
  const times = Object.fromEntries(Object.keys(SERVERS).map((name) => [name, { initialize: [], toolsList: [] }]));
  for (let i = 0; i < RUNS; i++) {
    for (const [name, bin] of Object.entries(SERVERS)) {
      const started = performance.now();
      const transport = new StdioClientTransport({ command: process.execPath, args: [bin, root], env: { ...process.env, SUITE_LOG_LEVEL: 'emergency' }, stderr: 'pipe' });
      transport.stderr?.on('data', () => {});
      const client = new Client({ name: 'suite-bench', version: '0.0.0' }, { capabilities: {} });
      await client.connect(transport);
      times[name].initialize.push(performance.now() - started);
      // listTools also compiles a validator for every outputSchema in the SDK client: richer output
      // schemas cost the client time here, which is why both moments are reported.
      await client.listTools();
      times[name].toolsList.push(performance.now() - started);
      await client.close();
    }
  }
  return Object.fromEntries(Object.entries(times).map(([name, t]) => [name, { initialize: median(t.initialize), toolsList: median(t.toolsList) }]));
}

/**
 * The workload: each operation runs on every server that has it, alternating servers run by run
 * (after one unmeasured warm-up each). Returns results[server][operation] = { ms, bytes }.
 */
async function workload(root, fixture) {
  const clients = {};
  for (const [name, bin] of Object.entries(SERVERS)) clients[name] = await connectStdio(process.execPath, [bin, root], { env: { SUITE_LOG_LEVEL: 'emergency' } });
  const results = { ours: {}, official: {}, bare: {} };
  const operation = async (key, servers, fn, runs = RUNS) => {
    const times = Object.fromEntries(servers.map((name) => [name, []]));
    const last = {};
    for (let run = -1; run < runs; run++) {
      for (const name of servers) {
        const started = performance.now();
        last[name] = await fn(clients[name].client);
        if (run >= 0) times[name].push(performance.now() - started);
      }
    }
    for (const name of servers) {
      results[name][key] = { ms: median(times[name]), bytes: last[name] ? resultBytes(last[name]) : undefined };
      log(`  ${key}: ${name} ${results[name][key].ms.toFixed(1)} ms`);
    }
  };
  const both = ['ours', 'official'];
  try {
    await operation('small reads', ['ours', 'official', 'bare'], async (client) => {
      let last;
      for (const file of fixture.smallFiles) last = await call(client, 'read_text_file', { path: file });
      return last;
    });
    const searchArgs = { path: fixture.tree, pattern: '**/file-42.*', excludePatterns: ['node_modules'] };
    await operation('search_files', both, (c) => call(c, 'search_files', searchArgs));
    await operation('directory_tree', both, (c) => call(c, 'directory_tree', { path: fixture.tree, excludePatterns: ['node_modules'] }));
    await operation('directory_tree full', both, (c) => call(c, 'directory_tree', { path: fixture.tree, excludePatterns: ['node_modules'], maxEntries: 100_000 }));
    await operation('list_directory_with_sizes', both, (c) => call(c, 'list_directory_with_sizes', { path: fixture.flat }));
    await operation('list_directory_with_sizes full', both, (c) => call(c, 'list_directory_with_sizes', { path: fixture.flat, maxEntries: 100_000 }));
    await operation('head 200 MB', both, (c) => call(c, 'read_text_file', { path: fixture.big, head: 10 }));
    await operation('tail 200 MB', both, (c) => call(c, 'read_text_file', { path: fixture.big, tail: 10 }));
    await operation('search_content', ['ours'], (c) => call(c, 'search_content', { path: fixture.tree, pattern: 'TODO\\(bench\\)', exclude: ['node_modules'], maxResults: 1000 }), 3);
    for (const name of both) results[name].peakRss = { kib: await peakRssKiB(clients[name].pid) };
  } finally {
    for (const { close } of Object.values(clients)) await close();
  }
  return results;
}

async function main() {
  const base = await realpath(await mkdtemp(path.join(os.tmpdir(), 'fs-bench-')));
  const cleanup = () => rm(base, { recursive: true, force: true });
  process.on('SIGINT', () => void cleanup().then(() => process.exit(130)));
  try {
    const fixture = await buildFixture(base);
    log('start-up…');
    const startup = await startupTimes(base);
    log('workload…');
    const { ours, official, bare } = await workload(base, fixture);
    for (const [name, t] of Object.entries(startup)) {
      const results = { ours, official, bare }[name];
      results.startup = { ms: t.toolsList };
      results.initialize = { ms: t.initialize };
    }

    const rows = [
      ['start-up to initialize result', 'initialize'],
      ['start-up to first tools/list', 'startup'],
      [`${SMALL_READS} sequential small reads`, 'small reads'],
      ["search_files '**/file-42.*' (25k files, node_modules excluded)", 'search_files'],
      ['directory_tree (25k files, defaults)', 'directory_tree'],
      ['directory_tree (25k files, maxEntries 100000)', 'directory_tree full'],
      ['list_directory_with_sizes (10k entries, defaults)', 'list_directory_with_sizes'],
      ['list_directory_with_sizes (10k entries, maxEntries 100000)', 'list_directory_with_sizes full'],
      ['read_text_file head=10 of 200 MB', 'head 200 MB'],
      ['read_text_file tail=10 of 200 MB', 'tail 200 MB'],
    ];
    printTable('Times (median; ratio > 1 means ours is faster)', ['ours', 'official'], rows.map(([name, key]) => ({ name, ours: ours[key]?.ms, theirs: official[key]?.ms, unit: 'ms' })));
    printTable(
      'Bytes of text returned (last run)',
      ['ours', 'official'],
      rows.slice(2).map(([name, key]) => ({ name, ours: ours[key]?.bytes, theirs: official[key]?.bytes, unit: 'bytes' })),
    );
    printTable('Small reads against a bare SDK server doing fs.readFile', ['ours', 'bare'], [
      { name: `${SMALL_READS} sequential small reads`, ours: ours['small reads'].ms, theirs: bare['small reads'].ms, unit: 'ms' },
    ]);
    const overhead = ((ours['small reads'].ms / bare['small reads'].ms - 1) * 100).toFixed(1);
    console.log(`\nOurs vs bare on small reads: ${overhead}% ${Number(overhead) >= 0 ? 'slower' : 'faster'}.`);
    printTable('Ours only (no official equivalent)', ['ours', 'official'], [
      { name: "search_content 'TODO\\(bench\\)' (25k files, node_modules excluded, 125 matches)", ours: ours.search_content?.ms, theirs: undefined, unit: 'ms', note: 'n/a' },
    ]);
    printTable('Peak server memory (VmHWM after the workload)', ['ours', 'official'], [
      { name: 'peak RSS', ours: ours.peakRss.kib ? ours.peakRss.kib * 1024 : undefined, theirs: official.peakRss.kib ? official.peakRss.kib * 1024 : undefined, unit: 'bytes', note: '' },
    ]);
  } finally {
    await cleanup();
  }
}

await main();
