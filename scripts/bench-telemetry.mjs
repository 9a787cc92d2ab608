#!/usr/bin/env node
// pnpm bench telemetry: what telemetry costs a stdio call, side by side in one run, on the
// filesystem server's built bin (one read_text_file of a small file per call):
//   - the previous release (no telemetry code at all; `--previous <checkout>` to use a built
//     checkout, else the merge-base with main is built under .bench/),
//   - this build with telemetry off (no OTEL_* variable: the API's no-op spans and meters),
//   - this build with telemetry on (spans and metrics over OTLP/HTTP to a sink in this process,
//     every span sampled, plus Prometheus on --metrics-port).
// The servers run at once and take turns, a batch of calls each per round in rotating order, so
// that a change of load on the machine falls on all of them alike. Figures are per-call medians, of
// wall time and of the server process's CPU time (from /proc, every thread), the steadier one under load.
import http from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connectStdio, formatMs, loadAverage, median, previousBin, processCpuMs } from './bench-kit.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'servers', 'filesystem', 'dist', 'index.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const BATCH = Number(process.env.BENCH_BATCH ?? 40);
const WARMUP = 300;

const dir = await mkdtemp(path.join(os.tmpdir(), 'suite-bench-telemetry-'));
const file = path.join(dir, 'hello.txt');
await writeFile(file, 'hello from the telemetry benchmark\n'.repeat(20));

// An OTLP/HTTP sink: takes every export and answers 200, as a collector would.
let exports = 0;
const sink = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    exports += 1;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
  });
});
await new Promise((resolve) => sink.listen(0, '127.0.0.1', resolve));
const endpoint = `http://127.0.0.1:${sink.address().port}`;

const off = Object.fromEntries(Object.keys(process.env).filter((k) => k.startsWith('OTEL_')).map((k) => [k, undefined]));
const variants = [];
const previous = previousBin('filesystem', root);
if (previous) variants.push({ name: previous.label, bin: previous.bin, args: [], env: off });
variants.push({ name: 'telemetry off', bin, args: [], env: off });
variants.push({
  name: 'telemetry on (OTLP + Prometheus)',
  bin,
  args: ['--metrics-port', '0'],
  env: { ...off, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on', OTEL_METRIC_EXPORT_INTERVAL: '1000' },
});

const load = { before: loadAverage() };
const servers = [];
for (const variant of variants) {
  const env = Object.fromEntries(Object.entries({ ...process.env, ...variant.env }).filter(([, v]) => v !== undefined));
  const server = await connectStdio(process.execPath, [variant.bin, ...variant.args, dir], { env });
  servers.push({ ...variant, ...server, times: [], cpu: [] });
}
const call = (server) => server.client.callTool({ name: 'read_text_file', arguments: { path: file } });
for (const server of servers) for (let i = 0; i < WARMUP; i++) await call(server);

for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < servers.length; k++) {
    const server = servers[(round + k) % servers.length];
    const cpuBefore = processCpuMs(server.pid);
    for (let i = 0; i < BATCH; i++) {
      const start = performance.now();
      const result = await call(server);
      server.times.push(performance.now() - start);
      if (result.isError) throw new Error(`${server.name}: ${JSON.stringify(result.content)}`);
    }
    // The server's own CPU time per call in this batch: on a loaded machine the steadier figure.
    server.cpu.push((processCpuMs(server.pid) - cpuBefore) / BATCH);
  }
}
load.after = loadAverage();

const baseline = servers.find((s) => s.name === 'telemetry off');
const p = (values, q) => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)];
const lines = [
  `\n### stdio call latency, read_text_file (${ROUNDS} rounds × ${BATCH} calls per server, after ${WARMUP} warm-up calls; load average ${load.before} before, ${load.after} after)\n`,
  '| variant | median | p90 | median / telemetry off | server CPU per call (median of batches) | CPU / telemetry off |',
  '|---|---|---|---|---|---|',
  ...servers.map(
    (s) =>
      `| ${s.name} | ${formatMs(median(s.times))} | ${formatMs(p(s.times, 0.9))} | ${(median(s.times) / median(baseline.times)).toFixed(3)}x | ${(median(s.cpu) * 1000).toFixed(0)} µs | ${(median(s.cpu) / median(baseline.cpu)).toFixed(3)}x |`,
  ),
];
console.log(lines.join('\n'));
process.stdout.write(`\nOTLP exports received from the telemetry-on server: ${exports}\n`);
for (const server of servers) await server.close();
sink.close();
await rm(dir, { recursive: true, force: true });
