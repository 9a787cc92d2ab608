// pnpm bench git-prompts: the server (built bin, over stdio) against the plain git commands it runs,
// on a generated repository: 10,000 commits, 1,000 branches, a staged change of 2,000 files.
// Every figure is a median; server and plain git take turns in each round, so load hits both alike.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { connectStdio, formatMs, median } from '../../../scripts/bench-kit.mjs';
// The server's own exclusion globs, so plain git gets exactly the pathspecs the server gives it.
import { DEFAULT_EXCLUDES } from '../dist/config.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const work = path.join(here, '..', '.bench');
const repo = path.join(work, 'bench');
const COMMITS = 10_000;
const FILES = 2_000;
const BRANCHES = 1_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 21);
const WARMUP = 3;
const stamp = `${COMMITS}-${FILES}-${BRANCHES}-v2`;

const gitEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.com', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.com' };
const git = (args, input) => execFileSync('git', args, { cwd: repo, env: gitEnv, input, maxBuffer: 1 << 30, stdio: ['pipe', 'pipe', 'inherit'] });

const fileName = (i) => `src/module${String(i % 40).padStart(2, '0')}/file${String(i).padStart(4, '0')}.ts`;
const fileContent = (i, version) => Array.from({ length: 30 }, (_, line) => `export const value${i}_${line} = ${line * version}; // line ${line} of file ${i}`).join('\n') + '\n';

/** The repository, generated with git fast-import in a few seconds (and reused while the stamp matches). */
function buildRepository() {
  if (existsSync(path.join(work, 'stamp')) && readFileSync(path.join(work, 'stamp'), 'utf8') === stamp) return false;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(repo, { recursive: true });
  git(['init', '--quiet', '--initial-branch=main']);
  const chunks = [];
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}\n`;
  let time = 1_600_000_000;
  const kinds = ['feat', 'fix', 'docs', 'refactor', 'test', 'chore'];
  for (let c = 1; c <= COMMITS; c++) {
    time += 600;
    const message = c === 1 ? 'Initial import' : `${kinds[c % kinds.length]}(module${String(c % 40).padStart(2, '0')}): change ${c}`;
    chunks.push(`commit refs/heads/main\nmark :${c}\ncommitter Bench <bench@example.com> ${time} +0000\n${data(message)}`);
    if (c > 1) chunks.push(`from :${c - 1}\n`);
    if (c === 1) {
      for (let i = 0; i < FILES; i++) chunks.push(`M 100644 inline ${fileName(i)}\n${data(fileContent(i, 1))}`);
      chunks.push(`M 100644 inline package-lock.json\n${data(JSON.stringify({ lockfileVersion: 3, packages: {} }, null, 2))}`);
    } else {
      const i = (c * 7) % FILES;
      chunks.push(`M 100644 inline ${fileName(i)}\n${data(fileContent(i, c))}`);
    }
    chunks.push('\n');
  }
  for (let b = 1; b <= BRANCHES; b++) chunks.push(`reset refs/heads/feature/topic-${String(b).padStart(4, '0')}\nfrom :${b * 10}\n\n`);
  for (let t = 1; t <= 10; t++) chunks.push(`reset refs/tags/v0.${t}.0\nfrom :${t * 1000}\n\n`);
  git(['fast-import', '--quiet'], chunks.join(''));
  git(['reset', '--quiet', '--hard', 'main']);
  // The staged change: every file edited, the lock file rewritten.
  for (let i = 0; i < FILES; i++) writeFileSync(path.join(repo, fileName(i)), fileContent(i, 3) + `// edited for the benchmark\n`);
  writeFileSync(path.join(repo, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`node_modules/p${i}`, { version: '1.0.0' }])) }, null, 2));
  git(['add', '--all']);
  // For the everyday read tools: a stash entry of the whole staged change (made without touching the
  // working tree), 200 moves in HEAD's reflog, a linked worktree and two remotes.
  const stash = git(['stash', 'create', 'bench stash']).toString().trim();
  git(['stash', 'store', '--message', 'On main: bench stash', stash]);
  const oids = git(['rev-list', '--max-count=201', 'main']).toString().trim().split('\n').reverse();
  const moves = oids.slice(1).map((oid, i) => `${oids[i]} ${oid} Bench <bench@example.com> ${1_700_000_000 + i * 60} +0000\tcommit: move ${i}`);
  writeFileSync(path.join(repo, '.git', 'logs', 'HEAD'), `${moves.join('\n')}\n`);
  git(['worktree', 'add', '--quiet', '--detach', path.join(work, 'bench-tree'), 'main~5']);
  git(['remote', 'add', 'origin', 'https://example.com/org/bench.git']);
  git(['remote', 'add', 'mirror', 'git@example.com:org/bench.git']);
  writeFileSync(path.join(work, 'stamp'), stamp);
  return true;
}

/** Plain git: spawned from Node like the server spawns it, without the hardening; `cap` stops it like the server's output cap. */
function plain(args, { cap, okCodes = [0] } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd: repo, env: gitEnv, stdio: ['ignore', 'pipe', 'ignore'] });
    let bytes = 0;
    child.stdout.on('data', (chunk) => {
      bytes += chunk.length;
      if (cap && bytes > cap) child.kill('SIGTERM');
    });
    child.on('error', reject);
    child.on('close', (code, signal) => (okCodes.includes(code) || signal ? resolve(bytes) : reject(new Error(`git ${args[0]} exited ${code}`))));
  });
}

// The git commands the server runs for each operation (see src/git/*.ts), in the same order and
// with the same parallelism.
const FORMAT = '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00%b';
const DIFF = ['--no-color', '--no-ext-diff', '--no-textconv', '-M', '--ignore-submodules=dirty'];
const EXCLUDES = DEFAULT_EXCLUDES;
const stagedDiffCalls = () =>
  Promise.all([
    plain(['diff', '--cached', ...DIFF, '--raw', '-z', '--no-abbrev', '--', ':/', ...EXCLUDES.map((g) => `:(top,exclude,glob)${g}`)]),
    plain(['diff', '--cached', ...DIFF, '--raw', '-z', '--no-abbrev', '--', ...EXCLUDES.map((g) => `:(top,glob)${g}`)]),
    plain(['diff', '--cached', ...DIFF, '-p', '-U3', '--', ':/', ...EXCLUDES.map((g) => `:(top,exclude,glob)${g}`)], { cap: 256 * 1024 }),
  ]);
const stashDiff = (from, to) =>
  Promise.all([
    plain(['diff', ...DIFF, '--raw', '-z', '--no-abbrev', from, to, '--', ':/', ...EXCLUDES.map((g) => `:(top,exclude,glob)${g}`)]),
    plain(['diff', ...DIFF, '--raw', '-z', '--no-abbrev', from, to, '--', ...EXCLUDES.map((g) => `:(top,glob)${g}`)]),
    plain(['diff', ...DIFF, '-p', '-U3', from, to, '--', ':/', ...EXCLUDES.map((g) => `:(top,exclude,glob)${g}`)], { cap: 256 * 1024 }),
  ]);
const BLAMED = fileName(7);
/** The everyday read tools of issue 29, each against the plain git command it stands for. */
const everyday = [
  {
    name: `tools/call git_blame (${BLAMED}, 30 lines, 10,000 commits of history)`,
    ours: (c) => c.callTool({ name: 'git_blame', arguments: { path: BLAMED } }),
    plain: () => plain(['blame', '--porcelain', '--no-textconv', '-L1,30', 'HEAD', '--', BLAMED]),
  },
  {
    name: 'tools/call git_stash_list',
    ours: (c) => c.callTool({ name: 'git_stash_list', arguments: {} }),
    plain: () => plain(['stash', 'list']),
  },
  {
    name: 'tools/call git_stash_show (a 2,001-file stash)',
    ours: (c) => c.callTool({ name: 'git_stash_show', arguments: { index: 0 } }),
    plain: () => stashDiff('stash@{0}^1', 'stash@{0}'),
  },
  {
    name: 'tools/call git_worktree_list',
    ours: (c) => c.callTool({ name: 'git_worktree_list', arguments: {} }),
    plain: () => plain(['worktree', 'list', '--porcelain']),
  },
  {
    name: 'tools/call git_tag_list',
    ours: (c) => c.callTool({ name: 'git_tag_list', arguments: {} }),
    plain: () => plain(['tag', '--list', '--sort=-creatordate', '--format=%(refname:strip=2) %(objectname) %(creatordate:iso-strict) %(contents:subject)']),
  },
  {
    name: 'tools/call git_reflog (30 of 200 entries)',
    ours: (c) => c.callTool({ name: 'git_reflog', arguments: {} }),
    plain: () => plain(['reflog', 'show', '--max-count=30', 'HEAD']),
  },
  {
    name: 'tools/call git_remote_list',
    ours: (c) => c.callTool({ name: 'git_remote_list', arguments: {} }),
    plain: () => plain(['remote', '--verbose']),
  },
];
const operations = process.env.BENCH_ONLY === 'everyday' ? everyday : [
  {
    name: 'prompts/get git-commit (2,000 staged files)',
    ours: (c) => c.getPrompt({ name: 'git-commit', arguments: {} }),
    plain: async () => {
      await Promise.all([plain(['diff', '--cached', '--quiet', ...DIFF], { okCodes: [0, 1] }), plain(['log', FORMAT, '-z', '--max-count=21', 'HEAD', '--'])]);
      await stagedDiffCalls();
    },
    target: { ms: 300 },
  },
  {
    name: 'completion/complete base (1,000 branches)',
    ours: (c) => c.complete({ ref: { type: 'ref/prompt', name: 'pr-description' }, argument: { name: 'base', value: 'feature/topic-09' } }),
    plain: () => plain(['for-each-ref', '--sort=-creatordate', '--format=%(refname)', 'refs/heads', 'refs/remotes', 'refs/tags']),
    target: { ms: 50 },
  },
  {
    name: 'tools/call git_log (10 of 10,000 commits)',
    ours: (c) => c.callTool({ name: 'git_log', arguments: { max_count: 10 } }),
    plain: () => plain(['log', FORMAT, '-z', '--no-color', '--max-count=11', 'HEAD', '--']),
  },
  {
    name: 'resources/read git://bench/status',
    ours: (c) => c.readResource({ uri: 'git://bench/status' }),
    plain: () => plain(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=normal', '--ignore-submodules=dirty', '--find-renames']),
  },
  {
    name: 'resources/read git://bench/diff/staged',
    ours: (c) => c.readResource({ uri: 'git://bench/diff/staged' }),
    plain: stagedDiffCalls,
  },
  {
    name: 'resources/read git://bench/log',
    ours: (c) => c.readResource({ uri: 'git://bench/log' }),
    plain: () => plain(['log', FORMAT, '-z', '--no-color', '--max-count=21', 'HEAD', '--']),
  },
  ...everyday,
];

const built = performance.now();
const generated = buildRepository();
if (generated) console.log(`Generated ${COMMITS} commits, ${BRANCHES} branches and a ${FILES}-file staged change in ${((performance.now() - built) / 1000).toFixed(1)} s (${repo}).`);

const loadAtStart = os.loadavg();
const server = await connectStdio(process.execPath, [path.join(here, '..', 'dist', 'index.js'), repo], { env: { SUITE_LOG_LEVEL: 'error' } });
console.log(`Server started in ${formatMs(server.startupMs)}; ${RUNS} measured runs per operation after ${WARMUP} warm-up runs; git ${execFileSync('git', ['--version']).toString().trim().replace('git version ', '')}.`);

const results = [];
for (const op of operations) {
  const times = { ours: [], plain: [] };
  for (let i = 0; i < WARMUP + RUNS; i++) {
    // Alternate which goes first, so neither always gets the warmer cache.
    const order = i % 2 === 0 ? ['ours', 'plain'] : ['plain', 'ours'];
    for (const who of order) {
      const start = performance.now();
      if (who === 'ours') await op.ours(server.client);
      else await op.plain();
      if (i >= WARMUP) times[who].push(performance.now() - start);
    }
  }
  // The spread: the middle 80% of runs (10th to 90th percentile), so one stall does not define it.
  const spread = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
    return [at(0.1), at(0.9)];
  };
  results.push({ name: op.name, ours: median(times.ours), plain: median(times.plain), oursSpread: spread(times.ours), plainSpread: spread(times.plain), target: op.target });
}
const prompt = await server.client.getPrompt({ name: 'git-commit', arguments: {} });
const embedded = prompt.messages.find((m) => m.content.type === 'resource')?.content.resource.text ?? '';
await server.close();

const loadAtEnd = os.loadavg();
const range = ([low, high]) => `${formatMs(low)}–${formatMs(high)}`;
const lines = [
  '',
  `Load average (1 min) ${loadAtStart[0].toFixed(1)} at the start, ${loadAtEnd[0].toFixed(1)} at the end, on ${os.cpus().length} cores.`,
  '',
  '| operation | server: median (p10–p90) | plain git, same commands: median (p10–p90) | overhead | target |',
  '|---|---|---|---|---|',
  ...results.map((r) => {
    const ratio = r.ours / r.plain;
    const target = r.target?.ms ? `< ${r.target.ms} ms: ${r.ours < r.target.ms ? 'met' : 'missed'}` : '< 2x';
    const overhead = `${ratio.toFixed(2)}x${ratio < 2 ? '' : ' (over 2x)'}`;
    return `| ${r.name} | ${formatMs(r.ours)} (${range(r.oursSpread)}) | ${formatMs(r.plain)} (${range(r.plainSpread)}) | ${overhead} | ${target} |`;
  }),
  '',
  `The git-commit prompt embedded ${(Buffer.byteLength(embedded) / 1024).toFixed(0)} KiB of diff (budget 64 KiB) out of a staged change of ${FILES + 1} files;`,
  `plain \`git diff --cached\` of the same change prints ${(Number(execFileSync('git', ['diff', '--cached', '--no-color'], { cwd: repo, env: gitEnv, maxBuffer: 1 << 30 }).length) / (1024 * 1024)).toFixed(1)} MiB.`,
];
console.log(lines.join('\n'));
