// Shared helpers for the per-server benchmarks (servers/<name>/bench/bench.mjs).
// Every figure is a median over repeated runs; results print side by side with ratios.
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Runs fn `runs` times (after `warmup` unmeasured runs) and returns the median in ms. */
export async function measure(fn, { runs = 5, warmup = 1 } = {}) {
  for (let i = 0; i < warmup; i++) await fn();
  const times = [];
  let last;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    last = await fn();
    times.push(performance.now() - start);
  }
  return { ms: median(times), last };
}

/** Spawns a stdio MCP server and connects an SDK client; returns { client, close, startupMs, pid }. */
export async function connectStdio(command, args, { env, cwd } = {}) {
  const start = performance.now();
  const transport = new StdioClientTransport({ command, args, env: { ...process.env, ...env }, cwd, stderr: 'pipe' });
  transport.stderr?.on('data', () => {});
  const client = new Client({ name: 'suite-bench', version: '0.0.0' }, { capabilities: {} });
  await client.connect(transport);
  await client.listTools();
  const startupMs = performance.now() - start;
  return { client, startupMs, pid: transport.pid, close: () => client.close() };
}

/** Bytes of the text content of a tool result (what the model would have to read). */
export function resultBytes(result) {
  return (result.content ?? []).reduce((n, c) => n + (c.type === 'text' ? Buffer.byteLength(c.text) : 0), 0);
}

export function formatMs(ms) {
  if (ms === undefined || Number.isNaN(ms)) return 'n/a';
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(2)} ms`;
}

export function formatBytes(n) {
  if (n === undefined) return 'n/a';
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (n >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${n} B`;
}

/**
 * Prints a Markdown table: rows of { name, ours, theirs, unit: 'ms'|'bytes'|'text', note }.
 * The ratio is theirs/ours for times (higher = we are faster).
 */
export function printTable(title, columns, rows) {
  const [oursName, theirsName] = columns;
  const lines = [`\n### ${title}\n`, `| measure | ${oursName} | ${theirsName} | ratio (${theirsName} / ${oursName}) |`, '|---|---|---|---|'];
  for (const row of rows) {
    const fmt = row.unit === 'bytes' ? formatBytes : row.unit === 'text' ? (v) => String(v ?? 'n/a') : formatMs;
    const ratio = typeof row.ours === 'number' && typeof row.theirs === 'number' && row.ours > 0 ? `${(row.theirs / row.ours).toFixed(2)}x` : (row.note ?? '');
    lines.push(`| ${row.name} | ${fmt(row.ours)} | ${fmt(row.theirs)} | ${ratio} |`);
  }
  console.log(lines.join('\n'));
}
