#!/usr/bin/env node
// pnpm bench scale: what running replicas behind haproxy with Redis costs, on the filesystem
// server's built bin (one read_text_file per call). In one run, every figure a median or p99:
//   1. a cheap call through haproxy: 1 replica without Redis, 1 replica with --redis-url, and 2
//      replicas with --redis-url (round robin), for a 2025 session (the v1 SDK) and a 2026-07-28
//      client; "Redis adds" is the with-Redis median minus the without-Redis one on the same path;
//   2. Redis memory per open 2025 session (200 sessions, each with a few calls);
//   3. a replica killed with SIGKILL and started again while clients call through haproxy: the
//      attempts that failed (and were retried), the slowest call, and the p99 over the window.
// Two cores cannot show throughput growing with replicas: this shows the cost and the behaviour.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { formatMs, median } from './bench-kit.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'servers', 'filesystem', 'dist', 'index.js');
const CALLS = Number(process.env.BENCH_CALLS ?? 400);
for (const tool of ['haproxy', 'redis-server']) {
  if (spawnSync(tool, ['-v'], { stdio: 'ignore' }).error) {
    console.error(`pnpm bench scale needs ${tool} (apt-get install ${tool === 'redis-server' ? 'redis-server' : tool})`);
    process.exit(2);
  }
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'suite-bench-scale-'));
const file = path.join(dir, 'hello.txt');
await writeFile(file, 'hello from the scale benchmark\n'.repeat(20));
const keyFile = path.join(dir, 'state.key');
await writeFile(keyFile, 'bench-scale-request-state-key-0123456789abcdef0123', { mode: 0o600 });
const children = new Set();

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function run(command, args, ready) {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  let out = '';
  return new Promise((resolve, reject) => {
    const seen = (c) => {
      out += c;
      if (ready.test(out)) resolve(child);
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.on('exit', (code) => reject(new Error(`${command} exited ${code}: ${out}`)));
  });
}

async function startRedis() {
  const port = await freePort();
  const child = await run('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], /Ready to accept connections/);
  return { url: `redis://127.0.0.1:${port}`, port, child };
}

function redisUsedMemory(port) {
  const info = spawnSync('redis-cli', ['-p', String(port), 'info', 'memory'], { encoding: 'utf8' }).stdout;
  return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN);
}

async function startReplica(port, lbPort, redisUrl) {
  const args = [bin, dir, '--http', '--port', String(port), '--request-state-key-file', keyFile, '--allowed-host', `127.0.0.1:${lbPort}`, '--max-sessions', '1000'];
  if (redisUrl) args.push('--redis-url', redisUrl, '--redis-prefix', 'bench-scale:');
  return run(process.execPath, args, /listening on http/);
}

async function startHaproxy(lbPort, replicaPorts) {
  const template = readFileSync(path.join(root, 'deploy', 'haproxy.cfg.template'), 'utf8');
  const servers = replicaPorts.map((p, i) => `    server r${i + 1} 127.0.0.1:${p} check`).join('\n');
  const config = path.join(dir, `haproxy-${lbPort}.cfg`);
  await writeFile(config, template.replace('${PORT}', String(lbPort)).replace('${SERVERS}', servers));
  const child = spawn('haproxy', ['-f', config, '-db'], { stdio: 'ignore' });
  children.add(child);
  for (const deadline = Date.now() + 15_000; ; ) {
    const csv = await fetch(`http://127.0.0.1:${lbPort}/haproxy-stats;csv`).then((r) => r.text(), () => '');
    if (csv.split('\n').filter((l) => l.startsWith('replicas,r') && l.split(',')[17] === 'UP').length === replicaPorts.length) break;
    if (Date.now() > deadline) throw new Error('haproxy did not see the replicas up');
    await new Promise((r) => setTimeout(r, 100));
  }
  return child;
}

async function connect(era, url) {
  if (era === '2025') {
    const client = new ClientV1({ name: 'bench', version: '0' });
    await client.connect(new HttpV1(new URL(url)));
    return client;
  }
  const client = new ClientV2({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new HttpV2(new URL(url)));
  return client;
}

async function timedCall(client, timeout = 4_000) {
  const start = performance.now();
  const result = await client.callTool({ name: 'read_text_file', arguments: { path: file } }, undefined, { timeout });
  if (result.isError) throw new Error(JSON.stringify(result.content));
  return performance.now() - start;
}

const p99 = (values) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))];

/** A deployment: `count` replicas (with or without Redis) behind haproxy. */
async function deployment(count, redis) {
  const lbPort = await freePort();
  const ports = await Promise.all(Array.from({ length: count }, () => freePort()));
  const replicas = await Promise.all(ports.map((p) => startReplica(p, lbPort, redis?.url)));
  const lb = await startHaproxy(lbPort, ports);
  return { url: `http://127.0.0.1:${lbPort}/mcp`, lbPort, ports, replicas, lb, redis };
}

function stop(d) {
  for (const child of [...d.replicas, d.lb]) child.kill('SIGKILL');
}

async function latencies(d, era) {
  const client = await connect(era, d.url);
  for (let i = 0; i < 30; i++) await timedCall(client);
  const times = [];
  for (let i = 0; i < CALLS; i++) times.push(await timedCall(client));
  await client.close();
  return times;
}

try {
  const redis = await startRedis();
  const setups = [
    ['1 replica, no Redis', await deployment(1, undefined)],
    ['1 replica, Redis', await deployment(1, redis)],
    ['2 replicas, Redis', await deployment(2, redis)],
  ];
  const rows = [];
  for (const era of ['2025', '2026']) {
    const measured = {};
    // Two rounds, alternating, so that drift in the machine's load hits every setup.
    for (let round = 0; round < 2; round++) for (const [name, d] of setups) (measured[name] ??= []).push(...(await latencies(d, era)));
    for (const [name] of setups) rows.push({ era, name, p50: median(measured[name]), p99: p99(measured[name]) });
  }
  console.log(`\n### Replicas behind haproxy: one read_text_file per call (${CALLS * 2} calls per row; load average ${os.loadavg().map((n) => n.toFixed(2)).join(', ')})\n`);
  console.log('| era | setup | p50 | p99 |');
  console.log('|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.era === '2025' ? '2025-11-25 session' : '2026-07-28'} | ${r.name} | ${formatMs(r.p50)} | ${formatMs(r.p99)} |`);
  for (const era of ['2025', '2026']) {
    const without = rows.find((r) => r.era === era && r.name === '1 replica, no Redis');
    const withRedis = rows.find((r) => r.era === era && r.name === '1 replica, Redis');
    const added = withRedis.p50 - without.p50;
    console.log(`Redis adds ${formatMs(added)} per call at p50 (${era === '2025' ? '2025-11-25 sessions' : '2026-07-28'}; target under 0.5 ms: ${added < 0.5 ? 'met' : 'NOT met'})`);
  }

  // 2. Redis memory per open session.
  const [, two] = setups[2];
  const before = redisUsedMemory(redis.port);
  const open = [];
  for (let i = 0; i < 200; i++) {
    const client = await connect('2025', two.url);
    for (let j = 0; j < 3; j++) await timedCall(client);
    open.push(client);
  }
  const after = redisUsedMemory(redis.port);
  console.log(`Redis memory per open 2025 session: ${((after - before) / 200 / 1024).toFixed(1)} KiB (200 sessions with 3 calls each: the record and each stream's events)`);
  for (const client of open) await client.close();

  // 3. A replica killed and started again under load.
  const legacy = await connect('2025', two.url);
  const modern = await connect('2026', two.url);
  let failed = 0;
  const window = [];
  let running = true;
  const loop = async (client) => {
    while (running) {
      const start = performance.now();
      for (let attempt = 1; ; attempt++) {
        try {
          await timedCall(client, 3_000);
          break;
        } catch (error) {
          failed += 1;
          if (attempt >= 4) throw error;
          await new Promise((r) => setTimeout(r, 200 * attempt));
        }
      }
      window.push(performance.now() - start);
    }
  };
  const loops = [loop(legacy), loop(legacy), loop(modern), loop(modern)];
  await new Promise((r) => setTimeout(r, 1_000));
  two.replicas[0].kill('SIGKILL');
  await new Promise((r) => setTimeout(r, 1_000));
  two.replicas[0] = await startReplica(two.ports[0], two.lbPort, redis.url);
  await new Promise((r) => setTimeout(r, 4_000));
  running = false;
  await Promise.all(loops);
  console.log(
    `replica killed (SIGKILL) and restarted 1 s later under 4 concurrent callers: ${window.length} calls over ~6 s, ${failed} attempts failed and were retried, none failed in the end; slowest call ${formatMs(Math.max(...window))}, p99 ${formatMs(p99(window))}, p50 ${formatMs(median(window))}`,
  );
  await legacy.close();
  await modern.close();
  for (const [, d] of setups) stop(d);
} finally {
  for (const child of children) child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
}
