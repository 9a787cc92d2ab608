#!/usr/bin/env node
// pnpm bench eras: what the 2026-07-28 era costs next to the 2025 one, side by side in one run, on
// the filesystem server's built bin (every figure a median):
//   1. stdio, connect to first result: a 2025 client (the v1 SDK, initialize) against a 2026-07-28
//      client (SDK v2 pinned: server/discover, then the call), each spawning the bin;
//   2. stateless HTTP: one read_text_file per request from a 2026-07-28 client, against the bin's
//      --http mode and against a bare SDK v2 handler (createMcpHandler + toNodeHandler) serving the
//      same tool in a process of its own; the difference is what our layer adds per request;
//   3. memory: the bin's resident set after 2,000, 6,000 and 10,000 stateless requests (the heap
//      settles within the first few thousand; growth after that would be a leak);
//   4. OAuth mode: the same stateless requests with a JWT access token checked on each (the bin
//      with --auth-issuer, an oidc-provider in this process as the authorization server) against
//      the bin without auth, side by side; the difference is what token validation adds once the
//      JWKS is cached (target: at most 0.2 ms), plus the check alone, in process.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { formatMs, loadAverage, median, printTable } from './bench-kit.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'servers', 'filesystem', 'dist', 'index.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 9);
const dir = await mkdtemp(path.join(os.tmpdir(), 'suite-bench-eras-'));
const file = path.join(dir, 'hello.txt');
await writeFile(file, 'hello from the eras benchmark\n'.repeat(20));

/**
 * The SDK client probes a stdio server's era on a throwaway sibling process when given its own
 * StdioClientTransport (some servers exit on a request before initialize); a subclass probes in
 * place. In place is what this measures: the server's cost, not the client's second spawn.
 */
class InPlaceStdio extends StdioV2 {}

async function firstResult(era) {
  const start = performance.now();
  let client;
  if (era === '2025') {
    client = new ClientV1({ name: 'bench', version: '0' });
    await client.connect(new StdioV1({ command: process.execPath, args: [bin, dir], stderr: 'ignore' }));
  } else {
    client = new ClientV2({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await client.connect(new InPlaceStdio({ command: process.execPath, args: [bin, dir], stderr: 'ignore' }));
  }
  const result = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
  const ms = performance.now() - start;
  if (result.isError) throw new Error(`read_text_file failed: ${JSON.stringify(result.content)}`);
  await client.close();
  return ms;
}

// The bare handler: the SDK's own HTTP entry and one tool doing what read_text_file does here.
const BARE = `
import http from 'node:http';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'bare', version: '0' });
  server.registerTool('read_text_file', { description: 'Reads a file.', inputSchema: z.object({ path: z.string() }) }, async ({ path }) => ({ content: [{ type: 'text', text: await readFile(path, 'utf8') }] }));
  return server;
}, { legacy: 'reject' });
const node = toNodeHandler(handler);
const server = http.createServer((req, res) => void node(req, res));
server.listen(0, '127.0.0.1', () => process.stderr.write('listening on http://127.0.0.1:' + server.address().port + '/mcp\\n'));
`;

function startHttp(args, cwd) {
  const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (c) => {
      stderr += c;
      const url = /listening on (http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
      if (url) resolve({ child, url });
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
  });
}

async function perRequest(url, count, token) {
  const client = new ClientV2({ name: 'bench', version: '0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
  const times = [];
  for (let i = 0; i < count; i++) {
    const start = performance.now();
    const result = await client.callTool({ name: 'read_text_file', arguments: { path: file } });
    times.push(performance.now() - start);
    if (result.isError) throw new Error(JSON.stringify(result.content));
  }
  await client.close();
  return times;
}

function rssOf(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) * 1024;
}

try {
  // 1. Alternate the eras so that drift in the machine's load hits both.
  const connect = { '2025': [], '2026': [] };
  await firstResult('2025');
  await firstResult('2026');
  for (let i = 0; i < RUNS; i++) {
    connect['2025'].push(await firstResult('2025'));
    connect['2026'].push(await firstResult('2026'));
  }

  // 2. Both servers up at once; rounds alternate between them.
  const ours = await startHttp([bin, dir, '--http', '--port', '0']);
  const bare = await startHttp(['--input-type=module', '-e', BARE], path.join(root, 'shared'));
  const oursTimes = [];
  const bareTimes = [];
  await perRequest(ours.url, 50);
  await perRequest(bare.url, 50);
  for (let round = 0; round < RUNS; round++) {
    oursTimes.push(median(await perRequest(ours.url, 100)));
    bareTimes.push(median(await perRequest(bare.url, 100)));
  }

  // 3. Memory of the bin's HTTP process as requests accumulate.
  await perRequest(ours.url, Math.max(0, 2000 - 50 - RUNS * 100));
  const after2k = rssOf(ours.child.pid);
  await perRequest(ours.url, 4000);
  const after6k = rssOf(ours.child.pid);
  await perRequest(ours.url, 4000);
  const after10k = rssOf(ours.child.pid);
  ours.child.kill();
  bare.child.kill();

  // 4. OAuth mode against no auth, both bins up at once, rounds alternating.
  const { startAuthorizationServer, freePort } = await import(path.join(root, 'test-kit', 'dist', 'authorization-server.js'));
  const { ProtectedResource, serverScopes } = await import(path.join(root, 'shared', 'dist', 'auth', 'index.js'));
  const as = await startAuthorizationServer({ clients: { bench: 'filesystem:read' }, scopes: ['filesystem:read', 'filesystem:write'] });
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}/mcp`;
  const guarded = await startHttp([bin, dir, '--http', '--port', String(port), '--auth-issuer', as.issuer, '--public-url', publicUrl]);
  const open = await startHttp([bin, dir, '--http', '--port', '0']);
  const token = await as.clientCredentialsToken('bench', publicUrl, 'filesystem:read');
  const guardedTimes = [];
  const openTimes = [];
  await perRequest(guarded.url, 50, token);
  await perRequest(open.url, 50);
  for (let round = 0; round < RUNS; round++) {
    guardedTimes.push(median(await perRequest(guarded.url, 100, token)));
    openTimes.push(median(await perRequest(open.url, 100)));
  }
  guarded.child.kill();
  open.child.kill();
  // The check alone, in this process: the JWKS fetched by the first call, then cached.
  const resource = await ProtectedResource.start({ issuer: as.issuer, publicUrl, scopes: serverScopes('filesystem', true) });
  const header = `Bearer ${token}`;
  const target = new URL(publicUrl);
  for (let i = 0; i < 200; i++) await resource.authenticate(header, target);
  const checks = [];
  for (let i = 0; i < 2000; i++) {
    const start = performance.now();
    const outcome = await resource.authenticate(header, target);
    checks.push(performance.now() - start);
    if (!outcome.auth) throw new Error('the bench token was refused');
  }
  await as.close();

  const c25 = median(connect['2025']);
  const c26 = median(connect['2026']);
  const o = median(oursTimes);
  const b = median(bareTimes);
  printTable('Protocol eras (filesystem, medians)', ['2026-07-28', '2025-11-25 / bare SDK'], [
    { name: `stdio: spawn, connect, first read_text_file (${RUNS} runs each)`, ours: c26, theirs: c25, unit: 'ms' },
    { name: `HTTP, 2026-07-28: one read_text_file per request (median of ${RUNS} x 100)`, ours: o, theirs: b, unit: 'ms', note: `ours - bare = ${formatMs(o - b)} per request (target: at most 1 ms)` },
  ]);
  console.log(`HTTP overhead of our layer over the bare SDK handler: ${formatMs(o - b)} per request (median)`);
  const mib = (n) => `${(n / 2 ** 20).toFixed(1)} MiB`;
  console.log(`memory: RSS ${mib(after2k)} after 2,000 stateless requests, ${mib(after6k)} after 6,000, ${mib(after10k)} after 10,000 (last 4,000: ${after10k >= after6k ? '+' : ''}${mib(after10k - after6k)})`);
  const g = median(guardedTimes);
  const u = median(openTimes);
  printTable('OAuth mode (filesystem, 2026-07-28 stateless HTTP, medians)', ['OAuth (JWT checked)', 'no auth'], [
    { name: `one read_text_file per request (median of ${RUNS} x 100)`, ours: g, theirs: u, unit: 'ms', note: `validation adds ${formatMs(g - u)} per request (target: at most 0.2 ms)` },
  ]);
  console.log(`token check alone (in process, JWKS cached, 2,000 checks): p50 ${formatMs(median(checks))}; load average ${loadAverage()}`);
  console.log(`targets: 2026 connect-to-first-result no slower than 2025 ${c26 <= c25 * 1.05 ? 'met' : 'NOT met'}; HTTP overhead at most 1 ms ${o - b <= 1 ? 'met' : 'NOT met'}; memory flat (under 5 MiB over the last 4,000) ${after10k - after6k < 5 * 2 ** 20 ? 'met' : 'NOT met'}; OAuth validation at most 0.2 ms per request ${g - u <= 0.2 && median(checks) <= 0.2 ? 'met' : 'NOT met'} (side by side ${formatMs(g - u)}, the check alone ${formatMs(median(checks))})`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
