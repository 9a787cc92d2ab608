// pnpm bench logs: the built server over stdio (the real SDK client) on a generated 1 GB log, side by
// side in one run with GNU grep -c, tail -n and tail -F on the same file. Every time is a median; the
// server's peak memory is its VmHWM (the scan worker runs in the same process). The log lives in a
// temporary directory that is removed at the end, even on failure.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, statfsSync } from 'node:fs';
import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connectStdio, ensureRipgrep, formatBytes, childrenCpuMs, loadAverage, median, previousBin, printSearchTable, processCpuMs, printTable, timeProcess } from '../../../scripts/bench-kit.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OURS = path.resolve(here, '..', 'dist', 'index.js');

const args = new Set(process.argv.slice(2));
const QUICK = args.has('--quick');
/** `--only search`: only the searches against ripgrep and the previous release. */
/** Runs of each search (medians): more than the other measures take, the figures the target is judged on. */
const SEARCH_RUNS = QUICK ? 3 : 9;
/**
 * Unmeasured runs of each search first, on every side: a server's first few searches pay V8's
 * compiling of the search loops (measured: settled after three); what a running server does after
 * that is what these figures compare.
 */
const SEARCH_WARMUP = 3;
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
const ONLY_SEARCH = ONLY === 'search';
/** `--only json`: search_logs with a field filter over JSON lines against jq and ripgrep | jq; `--json-mb N` sets the size (default 1024). */
const ONLY_JSON = ONLY === 'json';
const JSON_BYTES = (process.argv.includes('--json-mb') ? Number(process.argv[process.argv.indexOf('--json-mb') + 1]) : QUICK ? 256 : 1024) * 1024 * 1024;
const ROOT = path.resolve(here, '..', '..', '..');
const TARGET_BYTES = QUICK ? 256 * 1024 * 1024 : 1024 * 1024 * 1024;
const RUNS = QUICK ? 3 : 5;
const RARE = 'ZX81-RARE-TOKEN';
const RARE_EVERY = 1_000_003;

function log(message) {
  process.stderr.write(`${message}\n`);
}

async function generate(file, bytes) {
  const started = performance.now();
  const stream = createWriteStream(file);
  const base = Date.now() - 86_400_000;
  const levels = ['INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'INFO', 'DEBUG', 'WARN', 'INFO', 'INFO'];
  let written = 0;
  let n = 0;
  let rare = 0;
  while (written < bytes) {
    let chunk = '';
    for (let i = 0; i < 20_000; i++) {
      n++;
      const level = n % 997 === 0 ? 'ERROR' : levels[n % 10];
      const tail = n % RARE_EVERY === 0 ? ` ${RARE}` : '';
      if (tail) rare++;
      chunk += `${new Date(base + Math.floor(n / 12)).toISOString()} ${level} request ${String(n).padStart(9, '0')} served in ${n % 1000}ms by worker-${n % 16} path=/api/v1/orders/${n % 5000}${tail}\n`;
      if (level === 'ERROR') chunk += `java.lang.IllegalStateException: order ${n % 5000} is locked\n\tat com.example.Orders.update(Orders.java:${n % 400})\n`;
    }
    written += Buffer.byteLength(chunk);
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once('drain', resolve));
  }
  await new Promise((resolve, reject) => stream.end((error) => (error ? reject(error) : resolve())));
  log(`generated ${formatBytes(written)} (${n} lines, ${rare} rare ones) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { lines: n, rare, bytes: written };
}

function timeCommand(command, argv) {
  const start = performance.now();
  const result = spawnSync(command, argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - start;
  if (result.status !== 0 && result.status !== 1) throw new Error(`${command} failed: ${result.stderr}`);
  return { ms, stdout: result.stdout };
}

async function timeTool(client, name, args, runs, warmup = 1) {
  const times = [];
  let last;
  for (let i = 0; i < runs + warmup; i++) {
    const start = performance.now();
    last = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
    if (i >= warmup) times.push(performance.now() - start);
  }
  if (last.isError) throw new Error(`${name} failed: ${last.content?.[0]?.text}`);
  return { ms: median(times), last };
}

async function peakRss(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (key) => Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

/** Time from an append to the first line out of `tail -F` (inotify), as a reference for notification latency. */
async function tailFollowLatency(file, runs) {
  const child = spawn('tail', ['-F', '-n', '0', file], { stdio: ['ignore', 'pipe', 'ignore'] });
  const times = [];
  await new Promise((r) => setTimeout(r, 300));
  for (let i = 0; i < runs; i++) {
    const seen = new Promise((resolve) => child.stdout.once('data', resolve));
    const start = performance.now();
    await appendFile(file, `${new Date().toISOString()} INFO follow ${i}\n`);
    await seen;
    times.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 300));
  }
  child.kill();
  return median(times);
}

async function notificationLatency(client, notifications, uri, file, runs) {
  await client.subscribeResource({ uri });
  const times = [];
  for (let i = 0; i < runs; i++) {
    const before = notifications.length;
    const start = performance.now();
    await appendFile(file, `${new Date().toISOString()} INFO appended ${i}\n`);
    while (notifications.length === before) await new Promise((r) => setTimeout(r, 1));
    times.push(performance.now() - start);
    // Let the hub's debounce window close, so each append is measured on its own.
    await new Promise((r) => setTimeout(r, 1200));
  }
  await client.unsubscribeResource({ uri });
  return median(times);
}

/** JSON lines as a service writes them; every 10,007th line is the billing service's, half of those with status 503. */
async function generateJson(file, bytes) {
  const stream = createWriteStream(file);
  const base = Date.now() - 86_400_000;
  const services = ['api', 'auth', 'worker', 'api', 'api'];
  let written = 0;
  let n = 0;
  let matching = 0;
  while (written < bytes) {
    let chunk = '';
    for (let i = 0; i < 20_000; i++) {
      n++;
      const billing = n % 10_007 === 0;
      const status = billing ? (Math.floor(n / 10_007) % 2 === 0 ? 503 : 200) : n % 50 === 0 ? 500 : 200;
      if (billing && status >= 500) matching++;
      const record = { time: new Date(base + Math.floor(n / 12)).toISOString(), level: status >= 500 ? 'error' : 'info', service: billing ? 'billing' : services[n % 5], status, latency_ms: n % 1000, path: `/api/v1/orders/${n % 5000}`, msg: 'request served' };
      chunk += `${JSON.stringify(record)}\n`;
    }
    written += Buffer.byteLength(chunk);
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once('drain', resolve));
  }
  await new Promise((resolve, reject) => stream.end((error) => (error ? reject(error) : resolve())));
  return { bytes: written, lines: n, matching };
}

/** search_logs with fields against jq alone and ripgrep piped into jq, on the same JSON lines; the counts must agree. */
async function jsonComparison(dir) {
  if (spawnSync('jq', ['--version']).status !== 0) {
    console.error('jq is not installed (apt-get install jq): the JSON comparison needs it.');
    process.exit(2);
  }
  const rg = ensureRipgrep(log);
  const file = path.join(dir, 'big.jsonl');
  const { bytes, lines, matching } = await generateJson(file, JSON_BYTES);
  log(`generated ${formatBytes(bytes)} of JSON lines (${lines} lines, ${matching} matching)`);
  const filter = 'select(.service == "billing" and .status >= 500)';
  // The pipelines run under sh with the file as "$1": nothing is interpolated into the command.
  const count = (command) => {
    const t = timeProcess('sh', ['-c', `${command} | wc -l`, 'sh', file]);
    return { ms: t.ms, count: Number(t.stdout.trim()) };
  };
  const server = await connectStdio(process.execPath, [OURS, dir]);
  const loadBefore = loadAverage();
  const times = { ours: [], jq: [], rgjq: [] };
  try {
    for (let run = -1; run < RUNS; run++) {
      const started = performance.now();
      const out = await server.client.callTool({ name: 'search_logs', arguments: { paths: [file], fields: { service: 'billing', status: '>=500' }, maxResults: 2000, timeBudgetSeconds: 300 } }, undefined, { timeout: 600_000 });
      if (out.isError) throw new Error(`search_logs failed: ${out.content?.[0]?.text}`);
      if (run >= 0) times.ours.push(performance.now() - started);
      if (out.structuredContent.matches.length !== matching) throw new Error(`search_logs found ${out.structuredContent.matches.length}, not ${matching}`);
      const jq = count(`jq -c '${filter}' "$1"`);
      if (jq.count !== matching) throw new Error(`jq found ${jq.count}, not ${matching}`);
      if (run >= 0) times.jq.push(jq.ms);
      if (rg) {
        const piped = count(`rg -F '"billing"' "$1" | jq -c '${filter}'`);
        if (piped.count !== matching) throw new Error(`rg | jq found ${piped.count}, not ${matching}`);
        if (run >= 0) times.rgjq.push(piped.ms);
      }
    }
  } finally {
    await server.close().catch(() => undefined);
  }
  const rows = [{ name: `fields {service: "billing", status: ">=500"} (${matching} of ${lines} lines)`, ours: median(times.ours), theirs: median(times.jq), unit: 'ms' }];
  if (rg) rows.push({ name: 'the same, against ripgrep (`rg -F \'"billing"\'`) piped into jq', ours: median(times.ours), theirs: median(times.rgjq), unit: 'ms' });
  printTable(`logs: search_logs with a field filter over ${formatBytes(bytes)} of JSON lines, medians of ${RUNS} (ours over stdio; load average ${loadBefore} before, ${loadAverage()} after)`, ['@suite/server-logs', 'jq, or rg then jq'], rows);
}

/** `--only journal`: search_logs on logs://journal against `journalctl --grep` on the same journal files; `--journal-entries N` (default 500,000). */
const ONLY_JOURNAL = ONLY === 'journal';
const JOURNAL_ENTRIES = process.argv.includes('--journal-entries') ? Number(process.argv[process.argv.indexOf('--journal-entries') + 1]) : QUICK ? 100_000 : 500_000;
const JOURNAL_RARE = 'ZX81-RARE-JOURNAL';

/** A journal file of `entries` entries (20 units, an error in 97), written by systemd-journal-remote from the export format. */
async function generateJournal(file, entries) {
  const { exportFormat, journalRemote, bootId } = await import('@suite/test-kit/journal');
  const remote = journalRemote();
  if (!remote) {
    console.error('systemd-journal-remote is not installed (apt-get install systemd-journal-remote): the journal comparison needs it.');
    process.exit(2);
  }
  const started = performance.now();
  const child = spawn(remote, [`--output=${file}`, '-'], { stdio: ['pipe', 'ignore', 'ignore'] });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const boot = bootId();
  const base = (Date.now() - 86_400_000) * 1000;
  let rare = 0;
  for (let i = 0; i < entries; i += 5000) {
    const batch = [];
    for (let k = i; k < Math.min(entries, i + 5000); k++) {
      const tail = k % 2003 === 0 ? ` ${JOURNAL_RARE}` : '';
      if (tail) rare++;
      batch.push({ micros: base + k * 1000, boot, unit: `svc${k % 20}.service`, priority: k % 97 === 0 ? 3 : 6, pid: 1000 + (k % 20), message: `request ${k} served in ${k % 1000}ms by worker-${k % 16}${tail}` });
    }
    if (!child.stdin.write(exportFormat(batch))) await new Promise((resolve) => child.stdin.once('drain', resolve));
  }
  child.stdin.end();
  if ((await exited) !== 0) throw new Error('systemd-journal-remote failed');
  log(`generated a journal of ${entries} entries (${rare} rare ones) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return rare;
}

/** search_logs on logs://journal against journalctl --grep (PCRE2 over MESSAGE, case-sensitive) on the same files; the counts must agree. */
async function journalComparison(dir) {
  const rare = await generateJournal(path.join(dir, 'bench.journal'), JOURNAL_ENTRIES);
  const journalctl = (argv) => {
    const t = timeProcess('journalctl', ['--directory', dir, '--no-pager', '--quiet', ...argv]);
    return { ms: t.ms, count: t.stdout.split('\n').filter(Boolean).length };
  };
  const server = await connectStdio(process.execPath, [OURS, '--journal-dir', dir]);
  const loadBefore = loadAverage();
  const times = { ours: [], theirs: [], oursUnit: [], theirsUnit: [] };
  try {
    for (let run = -1; run < RUNS; run++) {
      let started = performance.now();
      const out = await server.client.callTool({ name: 'search_logs', arguments: { paths: ['logs://journal'], pattern: JOURNAL_RARE, literal: true, maxResults: 2000, timeBudgetSeconds: 300 } }, undefined, { timeout: 600_000 });
      if (out.isError) throw new Error(`search_logs failed: ${out.content?.[0]?.text}`);
      if (run >= 0) times.ours.push(performance.now() - started);
      if (out.structuredContent.matches.length !== rare) throw new Error(`search_logs found ${out.structuredContent.matches.length}, not ${rare}`);
      const grep = journalctl(['--grep', JOURNAL_RARE, '--case-sensitive=true', '--output', 'cat']);
      if (grep.count !== rare) throw new Error(`journalctl --grep found ${grep.count}, not ${rare}`);
      if (run >= 0) times.theirs.push(grep.ms);
      // One unit's errors: both sides let the journal's indexes pick the entries.
      started = performance.now();
      const unit = await server.client.callTool({ name: 'search_logs', arguments: { paths: ['logs://journal/svc3.service'], level: 'error', maxResults: 2000, timeBudgetSeconds: 300 } }, undefined, { timeout: 600_000 });
      if (unit.isError) throw new Error(`search_logs failed: ${unit.content?.[0]?.text}`);
      if (run >= 0) times.oursUnit.push(performance.now() - started);
      const theirs = journalctl(['--unit', 'svc3.service', '--priority', '0..3', '--output', 'cat']);
      if (theirs.count !== unit.structuredContent.matches.length) throw new Error(`journalctl found ${theirs.count} errors of svc3, search_logs ${unit.structuredContent.matches.length}`);
      if (run >= 0) times.theirsUnit.push(theirs.ms);
    }
  } finally {
    await server.close().catch(() => undefined);
  }
  const rows = [
    { name: `pattern "${JOURNAL_RARE}" (${rare} of ${JOURNAL_ENTRIES} entries), \`journalctl --grep\``, ours: median(times.ours), theirs: median(times.theirs), unit: 'ms' },
    { name: 'one unit\'s errors (logs://journal/svc3.service, level error), `journalctl --unit --priority`', ours: median(times.oursUnit), theirs: median(times.theirsUnit), unit: 'ms' },
  ];
  printTable(`logs: search_logs on the journal against journalctl on the same journal files, medians of ${RUNS} (ours over stdio; load average ${loadBefore} before, ${loadAverage()} after)`, ['@suite/server-logs', 'journalctl'], rows);
}

const tmpRoot = os.tmpdir();
const free = (() => {
  const s = statfsSync(tmpRoot);
  return s.bavail * s.bsize;
})();
if (free < TARGET_BYTES * 1.3) {
  console.error(`Not enough free disk in ${tmpRoot}: ${formatBytes(free)} free, ${formatBytes(TARGET_BYTES * 1.3)} needed. Free some space or run with --quick (256 MiB).`);
  process.exit(2);
}
log(`free disk in ${tmpRoot}: ${formatBytes(free)}`);
for (const tool of ['grep', 'tail']) {
  if (spawnSync(tool, ['--version']).status !== 0) {
    console.error(`${tool} is not installed; the comparison needs GNU ${tool}.`);
    process.exit(2);
  }
}

/**
 * search_logs against ripgrep (`rg -c`, one file: ripgrep reads it through mmap on one thread),
 * GNU grep and the previous release's server, each run timing every contender in turn; the counts
 * must agree.
 */
async function searchComparison(file, rare, client, pid) {
  const rg = ensureRipgrep(log);
  const previous = previousBin('logs', ROOT);
  const prev = previous ? await connectStdio(process.execPath, [previous.bin, path.dirname(file)], { env: { SUITE_LOG_LEVEL: 'emergency' } }) : undefined;
  const cases = [
    { name: `a rare literal (${RARE}, ${rare} lines)`, args: { pattern: RARE, literal: true }, rg: ['-c', '-F', RARE], grep: ['-c', '-F', RARE] },
    { name: 'a rare regular expression (`ZX\\d+-RARE-TOKEN`)', args: { pattern: 'ZX\\d+-RARE-TOKEN' }, rg: ['-c', 'ZX\\d+-RARE-TOKEN'], grep: ['-cE', 'ZX[0-9]+-RARE-TOKEN'] },
  ];
  const rows = [];
  try {
    for (const c of cases) {
      const call = async (target) => {
        const out = await target.callTool({ name: 'search_logs', arguments: { ...c.args, paths: [file], maxResults: 1000 } }, undefined, { timeout: 600_000 });
        if (out.isError) throw new Error(`search_logs failed: ${out.content?.[0]?.text}`);
        return out;
      };
      const times = { ours: [], rg: [], grep: [], previous: [], oursCpu: [], rgCpu: [] };
      for (let run = -SEARCH_WARMUP; run < SEARCH_RUNS; run++) {
        let started = performance.now();
        const cpu = processCpuMs(pid);
        const out = await call(client);
        if (run >= 0) times.ours.push(performance.now() - started);
        if (run >= 0) times.oursCpu.push(processCpuMs(pid) - cpu);
        if (out.structuredContent.matches.length !== rare) throw new Error(`search_logs found ${out.structuredContent.matches.length} lines, not ${rare}`);
        if (rg) {
          const rgCpu = childrenCpuMs();
          const t = timeProcess('rg', [...c.rg, file]);
          if (run >= 0) times.rg.push(t.ms);
          if (run >= 0) times.rgCpu.push(childrenCpuMs() - rgCpu);
          if (Number(t.stdout.trim()) !== rare) throw new Error(`rg counted ${t.stdout.trim()}, not ${rare}`);
        }
        const g = timeProcess('grep', [...c.grep, file]);
        if (run >= 0) times.grep.push(g.ms);
        if (prev) {
          started = performance.now();
          await call(prev.client);
          if (run >= 0) times.previous.push(performance.now() - started);
        }
      }
      const row = { name: c.name, ours: median(times.ours), grep: median(times.grep), ...(prev ? { previous: median(times.previous) } : {}) };
      if (rg) {
        row.rg = median(times.rg);
        // The children's CPU time is counted in clock ticks (10 ms): the mean over the runs is the finer figure.
        row.rgCpu = times.rgCpu.reduce((a, b) => a + b, 0) / times.rgCpu.length;
        row.oursCpu = median(times.oursCpu);
      }
      log(`  ${c.name}: ours ${row.ours.toFixed(1)} ms, ripgrep ${row.rg?.toFixed(1) ?? 'n/a'} ms, grep ${row.grep.toFixed(1)} ms, previous ${row.previous?.toFixed(1) ?? 'n/a'} ms`);
      rows.push(row);
    }
  } finally {
    await prev?.close();
  }
  return { rows, previous };
}

function printSearchComparison(search, loadBefore) {
  printSearchTable(`search_logs against ripgrep (\`rg -c\`) on the ${formatBytes(TARGET_BYTES)} log (medians of ${SEARCH_RUNS}; CPU: every thread of the server, ripgrep's mean; load average ${loadBefore} before, ${loadAverage()} after)`, search.rows, {
    extra: [...(search.previous ? [{ key: 'previous', label: search.previous.label }] : []), { key: 'grep', label: 'grep -c' }],
  });
}

if (ONLY_JOURNAL) {
  const journalDir = await mkdtemp(path.join(tmpRoot, 'suite-logs-bench-journal-'));
  try {
    await journalComparison(journalDir);
  } finally {
    await rm(journalDir, { recursive: true, force: true });
    log(`removed ${journalDir}`);
  }
  process.exit(process.exitCode ?? 0);
}

if (ONLY_JSON) {
  const jsonDir = await mkdtemp(path.join(tmpRoot, 'suite-logs-bench-json-'));
  try {
    await jsonComparison(jsonDir);
  } finally {
    await rm(jsonDir, { recursive: true, force: true });
    log(`removed ${jsonDir}`);
  }
  process.exit(process.exitCode ?? 0);
}

const dir = await mkdtemp(path.join(tmpRoot, 'suite-logs-bench-'));
let server;
const loadBefore = loadAverage();
try {
  const big = path.join(dir, 'big.log');
  const small = path.join(dir, 'small.log');
  const { rare } = await generate(big, TARGET_BYTES);
  const smallBytes = (await generate(small, 1024 * 1024)).bytes;
  // Warm the page cache for everyone alike: grep and the server then both read from memory.
  timeCommand('grep', ['-c', 'no-such-text-anywhere', big]);

  const notifications = [];
  server = await connectStdio(process.execPath, [OURS, dir]);
  if (ONLY_SEARCH) {
    printSearchComparison(await searchComparison(big, rare, server.client, server.pid), loadBefore);
    process.exitCode = 0;
  } else {
    server.client.fallbackNotificationHandler = async (n) => {
      if (n.method === 'notifications/resources/updated') notifications.push(n);
    };
    const rows = [];

    const tailSmall = await timeTool(server.client, 'tail_log', { path: small, lines: 100 }, 20, 3);
    const tailBig = await timeTool(server.client, 'tail_log', { path: big, lines: 100 }, 20, 3);
    const gnuTail = median(Array.from({ length: 20 }, () => timeCommand('tail', ['-n', '100', big]).ms));
    if (tailBig.last.structuredContent.lines.length !== 100) throw new Error('tail_log returned the wrong number of lines');
    rows.push({ name: `tail 100 lines of a ${formatBytes(smallBytes)} log`, ours: tailSmall.ms, theirs: gnuTail, unit: 'ms', note: '' });
    rows.push({ name: `tail 100 lines of the ${formatBytes(TARGET_BYTES)} log`, ours: tailBig.ms, theirs: gnuTail, unit: 'ms' });

    const before = await peakRss(server.pid);
    const search = await timeTool(server.client, 'search_logs', { pattern: RARE, literal: true, paths: [big], maxResults: 1000 }, RUNS);
    const grepRare = median(Array.from({ length: RUNS }, () => timeCommand('grep', ['-c', RARE, big]).ms));
    const grepCount = Number(timeCommand('grep', ['-c', RARE, big]).stdout.trim());
    const found = search.last.structuredContent.matches.length;
    if (found !== grepCount || found !== rare) throw new Error(`search_logs found ${found}, grep ${grepCount}, generated ${rare}`);
    rows.push({ name: `search_logs, rare literal (${found} hits)`, ours: search.ms, theirs: grepRare, unit: 'ms' });

    const regex = await timeTool(server.client, 'search_logs', { pattern: 'ZX\\d+-RARE-TOKEN', paths: [big], maxResults: 1000 }, RUNS);
    const grepRegex = median(Array.from({ length: RUNS }, () => timeCommand('grep', ['-cE', 'ZX[0-9]+-RARE-TOKEN', big]).ms));
    if (regex.last.structuredContent.matches.length !== rare) throw new Error('search_logs (regex) found the wrong number of lines');
    rows.push({ name: 'search_logs, rare regular expression', ours: regex.ms, theirs: grepRegex, unit: 'ms' });
    const afterSearch = await peakRss(server.pid);

    const stats = await timeTool(server.client, 'log_stats', { paths: [big], timeBudgetSeconds: 300 }, QUICK ? 1 : 3, 0);
    const grepErrors = median(Array.from({ length: QUICK ? 1 : 3 }, () => timeCommand('grep', ['-c', ' ERROR ', big]).ms));
    if (!stats.last.structuredContent.complete) throw new Error('log_stats did not finish within its budget');
    rows.push({ name: `log_stats over the whole file (${stats.last.structuredContent.entries} entries)`, ours: stats.ms, theirs: grepErrors, unit: 'ms', note: 'grep -c " ERROR " as a floor' });
    const afterStats = await peakRss(server.pid);

    const uri = `logs://file${big}`;
    const latency = await notificationLatency(server.client, notifications, uri, big, QUICK ? 5 : 10);
    const follow = await tailFollowLatency(big, QUICK ? 5 : 10);
    rows.push({ name: 'append to notifications/resources/updated', ours: latency, theirs: follow, unit: 'ms', note: 'tail -F shows the line' });

    printTable(`logs: ${formatBytes(TARGET_BYTES)} log, medians (ours over stdio; GNU tools as processes)`, ['@suite/server-logs', 'GNU grep / tail'], rows);
    printTable('logs: server memory', ['@suite/server-logs', 'before the searches'], [
      { name: 'peak RSS after the searches (VmHWM)', ours: afterSearch.peak, theirs: before.peak, unit: 'bytes', note: '' },
      { name: 'peak RSS after log_stats (VmHWM)', ours: afterStats.peak, theirs: before.peak, unit: 'bytes', note: '' },
    ]);
    log('searches against ripgrep…');
    printSearchComparison(await searchComparison(big, rare, server.client, server.pid), loadBefore);
  }
} finally {
  await server?.close().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
  log(`removed ${dir}`);
}
