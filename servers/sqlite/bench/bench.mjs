// pnpm bench sqlite: our server (built dist) against a bare SDK server calling better-sqlite3
// directly, on the same database file. Every figure is a median of repeated runs.
import { mkdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { connectStdio, measure, median, printTable, resultBytes } from '../../../scripts/bench-kit.mjs';
import { QueryExecutor } from '../dist/executor.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const work = path.join(here, '..', '.bench');
const file = path.join(work, 'bench.db');
const ROWS = 1_000_000;
const SMALL_QUERIES = 1000;

function buildDatabase() {
  if (existsSync(file)) {
    const db = new Database(file, { readonly: true });
    const ok = db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'big'").get().n === 1 && db.prepare('SELECT max(id) AS n FROM big').get().n === ROWS;
    db.close();
    if (ok) return;
  }
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const db = new Database(file);
  db.exec(`
    CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT);
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000)
      INSERT INTO people SELECT x, 'person ' || x, 'p' || x || '@example.com' FROM c;
    CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT NOT NULL, amount REAL, created TEXT);
    WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
      INSERT INTO big SELECT x, 'item ' || x, x * 0.37, datetime(1700000000 + x, 'unixepoch') FROM c;
  `);
  db.close();
}

/** Resident memory of a process tree (the server and its query processes), from /proc. */
function rssOfTree(pid) {
  const children = (() => {
    try {
      return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  })();
  let kb = 0;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    kb = m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
  return kb * 1024 + children.reduce((sum, c) => sum + rssOfTree(c), 0);
}

/** Milliseconds as whole microseconds, for per-query figures. */
const micro = (ms) => Math.round(ms * 1000);

async function smallQueries(client) {
  for (let i = 1; i <= SMALL_QUERIES; i++) {
    const r = await client.callTool({ name: 'read_query', arguments: { sql: 'SELECT id, name, email FROM people WHERE id = ?', params: [i] } });
    if (r.isError) throw new Error(r.content[0].text);
  }
}

buildDatabase();
const ourBin = path.join(here, '..', 'dist', 'index.js');
const ours = await connectStdio(process.execPath, [ourBin, file], { env: { SUITE_LOG_LEVEL: 'error' } });
const bare = await connectStdio(process.execPath, [path.join(here, 'bare-server.mjs'), file]);

/** CPU time (user + system, µs) a process and its children have used so far, from /proc. */
function cpuOfTree(pid) {
  const ticks = (p) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return 0;
    }
  };
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    children = [];
  }
  // Clock ticks are 10 ms on Linux (USER_HZ 100).
  return { server: ticks(pid) * 10_000, children: children.reduce((sum, c) => sum + ticks(c), 0) * 10_000 };
}

// 1. Round trips. Batches alternate between the two servers so that load from elsewhere on the
// machine falls on both alike; CPU time is summed over the measured batches.
const SMALL_RUNS = 9;
const small = { ours: [], bare: [] };
const cpu = { ours: { server: 0, children: 0 }, bare: { server: 0, children: 0 } };
for (let run = 0; run <= SMALL_RUNS; run++) {
  for (const [name, server] of [['ours', ours], ['bare', bare]]) {
    const before = cpuOfTree(server.pid);
    const start = performance.now();
    await smallQueries(server.client);
    const ms = performance.now() - start;
    const after = cpuOfTree(server.pid);
    // The first round warms both up and is not counted.
    if (run === 0) continue;
    small[name].push(ms);
    cpu[name].server += after.server - before.server;
    cpu[name].children += after.children - before.children;
  }
}
const oursSmall = { ms: median(small.ours) };
const bareSmall = { ms: median(small.bare) };
const perQueryCpu = (c) => (c.server + c.children) / (SMALL_RUNS * SMALL_QUERIES) / 1000;

// 2. SELECT * on a million rows: ours answers with the capped first rows; the bare server reads them all.
const rssBefore = rssOfTree(ours.pid);
const oursBig = await measure(() => ours.client.callTool({ name: 'read_query', arguments: { sql: 'SELECT * FROM big' } }), { runs: 7, warmup: 1 });
const rssAfter = rssOfTree(ours.pid);
const bareRssBefore = rssOfTree(bare.pid);
// One attempt: the bare server materialises every row and one huge JSON string, and may not survive it.
const bareStart = performance.now();
let bareBig;
let bareRssAfter;
const bareSampler = setInterval(() => {
  bareRssAfter = Math.max(bareRssAfter ?? 0, rssOfTree(bare.pid));
}, 50);
try {
  const last = await bare.client.callTool({ name: 'read_query', arguments: { sql: 'SELECT * FROM big' } }, undefined, { timeout: 600_000 });
  bareBig = { ms: performance.now() - bareStart, last, failed: false };
} catch (error) {
  bareBig = { ms: performance.now() - bareStart, last: undefined, failed: String(error.message ?? error) };
}
clearInterval(bareSampler);

await ours.close();
await bare.close().catch(() => undefined);

// 3. What the query process costs: the same small query through the executor vs better-sqlite3 in this process.
const executor = new QueryExecutor({ file, mode: 'read', writableServer: false, extensions: [], size: 1, busyTimeoutMs: 1000 });
const spawnStart = performance.now();
await executor.warm();
const spawnMs = performance.now() - spawnStart;
const signal = new AbortController().signal;
const request = (i) => ({ sql: 'SELECT id, name, email FROM people WHERE id = ?', params: [i], maxRows: 500, maxBytes: 1 << 20, maxCellChars: 32768 });
const viaWorker = await measure(async () => {
  for (let i = 1; i <= SMALL_QUERIES; i++) await executor.query(request(i), { timeoutMs: 30_000, signal, label: 'bench' });
});
const direct = new Database(file, { readonly: true });
const directRun = await measure(async () => {
  for (let i = 1; i <= SMALL_QUERIES; i++) direct.prepare('SELECT id, name, email FROM people WHERE id = ?').raw(true).all(i);
});
const killTimes = [];
for (let i = 0; i < 5; i++) {
  const controller = new AbortController();
  const call = executor.query({ ...request(1), params: undefined, sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) SELECT count(*) FROM c' }, { timeoutMs: 60_000, signal: controller.signal, label: 'bench' });
  await new Promise((r) => setTimeout(r, 100));
  const start = performance.now();
  controller.abort();
  await call.catch(() => undefined);
  killTimes.push(performance.now() - start);
}
await executor.close();
direct.close();

printTable(`${SMALL_QUERIES} small queries, one at a time over stdio (total per batch)`, ['ours', 'bare SDK + better-sqlite3'], [
  { name: `${SMALL_QUERIES} × read_query by primary key`, ours: oursSmall.ms, theirs: bareSmall.ms },
  { name: 'per query (µs)', ours: micro(oursSmall.ms / SMALL_QUERIES), theirs: micro(bareSmall.ms / SMALL_QUERIES), unit: 'text' },
  { name: 'server CPU per query, incl. query processes (µs)', ours: micro(perQueryCpu(cpu.ours)), theirs: micro(perQueryCpu(cpu.bare)), unit: 'text' },
  { name: '… of which in the query processes (µs)', ours: micro(cpu.ours.children / (SMALL_RUNS * SMALL_QUERIES) / 1000), theirs: 0, unit: 'text', note: '' },
]);
printTable(`SELECT * FROM a ${ROWS.toLocaleString('en')}-row table`, ['ours (capped at 500 rows)', 'bare (returns every row)'], [
  { name: 'time', ours: oursBig.ms, theirs: bareBig.ms, note: bareBig.failed ? 'bare: connection lost' : undefined },
  { name: 'answer size (text)', ours: resultBytes(oursBig.last), theirs: bareBig.last ? resultBytes(bareBig.last) : undefined, unit: 'bytes', note: '' },
  { name: 'server RSS before (incl. query processes)', ours: rssBefore, theirs: bareRssBefore, unit: 'bytes', note: '' },
  { name: 'server RSS after 8 runs (ours) / peak (bare)', ours: rssAfter, theirs: bareRssAfter, unit: 'bytes', note: '' },
]);
printTable(`What the query process costs (${SMALL_QUERIES} small queries, in-process)`, ['through the query process', 'better-sqlite3 directly'], [
  { name: `${SMALL_QUERIES} queries`, ours: viaWorker.ms, theirs: directRun.ms },
  { name: 'added per query (µs)', ours: micro((viaWorker.ms - directRun.ms) / SMALL_QUERIES), theirs: 0, unit: 'text', note: '' },
  { name: 'starting one query process', ours: spawnMs, theirs: undefined, note: 'once, then reused' },
  { name: 'cancel a stuck query (abort → answer)', ours: median(killTimes), theirs: undefined, note: 'SIGKILL' },
]);
if (bareBig.failed) console.log(`\nThe bare server did not answer SELECT * on ${ROWS} rows: ${bareBig.failed} after ${bareBig.ms.toFixed(0)} ms.`);
console.log(`\nsmall-query overhead vs bare (median round trip): ${(((oursSmall.ms - bareSmall.ms) / bareSmall.ms) * 100).toFixed(1)}% (target: within 15%)`);
