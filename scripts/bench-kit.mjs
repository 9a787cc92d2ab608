// Shared helpers for the per-server benchmarks (servers/<name>/bench/bench.mjs).
// Every figure is a median over repeated runs; results print side by side with ratios.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

/**
 * ripgrep for the search comparisons: on PATH, or installed with apt-get (Debian's `ripgrep`) when
 * this runs as root on a Debian-like system. Returns its command, or undefined (the rows are then
 * left out, with a note): CI does not need it.
 */
export function ensureRipgrep(log = (m) => process.stderr.write(`${m}\n`)) {
  const found = () => spawnSync('rg', ['--version'], { encoding: 'utf8' });
  let probe = found();
  if (probe.status !== 0 && process.getuid?.() === 0 && spawnSync('apt-get', ['--version']).status === 0) {
    log('ripgrep is not installed: apt-get install -y ripgrep');
    spawnSync('apt-get', ['install', '-y', 'ripgrep'], { stdio: 'ignore' });
    probe = found();
  }
  if (probe.status !== 0) {
    log('ripgrep is not installed and could not be (apt-get install ripgrep): its rows are left out.');
    return undefined;
  }
  log(`using ${probe.stdout.split('\n')[0]}`);
  return 'rg';
}

/**
 * The previous release's code path, to run beside the current one: the server as it was at a git
 * revision (`--previous <rev>`, default the merge-base of HEAD with `main`: the code before this
 * branch), exported with `git archive` into .bench/previous-<sha>/ (ignored by git, kept for the
 * next run), installed from the pnpm store and built. `--previous <directory>` takes a checkout
 * that is already built instead. Undefined, with a note, when neither works (the rows are then
 * left out): it needs git history, and the install needs the packages in the store.
 */
export function previousBin(server, root, argv = process.argv) {
  const at = argv.indexOf('--previous');
  const asked = at !== -1 ? argv[at + 1] : undefined;
  const note = (why) => {
    process.stderr.write(`no previous release to compare with (${why}); its rows are left out.\n`);
    return undefined;
  };
  if (asked && existsSync(path.join(asked, 'servers', server, 'dist', 'index.js'))) {
    return { bin: path.join(path.resolve(asked), 'servers', server, 'dist', 'index.js'), label: 'previous' };
  }
  const git = (...args) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  const rev = asked ?? git('merge-base', 'HEAD', 'main').stdout?.trim();
  const sha = rev ? git('rev-parse', '--short', `${rev}^{commit}`).stdout?.trim() : undefined;
  if (!sha) return note(`no revision ${rev ?? 'main'} in this repository`);
  const label = `previous (${sha})`;
  const dir = path.join(root, '.bench', `previous-${sha}`);
  const bin = path.join(dir, 'servers', server, 'dist', 'index.js');
  if (existsSync(bin)) return { bin, label };
  process.stderr.write(`building the previous release (${sha}) in ${path.relative(root, dir)}…\n`);
  mkdirSync(dir, { recursive: true });
  const archive = spawnSync('sh', ['-c', `git archive ${sha} | tar -x -C "${dir}"`], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  if (archive.status !== 0) return note('git archive failed');
  const pnpm = (...args) => spawnSync('npx', ['-y', 'pnpm@10', ...args], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] }).status === 0;
  if (!pnpm('install', '--offline', '--frozen-lockfile') && !pnpm('install', '--frozen-lockfile')) return note('its install failed');
  if (!pnpm('--filter', '@suite/shared', '--filter', `@suite/server-${server}`, 'build') || !existsSync(bin)) return note('its build failed');
  return { bin, label };
}

/**
 * CPU time a process has used so far, every thread of it (its worker threads included), in ms:
 * the sum of the threads' run time in /proc (Linux; nanoseconds, so a 50 ms call is measured
 * exactly). On a loaded machine this is the steadier figure: wall time then depends on what else
 * runs, CPU time on what the process does.
 */
export function processCpuMs(pid) {
  let ns = 0;
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // A thread that ended meanwhile: its time is gone with it (a worker kept warm does not end).
    }
  }
  return ns / 1e6;
}

/** CPU time (user + system, ms) of this process's finished children so far: what the commands run with timeProcess used. */
export function childrenCpuMs() {
  const fields = readFileSync('/proc/self/stat', 'utf8').replace(/^.*\) /, '').split(' ');
  // After the name: state is field 3, so cutime and cstime (fields 16 and 17) are at 13 and 14; in clock ticks (100 a second).
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** The load average now, for the record next to the figures. */
export function loadAverage() {
  return os.loadavg().map((n) => n.toFixed(2)).join(', ');
}

/** Runs a command once and returns its wall time in ms (exit status 0 or 1 only: 1 is "no match" for grep and rg). */
export function timeProcess(command, argv, options = {}) {
  const start = performance.now();
  const result = spawnSync(command, argv, { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, ...options });
  const ms = performance.now() - start;
  if (result.status !== 0 && result.status !== 1) throw new Error(`${command} ${argv.join(' ')} failed: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

/**
 * Prints a Markdown table of searches against ripgrep: ours, ripgrep, ours / ripgrep (the target
 * is at most `target`), and any further columns (the previous release, grep) with their ratio to ours.
 */
export function printSearchTable(title, rows, { target = 1.5, extra = [] } = {}) {
  const head = ['measure', 'ours', 'ripgrep', `ours / ripgrep (target ≤ ${target}x)`, ...extra.flatMap((c) => [c.label, `${c.label} / ours`]), 'CPU ms: ours / ripgrep'];
  const lines = [`\n### ${title}\n`, `| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`];
  for (const row of rows) {
    const ratio = row.rg !== undefined ? `${(row.ours / row.rg).toFixed(2)}x ${row.ours / row.rg <= target ? '(met)' : '(not met)'}` : 'n/a';
    const cells = [row.name, formatMs(row.ours), row.rg !== undefined ? `${formatMs(row.rg)}${row.rgNote ? ` (${row.rgNote})` : ''}` : 'n/a', ratio];
    for (const c of extra) {
      const v = row[c.key];
      cells.push(v !== undefined ? formatMs(v) : 'n/a', v !== undefined ? `${(v / row.ours).toFixed(2)}x` : 'n/a');
    }
    cells.push(row.oursCpu !== undefined && row.rgCpu !== undefined ? `${row.oursCpu.toFixed(0)} / ${row.rgCpu.toFixed(0)} (${(row.oursCpu / row.rgCpu).toFixed(2)}x)` : 'n/a');
    lines.push(`| ${cells.join(' | ')} |`);
  }
  console.log(lines.join('\n'));
}
