// node bench/ab.mjs OLD_BIN NEW_BIN: two builds of this server (paths to their dist/index.js) side by side on one
// database, interleaved round by round so that a machine's changing load hits both alike. Prints the median and the
// fastest round of small queries (per call) and of a capped SELECT * on 1,000,000 rows. ROUNDS (default 20) sets the
// number of rounds. Creates and drops its own database and role (TEST_DATABASE_URL or the local default as admin).
import { performance } from 'node:perf_hooks';
import { connectStdio, median } from '../../../scripts/bench-kit.mjs';
import { createScratchDatabase } from '../../../scripts/scratch-postgres.mjs';

const [oldBin, newBin] = process.argv.slice(2);
if (!oldBin || !newBin) {
  console.error('Usage: node bench/ab.mjs OLD_BIN NEW_BIN (each the dist/index.js of a build)');
  process.exit(2);
}
const db = await createScratchDatabase({
  prefix: 'suite_pg_ab',
  setupSql: `CREATE TABLE big AS SELECT g AS id, 'label ' || g AS label, md5(g::text) AS h FROM generate_series(1, 1000000) g; ALTER TABLE big ADD PRIMARY KEY (id); ANALYZE big`,
});
const env = { SUITE_LOG_LEVEL: 'emergency' };
const servers = { old: await connectStdio(process.execPath, [oldBin, db.roleUrl], { env }), new: await connectStdio(process.execPath, [newBin, db.roleUrl], { env }) };
const small = { old: [], new: [] };
const big = { old: [], new: [] };
const ROUNDS = Number(process.env.ROUNDS ?? 20);
for (let r = 0; r < ROUNDS; r++) {
  const order = r % 2 ? ['old', 'new'] : ['new', 'old'];
  for (const v of order) {
    const { client } = servers[v];
    const t0 = performance.now();
    for (let i = 0; i < 200; i++) await client.callTool({ name: 'query', arguments: { sql: 'SELECT id, label FROM big WHERE id = $1', params: [1 + ((r * 200 + i) % 1000000)] } });
    small[v].push((performance.now() - t0) / 200);
    const t1 = performance.now();
    const res = await client.callTool({ name: 'query', arguments: { sql: 'SELECT * FROM big' } });
    big[v].push(performance.now() - t1);
    if (!res.structuredContent?.truncated) throw new Error('not truncated');
  }
}
for (const v of ['old', 'new']) console.log(`${v}: small query median ${median(small[v]).toFixed(3)} ms/call (rounds of 200, ${ROUNDS} rounds; min ${Math.min(...small[v]).toFixed(3)}), SELECT * median ${median(big[v]).toFixed(2)} ms (min ${Math.min(...big[v]).toFixed(2)})`);
for (const s of Object.values(servers)) await s.close();
await db.drop();
