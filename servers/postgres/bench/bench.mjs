// pnpm bench postgres: the same workload, through the SDK client over stdio, against this server
// and the official @modelcontextprotocol/server-postgres, in one run. Creates and drops its own
// database (TEST_DATABASE_URL or postgresql://postgres@127.0.0.1:5432/test as the admin connection).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectStdio, formatBytes, measure, printTable, resultBytes } from '../../../scripts/bench-kit.mjs';
import { createScratchDatabase, runSql } from '../../../scripts/scratch-postgres.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ours = path.resolve(here, '../dist/index.js');
const require = createRequire(import.meta.url);
const officialPkgPath = require.resolve('@modelcontextprotocol/server-postgres/package.json');
const officialPkg = JSON.parse(readFileSync(officialPkgPath, 'utf8'));
const official = path.join(path.dirname(officialPkgPath), typeof officialPkg.bin === 'string' ? officialPkg.bin : Object.values(officialPkg.bin)[0]);

const QUICK = process.argv.includes('--quick');
/** Only the index-advice figure (recommend_indexes on a 20-query workload). */
const ADVICE_ONLY = process.argv.includes('--advice-only');
const SMALL_QUERIES = QUICK ? 200 : 1000;
const BIG_ROWS = QUICK ? 100_000 : 1_000_000;

/** Resident memory of a process (Linux), in bytes: current (VmRSS) or peak (VmHWM). */
function rss(pid, field = 'VmHWM') {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1]);
    return Number.isFinite(kb) ? kb * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Samples a process's peak RSS while fn runs (the process may die before fn returns). */
async function withPeakRss(pid, fn) {
  let peak = rss(pid);
  const timer = setInterval(() => {
    const now = rss(pid);
    if (now !== undefined && (peak === undefined || now > peak)) peak = now;
  }, 20);
  try {
    const value = await fn();
    return { value, peak };
  } finally {
    clearInterval(timer);
    const last = rss(pid);
    if (last !== undefined && (peak === undefined || last > peak)) peak = last;
  }
}

/**
 * The index-advice workload: three related tables of 200,000 rows (no secondary indexes) and 20
 * queries that filter, join and sort on their columns, as an application's top statements would.
 */
const ADVICE_SETUP = `
CREATE EXTENSION IF NOT EXISTS hypopg;
CREATE TABLE customers AS SELECT g AS id, 'c' || g || '@example.com' AS email, (g % 50) AS region, now() - g * interval '1 minute' AS signed_up FROM generate_series(1, 200000) g;
ALTER TABLE customers ADD PRIMARY KEY (id);
CREATE TABLE orders AS SELECT g AS id, 1 + g % 200000 AS customer_id, (g % 7) AS status, now() - g * interval '10 seconds' AS created_at, (g % 997) * 1.5 AS total FROM generate_series(1, 200000) g;
ALTER TABLE orders ADD PRIMARY KEY (id);
CREATE TABLE order_lines AS SELECT g AS id, 1 + g % 200000 AS order_id, (g % 5000) AS product_id, 1 + g % 9 AS quantity FROM generate_series(1, 200000) g;
ALTER TABLE order_lines ADD PRIMARY KEY (id);
ANALYZE customers, orders, order_lines;`;
const ADVICE_QUERIES = [
  "SELECT * FROM customers WHERE email = 'c42@example.com'",
  'SELECT id FROM customers WHERE region = 7 ORDER BY signed_up DESC LIMIT 20',
  "SELECT count(*) FROM customers WHERE signed_up > now() - interval '1 day'",
  'SELECT * FROM orders WHERE customer_id = 4242',
  'SELECT * FROM orders WHERE customer_id = 4242 ORDER BY created_at DESC LIMIT 10',
  'SELECT * FROM orders WHERE status = 3 AND created_at > now() - interval \'2 hours\'',
  'SELECT sum(total) FROM orders WHERE created_at BETWEEN now() - interval \'3 days\' AND now() - interval \'2 days\'',
  'SELECT * FROM order_lines WHERE order_id = 99',
  'SELECT order_id, sum(quantity) FROM order_lines WHERE product_id = 17 GROUP BY order_id',
  'SELECT * FROM order_lines WHERE product_id = 17 AND quantity > 5',
  'SELECT c.email, o.total FROM customers c JOIN orders o ON o.customer_id = c.id WHERE o.id = 5',
  'SELECT o.* FROM orders o JOIN customers c ON c.id = o.customer_id WHERE c.email = \'c7@example.com\'',
  'SELECT l.* FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE o.customer_id = 77',
  'SELECT count(*) FROM orders WHERE status = 5',
  'SELECT * FROM customers WHERE region = 3 AND signed_up < now() - interval \'100 days\' ORDER BY signed_up LIMIT 5',
  'SELECT * FROM orders WHERE total > 1400 ORDER BY total DESC LIMIT 10',
  'SELECT product_id, count(*) FROM order_lines WHERE order_id BETWEEN 1000 AND 1100 GROUP BY product_id',
  'SELECT * FROM customers WHERE id = 123',
  'SELECT * FROM orders WHERE customer_id IN (1, 2, 3) AND status = 1',
  'SELECT max(created_at) FROM orders WHERE customer_id = 31337',
];

async function indexAdvice(start) {
  const server = await start();
  try {
    let last;
    const { ms } = await measure(
      async () => {
        last = await server.client.callTool({ name: 'recommend_indexes', arguments: { queries: ADVICE_QUERIES, max_indexes: 8 } }, undefined, { timeout: 120_000 });
        if (last.isError) throw new Error(`recommend_indexes failed: ${JSON.stringify(last.content)}`);
      },
      { runs: 5, warmup: 1 },
    );
    return { ms, report: last.structuredContent };
  } finally {
    await server.close();
  }
}

console.log(ADVICE_ONLY ? 'Setting up the index-advice database...' : `Setting up a database with ${BIG_ROWS.toLocaleString()} rows...`);
const db = await createScratchDatabase({
  prefix: 'suite_pg_bench',
  setupSql: `${ADVICE_SETUP}
     CREATE TABLE big AS SELECT g AS id, md5(g::text) AS label, now() - g * interval '1 second' AS created_at, (g % 1000)::numeric / 7 AS score FROM generate_series(1, ${ADVICE_ONLY ? 1 : BIG_ROWS}) g;
     ALTER TABLE big ADD PRIMARY KEY (id)`,
});
const env = { SUITE_LOG_LEVEL: 'emergency' };
const servers = {
  ours: () => connectStdio(process.execPath, [ours, db.roleUrl], { env }),
  official: () => connectStdio(process.execPath, [official, db.roleUrl], { env }),
};

async function startup(start) {
  const times = [];
  for (let i = 0; i < 6; i++) {
    const server = await start();
    if (i > 0) times.push(server.startupMs);
    await server.close();
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

async function smallQueries(start) {
  const server = await start();
  try {
    const { ms } = await measure(
      async () => {
        for (let i = 1; i <= SMALL_QUERIES; i++) {
          const r = await server.client.callTool({ name: 'query', arguments: { sql: `SELECT id, label FROM big WHERE id = ${i}` } });
          if (r.isError) throw new Error(`query failed: ${JSON.stringify(r.content)}`);
        }
      },
      { runs: 3, warmup: 1 },
    );
    return ms;
  } finally {
    await server.close();
  }
}

async function selectAll(start, runs) {
  const server = await start();
  try {
    const before = rss(server.pid, 'VmRSS');
    let bytes;
    let failure;
    const { value: { ms }, peak } = await withPeakRss(server.pid, () => measure(
      async () => {
        try {
          const r = await server.client.callTool({ name: 'query', arguments: { sql: 'SELECT * FROM big' } }, undefined, { timeout: 300_000 });
          bytes = resultBytes(r);
        } catch (error) {
          failure = String(error?.message ?? error).slice(0, 80);
        }
      },
      { runs, warmup: 0 },
    ));
    return { ms, bytes, failure, rssBefore: before, rssPeak: peak };
  } finally {
    await server.close();
  }
}

try {
  await runSql(db.adminUrl, 'VACUUM ANALYZE big');
  const advice = await indexAdvice(servers.ours);
  const load = (await import('node:os')).loadavg().map((n) => n.toFixed(2)).join(' ');
  console.log(
    `\nrecommend_indexes on a ${ADVICE_QUERIES.length}-query workload (3 tables of 200,000 rows, over stdio): median ${advice.ms.toFixed(0)} ms ` +
      `(target: under 5,000 ms; ${advice.report.candidatesTried} hypothetical indexes tried per call, ${advice.report.recommendations.length} recommended, ` +
      `workload cost ${advice.report.workloadCostBefore.toFixed(0)} -> ${advice.report.workloadCostAfter.toFixed(0)}); load average ${load} on ${(await import('node:os')).cpus().length} CPUs`,
  );
  if (advice.ms >= 5000) process.exitCode = 1;
  if (!ADVICE_ONLY) {

  const startOurs = await startup(servers.ours);
  const startOfficial = await startup(servers.official);
  const smallOurs = await smallQueries(servers.ours);
  const smallOfficial = await smallQueries(servers.official);
  const bigOurs = await selectAll(servers.ours, 5);
  const bigOfficial = await selectAll(servers.official, 1);
  // What the official server tries to send: at least the compact JSON of every row (it pretty-prints, so more).
  const officialAnswerLowerBound = Number((await runSql(db.adminUrl, 'SELECT sum(octet_length(row_to_json(b)::text)) AS n FROM big b')).rows[0].n);

  printTable(`mcp-server-postgres vs official (${SMALL_QUERIES} small queries, SELECT * on ${BIG_ROWS.toLocaleString()} rows; medians)`, ['ours', 'official'], [
    { name: 'start-up (spawn to tools/list)', ours: startOurs, theirs: startOfficial, unit: 'ms' },
    { name: `${SMALL_QUERIES} sequential small queries`, ours: smallOurs, theirs: smallOfficial, unit: 'ms' },
    { name: bigOfficial.failure ? 'SELECT * FROM big: time (official: until it failed)' : 'SELECT * FROM big: time', ours: bigOurs.ms, theirs: bigOfficial.ms, unit: 'ms' },
    {
      name: 'SELECT * FROM big: answer size',
      ours: formatBytes(bigOurs.bytes),
      theirs: bigOfficial.failure ? `failed (${bigOfficial.failure}); rows alone are ≥ ${formatBytes(officialAnswerLowerBound)}` : formatBytes(bigOfficial.bytes),
      unit: 'text',
      note: '',
    },
    { name: 'SELECT * FROM big: server peak RSS', ours: bigOurs.rssPeak, theirs: bigOfficial.rssPeak, unit: 'bytes' },
  ]);
  console.log(`\nserver RSS before SELECT *: ours ${formatBytes(bigOurs.rssBefore)}, official ${formatBytes(bigOfficial.rssBefore)}`);
  if (bigOfficial.failure) console.log(`official SELECT * failed: ${bigOfficial.failure}`);
  }
} finally {
  await db.drop().catch((e) => console.error(String(e)));
}
