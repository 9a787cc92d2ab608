#!/usr/bin/env node
// pnpm conformance [server...]: the official MCP conformance suite (@modelcontextprotocol/conformance)
// against every server's built bin over HTTP, once for each protocol revision's requirement set
// (2026-07-28 and 2025-11-25). The suite's server scenarios were written for its own reference
// fixture, whose test_* tools, prompts and resources our servers do not have; each server's baseline
// (conformance/<server>.yml) excuses exactly the checks that call those, one check at a time, so any
// other failing check fails the run, and a baselined check that starts passing does too.
//
// The suite's CLI needs Node 22 or later (it imports fs.globSync); run this script with one, or set
// SUITE_CONFORMANCE_NODE to one. The servers run on the Node that runs this script.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { packedServers } from './packed-servers.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REVISIONS = ['2026-07-28', '2025-11-25'];
const cli = path.join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const major = Number(process.versions.node.split('.')[0]);
const conformanceNode = process.env.SUITE_CONFORMANCE_NODE ?? (major >= 22 ? process.execPath : undefined);
if (!conformanceNode) {
  console.error('conformance: the MCP conformance suite needs Node 22 or later; run this script with it, or set SUITE_CONFORMANCE_NODE to one.');
  process.exit(2);
}

const work = await mkdtemp(path.join(os.tmpdir(), 'suite-conformance-'));
const kit = packedServers({ fixtures: path.join(work, 'fixtures'), installDir: path.join(root, 'servers', 'sqlite') });
// The SQLite fixture through the server's own choice of better-sqlite3 line (13 on Node 22.14 and
// later, which is the only one a CI leg installed without scripts has built).
kit.servers.sqlite.fixture = async (i) => {
  const file = path.join(work, 'fixtures', `sqlite-${i}.db`);
  const addon = pathToFileURL(path.join(root, 'servers', 'sqlite', 'dist', 'sqlite-addon.js')).href;
  const script = `import Database from ${JSON.stringify(addon)}; const db = new Database(process.argv[1]); db.exec("CREATE TABLE fruit (name TEXT NOT NULL); INSERT INTO fruit VALUES ('apple'), ('banana');"); db.close();`;
  execFileSync(process.execPath, ['--input-type=module', '-e', script, file], { stdio: 'pipe' });
  return file;
};
// The suite's own fixture (test-kit), built on @suite/shared alone with the reference fixture's test
// surface (test_* tools, test:// resources, test_* prompts) and the tasks test tools: the scenarios
// our servers are excused from run against the shared layer through it, in both revisions. A low task budget, since the
// scenarios expect a one-second slow_compute to become a task.
kit.servers.fixture = {
  bin: path.join(root, 'test-kit', 'dist', 'fixture-server.js'),
  args: ['--task-after-ms', '100'],
  fixture: async () => undefined,
};
const writeBaselines = process.argv.includes('--write-baselines');
const wanted = process.argv.slice(2).filter((a) => a !== '--write-baselines');
const names = wanted.length > 0 ? wanted : Object.keys(kit.servers);
for (const name of names) if (!kit.servers[name]) throw new Error(`conformance: no server named ${name}`);

/**
 * Forwards to the server, adding a bearer token when the server wants one per session (github):
 * the suite's client sends none. Host and everything else pass as they came, so the suite's DNS
 * rebinding checks still reach the server's own Host check.
 */
function startProxy(token) {
  const proxy = http.createServer((req, res) => {
    const headers = { ...req.headers, ...(token ? { authorization: `Bearer ${token}` } : {}) };
    const upstream = http.request({ host: '127.0.0.1', port: proxy.target, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(proxy)));
}

function startServer(name, args, env, allowedHost) {
  const bin = kit.servers[name].bin ?? path.join(root, 'servers', name, 'dist', 'index.js');
  const child = spawn(process.execPath, [bin, ...args, '--http', '--port', '0', '--drain-seconds', '0', '--allowed-host', allowedHost], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${stderr}`)), 30_000);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const url = /listening on (http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
      if (url) {
        clearTimeout(timer);
        resolve({ child, port: Number(new URL(url).port) });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited (${code}) before listening:\n${stderr}`)));
  });
}

function runSuite(url, revision, baseline, outputDir) {
  const args = [cli, 'server', '--url', url, '--requirements', revision, '--output-dir', outputDir, ...(!writeBaselines && existsSync(baseline) ? ['--expected-failures', baseline] : [])];
  return new Promise((resolve) => {
    const child = spawn(conformanceNode, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

/** A reason that names the reference fixture's test surface, which our own fixture covers. */
const covered = (reason) => (currentServer === 'fixture' ? reason : `${reason}; the suite's fixture runs this scenario on the shared layer`);

/**
 * Why a failing check is the suite's fixture and not our server: it calls a test_* tool, prompt or
 * resource only the reference fixture has (our fixture has them: those reasons say so), or it tests
 * the tasks extension (no tool of ours runs as a task). For the fixture itself, the few things the
 * shared layer does not do, each named. Anything else stays a failure.
 */
function fixtureReason(scenario, check, capabilities) {
  const message = check.errorMessage ?? '';
  if (/Method not found/.test(message) && /prompts/.test(`${scenario}:${check.id}`) && !capabilities.prompts) return 'this server offers no prompts';
  if (/Method not found/.test(message) && /^resources-(un)?subscribe$/.test(scenario) && !capabilities.resources?.subscribe) return 'this server offers no resource subscriptions';
  if (scenario === 'input-required-result-non-tool-request' && /Method not found/.test(message) && !capabilities.prompts) return 'this server offers no prompts';
  if (check.id === 'sep-2549-resources-read-caching-hints' && capabilities.roots) {
    return "the read first asks the suite's client for its roots (input_required: that client declares roots); the final answer carries the hints";
  }
  if (scenario.startsWith('tasks-') && !capabilities.extensions?.['io.modelcontextprotocol/tasks']) return 'the tasks extension, which this server does not offer as run here (no long-running tool enabled)';
  if (scenario.startsWith('tasks-') && /(slow_compute|failing_job|confirm_delete|multi_input|test_tool_with_task|routing-task fixture)/.test(message)) {
    return `the reference fixture's ${/(slow_compute|failing_job|confirm_delete|multi_input|test_tool_with_task)/.exec(message)?.[1] ?? 'slow_compute'} (the suite's fixture runs these scenarios)`;
  }
  if (scenario.startsWith('tasks-') && /^Not testable: no task was created by the preceding step/.test(message)) return "a step after one that needs the reference fixture's slow_compute (the suite's fixture runs these scenarios)";
  if (/Unknown (tool|prompt): \S+|Unknown tool: test_|Resource not found: test:\/\/|Tool '\S+' not found\. Available tools/.test(message)) {
    const piece = /^Tool '(\S+)' not found/.exec(message)?.[1] ?? /(?:Unknown (?:tool|prompt)|Resource not found): '?([^'\s,]+?)'?(?:[.,\s]|$)/.exec(message)?.[1] ?? 'test surface';
    return covered(`the reference fixture's ${piece}`);
  }
  if (/^Not testable: server (does not list the diagnostic tool|exposes no tool with x-mcp-header)/.test(message)) return covered(message.replace(/^Not testable: /, '').split(/[,;(]/)[0].trim());
  if (check.id === 'json-schema-2020-12-$schema' && /\$schema field missing/.test(message)) {
    return 'the shared layer publishes input schemas without $schema (2020-12 is the default dialect, and every tool list pays for the line); the other 2020-12 keywords pass';
  }
  if (scenario === 'server-sse-polling' && /priming event|retry field/.test(message)) {
    return 'resumable streams (a priming event, a retry field) come with the replicas event store (--replicas, Redis), which this run does not configure';
  }
  if (currentServer === 'fixture' && /inputRequests missing expected key|valid inputResponses were provided alongside extra keys/.test(message)) {
    return 'the shared layer names its inputRequests itself (a handler asks through ctx.client, it does not choose the keys), and this check wants the reference fixture\'s key names';
  }
  if (currentServer === 'fixture' && /Expected at least 3 inputRequests|Expected a roots\/list inputRequest/.test(message)) {
    return 'the shared layer asks a 2026-07-28 client one thing per round (a handler\'s questions, even under Promise.all, are put one round each), so no round carries three inputRequests';
  }
  if (currentServer === 'fixture' && scenario === 'http-custom-header-server-validation' && /Expected HTTP 400|Expected JSON-RPC error code -32020/.test(message)) {
    return 'the shared layer does not yet check Mcp-Param-* headers against the body (SEP-2243: the SDK does so for its McpServer only); no server of ours declares x-mcp-header, the fixture does to show it';
  }
  if (/^Server returned JSON-RPC error instead of re-requesting via InputRequiredResult/.test(message)) return covered("the reference fixture's test_input_required_result_* tools");
  if (/^Prerequisite failed|^Expected InputRequiredResult with inputRequests and requestState$/.test(message)) return covered("a step that needs the reference fixture's input_required tools");
  return undefined;
}

/**
 * The server's capabilities as a 2025 client sees them, the extensions it offers a 2026-07-28 client
 * (server/discover), and whether it asks for roots (it names roots in its instructions or tools).
 */
async function capabilitiesOf(url) {
  const post = async (method, params, headers = {}) => {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const text = await response.text();
    return JSON.parse(text.startsWith('{') ? text : /data: (.*)/.exec(text)[1]);
  };
  const legacy = await post('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'conformance-baseline', version: '0' } });
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'conformance-baseline', version: '0' } };
  const modern = await post('server/discover', { _meta: meta }, { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' });
  return { ...legacy.result.capabilities, extensions: modern.result?.capabilities?.extensions ?? {}, roots: ROOTS_SERVERS.has(currentServer) };
}

/** The servers whose files come from roots: the client's roots narrow their command-line directories. */
const ROOTS_SERVERS = new Set(['filesystem', 'logs', 'git-prompts']);
let currentServer = '';

/** Failing checks of a run, from the suite's per-scenario checks.json files. */
async function failingChecks(outputDir) {
  const out = [];
  for (const entry of await readdir(outputDir).catch(() => [])) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    const checks = JSON.parse(await readFile(path.join(outputDir, entry, 'checks.json'), 'utf8'));
    // A warning (a SHOULD) fails a run with a baseline too, so it is judged the same way.
    for (const check of checks) if (check.status === 'FAILURE' || check.status === 'WARNING') out.push({ scenario, check });
  }
  return out.sort((a, b) => `${a.scenario}:${a.check.id}`.localeCompare(`${b.scenario}:${b.check.id}`));
}

let failed = 0;
try {
  await kit.start();
  for (const name of names) {
    const server = kit.servers[name];
    currentServer = name;
    const fixture = await server.fixture(0);
    const env = server.env?.() ?? {};
    const proxy = await startProxy(name === 'github' ? kit.github.token : undefined);
    const allowedHost = `127.0.0.1:${proxy.address().port}`;
    const { child, port } = await startServer(name, [...(server.args ?? []), ...(fixture === undefined ? [] : [fixture])], env, allowedHost);
    proxy.target = port;
    const url = `http://${allowedHost}/mcp`;
    const capabilities = writeBaselines ? await capabilitiesOf(url) : {};
    try {
      for (const revision of server.revisions ?? REVISIONS) {
        const started = Date.now();
        const baseline = path.join(root, 'conformance', `${name}-${revision}.yml`);
        const outputDir = path.join(work, 'results', `${name}-${revision}`);
        const { code, out } = await runSuite(url, revision, baseline, outputDir);
        if (writeBaselines) {
          const why = name === 'fixture' ? 'checks excused because the shared layer does not offer what they test (each reason says what)' : "checks excused because they need the conformance suite's own fixture";
          const lines = [`# ${name}, requirements of ${revision}: ${why}.`, '# Written by `node scripts/conformance.mjs --write-baselines`; every other failing check fails `pnpm conformance`.', 'server:'];
          const unexplained = [];
          for (const { scenario, check } of await failingChecks(outputDir)) {
            const reason = fixtureReason(scenario, check, capabilities);
            // A scenario may report one check id several times (one per case): the baseline names it once.
            if (reason && lines.some((line) => line.startsWith(`  - ${scenario}:${check.id} #`))) continue;
            if (reason) lines.push(`  - ${scenario}:${check.id} # ${reason}`);
            else unexplained.push(`${scenario}:${check.id}: ${check.errorMessage ?? check.description}`);
          }
          await writeFile(baseline, `${lines.join('\n')}\n`);
          if (unexplained.length > 0) {
            failed += 1;
            console.log(`FAIL ${name} ${revision}: failing checks that are not the fixture's:\n  ${unexplained.join('\n  ')}`);
          } else console.log(`wrote ${path.relative(root, baseline)} (${lines.length - 3} checks)`);
          continue;
        }
        const total = /Total: (\d+) passed, (\d+) failed/.exec(out);
        const verdict = code === 0 ? 'ok  ' : 'FAIL';
        if (code !== 0) failed += 1;
        console.log(`${verdict} ${name} ${revision}: ${total ? `${total[1]} checks passed, ${total[2]} failed (${code === 0 ? "each one in the baseline: the suite's fixture, or a feature the server does not offer" : "see below"})` : "no summary"} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        if (code !== 0) console.log(out.split('\n').filter((l) => /✗|FAILURE|unexpected|stale|Unexpected|Stale|regression/.test(l)).slice(0, 60).join('\n'));
      }
    } finally {
      child.kill('SIGTERM');
      proxy.close();
      proxy.closeAllConnections();
    }
  }
} finally {
  await kit.stop();
  await rm(work, { recursive: true, force: true });
}
const runs = names.reduce((n, name) => n + (kit.servers[name].revisions ?? REVISIONS).length, 0);
console.log(`conformance: ${runs - failed} of ${runs} runs as expected`);
process.exit(failed > 0 ? 1 : 0);
