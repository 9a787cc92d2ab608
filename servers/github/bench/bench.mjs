// pnpm bench github: what the tool definitions cost the model's context (tools/list in bytes) for our
// default toolsets, our dynamic mode and the archived @modelcontextprotocol/server-github, in one run;
// and what a tool call costs on top of the same request made with bare Octokit, against the fake
// GitHub of the tests (a real HTTP server on 127.0.0.1), the two ways alternating call by call in
// one run. Every time is a median.
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Octokit } from '@octokit/rest';
import { connectStdio, median, printTable } from '../../../scripts/bench-kit.mjs';
import { loadFakeGithub } from './load-fake.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const OURS = path.resolve(here, '..', 'dist', 'index.js');
const ARCHIVED = path.join(path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-github/package.json')), 'dist', 'index.js');
const CALLS = process.argv.includes('--quick') ? 100 : 500;
const WARMUP = 50;

const log = (message) => process.stderr.write(`${message}\n`);

async function toolsListBytes(label, script, args, env) {
  const server = await connectStdio(process.execPath, [script, ...args], { env });
  try {
    const result = await server.client.listTools();
    // What the model reads: every field but a tool's _meta (the permission each tool needs, for clients and
    // tooling, which do not hand _meta to the model); the whole answer, _meta included, is counted too.
    const bytes = Buffer.byteLength(JSON.stringify({ ...result, tools: result.tools.map(({ _meta: _ignored, ...tool }) => tool) }));
    const wholeBytes = Buffer.byteLength(JSON.stringify(result));
    log(`${label}: ${result.tools.length} tools, ${bytes} bytes without _meta, ${wholeBytes} with`);
    return { tools: result.tools.length, bytes, wholeBytes, perTool: Math.round(bytes / result.tools.length) };
  } finally {
    await server.close();
  }
}

/** Median and p90 of samples. */
function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: median(sorted), p90: sorted[Math.floor(sorted.length * 0.9)] };
}

/**
 * `count` pairs of calls, one of each way, alternating which goes first, after a warm-up of both:
 * side by side in one run, so that whatever else loads the machine weighs on both alike. Returns
 * the statistics of each way and of the per-pair difference (b - a).
 */
async function sideBySide(a, b, count) {
  for (let i = 0; i < WARMUP; i++) {
    await a();
    await b();
  }
  const timed = async (fn) => {
    const start = performance.now();
    await fn();
    return performance.now() - start;
  };
  const as = [];
  const bs = [];
  const diffs = [];
  for (let i = 0; i < count; i++) {
    let ta;
    let tb;
    if (i % 2 === 0) {
      ta = await timed(a);
      tb = await timed(b);
    } else {
      tb = await timed(b);
      ta = await timed(a);
    }
    as.push(ta);
    bs.push(tb);
    diffs.push(tb - ta);
  }
  return { a: stats(as), b: stats(bs), diff: stats(diffs) };
}

const { startFakeGithub, seed, TOKENS } = await loadFakeGithub();
const fake = await startFakeGithub();
seed(fake);
const env = { GITHUB_API_URL: fake.apiUrl, GITHUB_PERSONAL_ACCESS_TOKEN: TOKENS.alice, GITHUB_TOKEN: '' };

try {
  const ours = await toolsListBytes('ours (default toolsets)', OURS, [], env);
  const all = await toolsListBytes('ours (all toolsets)', OURS, ['--toolsets', 'all'], env);
  const dynamic = await toolsListBytes('ours (--dynamic-toolsets)', OURS, ['--dynamic-toolsets'], env);
  // The archived server reads its token at start-up and calls nothing until a tool runs.
  const archived = await toolsListBytes('archived @modelcontextprotocol/server-github', ARCHIVED, [], { GITHUB_PERSONAL_ACCESS_TOKEN: 'unused-token' });

  console.log('\n### tools/list: what the tool definitions cost the context\n');
  console.log('| server | tools | bytes (without _meta) | bytes per tool | bytes with _meta |');
  console.log('|---|---|---|---|---|');
  for (const [name, r] of [
    ['@suite/server-github, default toolsets', ours],
    ['@suite/server-github, --dynamic-toolsets (at start)', dynamic],
    ['@suite/server-github, --toolsets all', all],
    ['archived @modelcontextprotocol/server-github 2025.4.8', archived],
  ]) {
    console.log(`| ${name} | ${r.tools} | ${r.bytes} | ${r.perTool} | ${r.wholeBytes} |`);
  }
  const targets = [
    [`more tools than the archived server (${archived.tools})`, ours.tools > archived.tools],
    ['at most 450 bytes per tool (what the model reads: without _meta)', ours.perTool <= 450],
    ['dynamic mode under 2 KB (2048 bytes)', dynamic.bytes < 2048],
  ];
  for (const [what, met] of targets) console.log(`- ${met ? 'met' : 'MISSED'}: ${what}`);

  // The same request both ways: GET /repos/acme/widgets/issues/2, authenticated, JSON parsed.
  const args = { owner: 'acme', repo: 'widgets', issue_number: 2 };
  const server = await connectStdio(process.execPath, [OURS], { env });
  const bare = new Octokit({ auth: TOKENS.alice, baseUrl: fake.apiUrl });
  try {
    const check = await server.client.callTool({ name: 'get_issue', arguments: args });
    if (check.isError) throw new Error(`get_issue failed: ${JSON.stringify(check.content)}`);
    log(`timing ${CALLS} calls each way...`);
    const { a: viaOctokit, b: viaServer, diff } = await sideBySide(() => bare.rest.issues.get(args), () => server.client.callTool({ name: 'get_issue', arguments: args }), CALLS);
    printTable('a tool call against the fake GitHub (get_issue) next to bare Octokit (issues.get), alternating call by call', ['MCP tool call over stdio', 'bare Octokit'], [
      { name: 'median', ours: viaServer.median, theirs: viaOctokit.median, unit: 'ms', note: '' },
      { name: 'p90', ours: viaServer.p90, theirs: viaOctokit.p90, unit: 'ms', note: '' },
    ]);
    const overhead = diff.median;
    console.log(`\noverhead of the MCP server over bare Octokit (median of the per-pair differences): ${overhead.toFixed(2)} ms, p90 ${diff.p90.toFixed(2)} ms (target: at most 1 ms) - ${overhead <= 1 ? 'met' : 'MISSED'}`);
    // What the protocol alone costs: the same call refused by argument validation, before any request to GitHub.
    const invalid = { ...args, issue_number: 0 };
    const { b: roundTrip } = await sideBySide(() => bare.rest.issues.get(args), () => server.client.callTool({ name: 'get_issue', arguments: invalid }), CALLS);
    console.log(`an MCP call over stdio that never reaches GitHub (get_issue refused by validation): median ${roundTrip.median.toFixed(2)} ms, p90 ${roundTrip.p90.toFixed(2)} ms`);
    console.log(`load average while measuring: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} on ${os.availableParallelism()} CPUs (other work on the machine slows both ways alike, but widens the spread)`);
  } finally {
    await server.close();
  }
} finally {
  await fake.close();
}
