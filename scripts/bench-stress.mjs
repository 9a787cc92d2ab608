// pnpm bench stress: how every server holds up under load, in one run, against its built bin.
//
// Per server:
// - latency of a cheap read-only tool call over stdio with 1, 100 and 1,000 calls in flight (p50, p99
//   of every call's own time, from the SDK client's request to its answer);
// - the server's peak RSS over that run (VmHWM);
// - over Streamable HTTP, the RSS each idle session costs (open N sessions with raw initialize
//   requests, RSS growth / N) and the RSS once the idle timeout has closed them, against the RSS the
//   server started with.
//
// The HTTP figures come from two server processes: one as users run it (V8 collects when it decides
// to, and the server itself once many sessions have closed), and one started with --expose-gc that the
// bench asks for a full collection before every reading (a preload here, not the server, handles
// SIGUSR2). The first is what the targets are judged on; the second separates live memory from
// garbage not yet collected.
//
// Loopback only; temporary directories, the test PostgreSQL database and every process are removed at
// the end, on failure too. Linux (reads /proc/<pid>/status).
import { execFileSync, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { connectStdio, formatBytes, formatMs, median } from './bench-kit.mjs';
import { createScratchDatabase } from './scratch-postgres.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const binOf = (name) => path.join(root, 'servers', name, 'dist', 'index.js');
const ALL = ['filesystem', 'sqlite', 'postgres', 'github', 'logs', 'git-prompts'];

const argv = process.argv.slice(2);
const option = (name) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
};
if (argv.includes('--help')) {
  console.log(`Usage: pnpm bench stress [--quick] [--runs N] [--servers ${ALL.join(',')}] [--sessions N] [--session-timeout SECONDS]

  --quick            fewer samples and 200 sessions (a smoke run; the targets are judged on the full run)
  --runs N           repeat everything N times (default 1) and print medians with the spread (min-max)
  --servers LIST     only these servers (default: all)
  --sessions N       idle HTTP sessions to open (default 1000)
  --session-timeout  the servers' --session-timeout in seconds (default 20; must outlast opening the sessions)
  --part PART        only 'latency' or only 'sessions', without the report (while working on one of them)`);
  process.exit(0);
}
const QUICK = argv.includes('--quick');
const RUNS = Number(option('runs') ?? 1);
const SERVERS = (option('servers') ?? ALL.join(',')).split(',').map((s) => s.trim());
const SESSIONS = Number(option('sessions') ?? (QUICK ? 200 : 1000));
const SESSION_TIMEOUT_S = Number(option('session-timeout') ?? 20);
const PART = option('part');
for (const name of SERVERS) if (!ALL.includes(name)) throw new Error(`Unknown server ${name}; known: ${ALL.join(', ')}`);
if (!(RUNS >= 1 && RUNS <= 10)) throw new Error('--runs must be 1 to 10');
if (!(SESSIONS >= 10 && SESSIONS <= 5000)) throw new Error('--sessions must be 10 to 5000');
if (!(SESSION_TIMEOUT_S >= 5 && SESSION_TIMEOUT_S <= 600)) throw new Error('--session-timeout must be 5 to 600');
if (PART !== undefined && PART !== 'latency' && PART !== 'sessions') throw new Error("--part must be 'latency' or 'sessions'");
const unbuilt = SERVERS.filter((name) => !existsSync(binOf(name)));
if (unbuilt.length > 0) {
  console.error(`Not built: ${unbuilt.map((s) => `servers/${s}`).join(', ')}. Run: npx -y pnpm@10 build`);
  process.exit(2);
}

/** Concurrency levels and how many calls to time at each (whole rounds of `inFlight` calls). */
const LEVELS = [
  { inFlight: 1, calls: QUICK ? 100 : 300 },
  { inFlight: 100, calls: QUICK ? 300 : 1000 },
  { inFlight: 1000, calls: QUICK ? 1000 : 3000 },
];
/** Sessions opened at once while filling the server (a client pool, not a flood). */
const OPEN_CONCURRENCY = 16;
/** How long the server is left alone before each RSS reading. */
const SETTLE_MS = 3000;

// The SDK's stdio client waits for 'drain' with one listener per blocked write: with 1,000 calls in
// flight that is over Node's warning threshold, in this process (the servers write through their own
// transport, which keeps one listener).
EventEmitter.defaultMaxListeners = 2000;

const TARGETS = { p99At1000Ms: 1000, perSessionBytes: 100 * 1024, afterExpiryRatio: 1.2 };

const log = (message) => process.stderr.write(`${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const requireFrom = (pkg) => createRequire(path.join(root, pkg, 'package.json'));

/** Resident memory of a process in bytes: VmRSS (now) or VmHWM (peak). */
function rss(pid, field = 'VmRSS') {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
  if (!Number.isFinite(kb)) throw new Error(`no ${field} for process ${pid}`);
  return kb * 1024;
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

// --- the servers under test: how to start each, and its cheap read-only call --------------------

/** Each returns { args, env, call, bearer?, cleanup }. */
const SETUPS = {
  async filesystem(tmp) {
    const dir = path.join(tmp, 'files');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'hello.txt'), 'hello\n'.repeat(20));
    return { args: [dir], call: { name: 'read_text_file', arguments: { path: path.join(dir, 'hello.txt') } } };
  },

  async sqlite(tmp) {
    const Database = requireFrom('servers/sqlite')('better-sqlite3');
    const file = path.join(tmp, 'stress.db');
    const db = new Database(file);
    db.exec('CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO people (name) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 1000; i++) insert.run(`person ${i}`);
    })();
    db.close();
    return { args: [file], call: { name: 'read_query', arguments: { sql: 'SELECT id, name FROM people WHERE id = 42' } } };
  },

  async postgres() {
    const db = await createScratchDatabase({
      prefix: 'suite_stress',
      setupSql: 'CREATE TABLE items AS SELECT g AS id, md5(g::text) AS label FROM generate_series(1, 1000) g; ALTER TABLE items ADD PRIMARY KEY (id)',
    });
    return { args: [db.roleUrl], call: { name: 'query', arguments: { sql: 'SELECT id, label FROM items WHERE id = 42' } }, cleanup: db.drop };
  },

  async github() {
    const { loadFakeGithub } = await import(pathToFileURL(path.join(root, 'servers', 'github', 'bench', 'load-fake.mjs')).href);
    const { startFakeGithub, seed, TOKENS } = await loadFakeGithub();
    const fake = await startFakeGithub();
    seed(fake);
    return {
      args: [],
      env: { GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: TOKENS.alice, GITHUB_TOKEN: '' },
      // Over HTTP each session brings its own token.
      bearer: TOKENS.alice,
      call: { name: 'get_issue', arguments: { owner: 'acme', repo: 'widgets', issue_number: 2 } },
      cleanup: () => fake.close(),
    };
  },

  async logs(tmp) {
    const dir = path.join(tmp, 'logs');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'app.log');
    const start = Date.parse('2026-01-01T00:00:00Z');
    await writeFile(file, Array.from({ length: 5000 }, (_, i) => `${new Date(start + i * 1000).toISOString()} INFO request ${i} served in ${i % 300}ms\n`).join(''));
    return { args: [dir], call: { name: 'tail_log', arguments: { path: file, lines: 20 } } };
  },

  async 'git-prompts'(tmp) {
    const repo = path.join(tmp, 'repo');
    const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };
    const git = (...args) => execFileSync('git', args, { cwd: repo, env, stdio: 'ignore' });
    await mkdir(repo, { recursive: true });
    git('init', '-q', '-b', 'main');
    for (let i = 0; i < 20; i++) await writeFile(path.join(repo, `file${i}.txt`), `line ${i}\n`);
    git('add', '-A');
    git('commit', '-q', '-m', 'Initial commit');
    await writeFile(path.join(repo, 'file0.txt'), 'changed\n');
    return { args: [repo], call: { name: 'git_status', arguments: {} } };
  },
};

// --- stdio: latency at 1, 100 and 1,000 in flight, and peak RSS --------------------------------------

async function stdioLoad(name, setup) {
  const server = await connectStdio(process.execPath, [binOf(name), ...setup.args], { env: { SUITE_LOG_LEVEL: 'error', ...setup.env } });
  try {
    const call = () => server.client.callTool(setup.call, undefined, { timeout: 120_000 });
    const first = await call();
    if (first.isError) throw new Error(`${name}: ${setup.call.name} failed: ${JSON.stringify(first.content).slice(0, 300)}`);
    for (let i = 0; i < 50; i++) await call();
    await Promise.all(Array.from({ length: 100 }, call));

    const levels = [];
    for (const { inFlight, calls } of LEVELS) {
      const samples = [];
      let failed = 0;
      for (let round = 0; round < Math.ceil(calls / inFlight); round++) {
        await Promise.all(
          Array.from({ length: inFlight }, async () => {
            const start = performance.now();
            const result = await call().catch((error) => ({ isError: true, error }));
            samples.push(performance.now() - start);
            if (result.isError) failed += 1;
          }),
        );
      }
      if (failed > 0) throw new Error(`${name}: ${failed} of ${samples.length} calls failed at ${inFlight} in flight`);
      samples.sort((a, b) => a - b);
      levels.push({ inFlight, p50: percentile(samples, 50), p99: percentile(samples, 99) });
      log(`  ${name} stdio @${inFlight}: p50 ${formatMs(levels.at(-1).p50)}, p99 ${formatMs(levels.at(-1).p99)} (${samples.length} calls)`);
    }
    return { levels, peakRss: rss(server.pid, 'VmHWM') };
  } finally {
    await server.close();
  }
}

// --- HTTP: RSS per idle session and after the sessions expire -------------------------------------

/** One HTTP request on its own connection (no keep-alive socket left for the server to hold). */
function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', connection: 'close', ...headers } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** initialize, then notifications/initialized: a session as a client leaves it when it goes quiet. */
async function openSession(url, bearer) {
  const auth = bearer ? { authorization: `Bearer ${bearer}` } : {};
  const init = await post(url, auth, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'suite-bench-stress', version: '0.0.0' } },
  });
  const id = init.headers['mcp-session-id'];
  if (init.status !== 200 || !id || !init.body.includes('"result"')) throw new Error(`initialize answered ${init.status}: ${init.body.slice(0, 300)}`);
  const done = await post(url, { ...auth, 'mcp-session-id': id, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, { jsonrpc: '2.0', method: 'notifications/initialized' });
  if (done.status !== 202) throw new Error(`notifications/initialized answered ${done.status}: ${done.body.slice(0, 300)}`);
  return id;
}

/** Starts the bin with --http on a free loopback port; resolves once it prints its URL. */
function startHttp(name, setup, { forcedGc, preload }) {
  const nodeArgs = forcedGc ? ['--expose-gc', '--require', preload] : [];
  const args = ['--http', '--port', '0', '--drain-seconds', '0', '--session-timeout', String(SESSION_TIMEOUT_S), '--max-sessions', String(SESSIONS + 10), ...setup.args];
  const child = spawn(process.execPath, [...nodeArgs, binOf(name), ...args], { env: { ...process.env, SUITE_LOG_LEVEL: 'error', ...setup.env }, stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let stderr = '';
    const timer = setTimeout(() => fail(new Error(`${name} --http did not start within 20 s: ${stderr.slice(-500)}`)), 20_000);
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.once('exit', (code) => fail(new Error(`${name} --http exited with ${code}: ${stderr.slice(-500)}`)));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(stderr)?.[1];
      if (!url) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stderr.removeAllListeners('data');
      child.stderr.resume();
      resolve({
        url,
        pid: child.pid,
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

async function sessionMemory(name, setup, mode) {
  const server = await startHttp(name, setup, mode);
  const reading = async () => {
    if (mode.forcedGc) {
      process.kill(server.pid, 'SIGUSR2');
      await sleep(500);
    }
    return rss(server.pid);
  };
  try {
    await sleep(SETTLE_MS);
    const start = await reading();
    const opened = performance.now();
    const ids = [];
    for (let next = 0; next < SESSIONS; ) {
      const batch = Math.min(OPEN_CONCURRENCY, SESSIONS - next);
      ids.push(...(await Promise.all(Array.from({ length: batch }, () => openSession(server.url, setup.bearer)))));
      next += batch;
    }
    const lastOpened = performance.now();
    await sleep(SETTLE_MS);
    const full = await reading();
    // A reading taken after the first sessions expired would flatter the figure: refuse it.
    const measuredAt = performance.now();
    if (measuredAt - opened > SESSION_TIMEOUT_S * 1000 * 0.9) {
      throw new Error(`${name}: opening ${SESSIONS} sessions took ${((lastOpened - opened) / 1000).toFixed(1)} s, too close to --session-timeout ${SESSION_TIMEOUT_S}; give a longer --session-timeout`);
    }
    const peak = rss(server.pid, 'VmHWM');
    // Every session has expired once the sweep (every timeout/4) has passed the last one's deadline.
    await sleep(Math.max(0, lastOpened + SESSION_TIMEOUT_S * 1250 + 1000 - performance.now()));
    const stale = await post(server.url, { ...(setup.bearer ? { authorization: `Bearer ${setup.bearer}` } : {}), 'mcp-session-id': ids.at(-1), 'mcp-protocol-version': LATEST_PROTOCOL_VERSION }, { jsonrpc: '2.0', id: 2, method: 'ping' });
    if (stale.status !== 404) throw new Error(`${name}: a session was still open after its idle timeout (ping answered ${stale.status})`);
    await sleep(SETTLE_MS);
    const after = await reading();
    // The reducer and the allocator may give memory back later still: one more look after a while.
    await sleep(10_000);
    const later = await reading();
    return { start, full, peak, perSession: (full - start) / SESSIONS, after, later, openSeconds: (lastOpened - opened) / 1000 };
  } finally {
    await server.stop();
  }
}

// --- one run over every server ---------------------------------------------------------------------

async function runServer(name, tmpRoot, preload) {
  const tmp = await mkdtemp(path.join(tmpRoot, `${name}-`));
  const setup = await SETUPS[name](tmp);
  try {
    const stdio = PART === 'sessions' ? undefined : await stdioLoad(name, setup);
    if (stdio) log(`  ${name} stdio peak RSS ${formatBytes(stdio.peakRss)}`);
    if (PART === 'latency') return { name, call: setup.call.name, stdio };
    const plain = await sessionMemory(name, setup, { forcedGc: false, preload });
    log(`  ${name} HTTP: start ${formatBytes(plain.start)}, ${SESSIONS} sessions ${formatBytes(plain.full)} (${formatBytes(plain.perSession)} each, opened in ${plain.openSeconds.toFixed(1)} s), after expiry ${formatBytes(plain.after)}, 10 s later ${formatBytes(plain.later)}`);
    const gc = await sessionMemory(name, setup, { forcedGc: true, preload });
    log(`  ${name} HTTP (forced GC): start ${formatBytes(gc.start)}, ${formatBytes(gc.perSession)} each, after expiry ${formatBytes(gc.after)}, 10 s later ${formatBytes(gc.later)}`);
    return { name, call: setup.call.name, stdio, plain, gc };
  } finally {
    await setup.cleanup?.().catch((error) => log(`cleanup of ${name} failed: ${error}`));
    await rm(tmp, { recursive: true, force: true });
  }
}

const tmpRoot = await mkdtemp(path.join(os.tmpdir(), 'suite-bench-stress-'));
const preload = path.join(tmpRoot, 'gc-on-signal.cjs');
// Measurement only: lets the bench ask the --expose-gc process for a full collection.
await writeFile(preload, "process.on('SIGUSR2', () => { globalThis.gc(); });\n");
const runs = [];
const loadAtStart = os.loadavg()[0];
try {
  for (let run = 1; run <= RUNS; run++) {
    log(`run ${run} of ${RUNS}: ${SERVERS.join(', ')}; ${SESSIONS} sessions, --session-timeout ${SESSION_TIMEOUT_S}`);
    const results = {};
    for (const name of SERVERS) {
      log(`${name}...`);
      results[name] = await runServer(name, tmpRoot, preload);
    }
    runs.push(results);
  }
} finally {
  await rm(tmpRoot, { recursive: true, force: true });
}

if (PART !== undefined) process.exit(0);

// --- report -------------------------------------------------------------------------------------

/** The median over the runs, with the spread when there is more than one run. */
function summary(pick, format) {
  const values = runs.map(pick);
  const mid = format(median(values));
  if (values.length === 1) return mid;
  return `${mid} (${format(Math.min(...values))}–${format(Math.max(...values))})`;
}
const pct = (ratio) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(0)}%`;
const verdict = (met) => (met ? 'pass' : '**FAIL**');

const lines = [];
lines.push(`\n### Reliability under load (${SESSIONS} idle HTTP sessions, --session-timeout ${SESSION_TIMEOUT_S}; ${RUNS > 1 ? `median of ${RUNS} runs (min–max)` : 'one run'})\n`);
lines.push('| server | cheap call | p50 / p99 @1 | p50 / p99 @100 | p50 / p99 @1000 | peak RSS (stdio) | RSS at start (HTTP) | RSS per idle session | RSS after expiry (vs start) |');
lines.push('|---|---|---|---|---|---|---|---|---|');
for (const name of SERVERS) {
  const at = (i, key) => summary((r) => r[name].stdio.levels[i][key], formatMs);
  lines.push(
    `| ${name} | \`${runs[0][name].call}\` | ${at(0, 'p50')} / ${at(0, 'p99')} | ${at(1, 'p50')} / ${at(1, 'p99')} | ${at(2, 'p50')} / ${at(2, 'p99')} | ${summary((r) => r[name].stdio.peakRss, formatBytes)} | ${summary((r) => r[name].plain.start, formatBytes)} | ${summary((r) => r[name].plain.perSession, formatBytes)} | ${summary((r) => r[name].plain.later, formatBytes)} (${summary((r) => r[name].plain.later / r[name].plain.start, pct)}) |`,
  );
}
lines.push(`\n### Targets (judged on the median${RUNS > 1 ? ' of the runs' : ''}; the server as users run it, no forced GC)\n`);
lines.push(`| server | p99 @1000 < ${TARGETS.p99At1000Ms} ms | idle session < ${formatBytes(TARGETS.perSessionBytes)} | RSS after expiry within ${pct(TARGETS.afterExpiryRatio)} of start |`);
lines.push('|---|---|---|---|');
let missed = 0;
for (const name of SERVERS) {
  const p99 = median(runs.map((r) => r[name].stdio.levels[2].p99));
  const perSession = median(runs.map((r) => r[name].plain.perSession));
  const ratio = median(runs.map((r) => r[name].plain.later / r[name].plain.start));
  const met = [p99 < TARGETS.p99At1000Ms, perSession < TARGETS.perSessionBytes, ratio <= TARGETS.afterExpiryRatio];
  missed += met.filter((m) => !m).length;
  lines.push(`| ${name} | ${verdict(met[0])} (${formatMs(p99)}) | ${verdict(met[1])} (${formatBytes(perSession)}) | ${verdict(met[2])} (${pct(ratio)}) |`);
}
lines.push('\n### With a full GC before every reading (the server started with --expose-gc; live memory, not the targets)\n');
lines.push('| server | RSS at start | RSS per idle session | RSS after expiry (vs start) |');
lines.push('|---|---|---|---|');
for (const name of SERVERS) {
  lines.push(
    `| ${name} | ${summary((r) => r[name].gc.start, formatBytes)} | ${summary((r) => r[name].gc.perSession, formatBytes)} | ${summary((r) => r[name].gc.later, formatBytes)} (${summary((r) => r[name].gc.later / r[name].gc.start, pct)}) |`,
  );
}
lines.push(
  `\nMachine: ${os.cpus().length} CPUs, load average ${loadAtStart.toFixed(1)} at the start and ${os.loadavg()[0].toFixed(1)} at the end (latency is wall time, so other work on the machine shows in it).`,
);
lines.push(`RSS after expiry is read ${SETTLE_MS / 1000 + 10} s after the last session expired. ${missed === 0 ? 'Every target met.' : `${missed} target${missed > 1 ? 's' : ''} missed.`}`);
console.log(lines.join('\n'));
