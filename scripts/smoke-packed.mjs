#!/usr/bin/env node
// pnpm smoke:packed: every package in its published form, used the way a user uses it.
//
// Packs every package with `pnpm pack` (its prepack builds it), checks what each tarball holds,
// installs all the tarballs together with plain npm into an empty directory outside the workspace
// (the @suite packages are not on a registry, so they are installed from their tarballs at once),
// then starts every bin through `npx -y @suite/server-x ...` from there, as a client config does,
// and drives it with an SDK client over stdio: initialize, tools/list and one real call per server
// (a file read, a SQLite query, a PostgreSQL query in a database made for the run, a call to the
// fake GitHub of the tests, a log tail, a git prompt on a new repository). It also runs --help,
// --version and bad arguments (one clear line on stderr and a non-zero exit, never a stack trace).
//
// Last, every config snippet of the READMEs (the json blocks for Claude Desktop, VS Code and Cursor,
// and the MCP Inspector command) is parsed and the command it holds is run the same way, with the
// user's paths, URLs and tokens replaced by the run's own: a README cannot drift from a working
// command. So are the shell lines that work before the packages are published ("Not on npm yet"):
// `node /path/to/suite/servers/<name>/dist/index.js ...` runs the workspace's build; a block's
// `npx -y pnpm@10 --filter <package> pack` must be the command this run packed with, its
// `npm install /path/to/suite/<tarball>` must name the tarball that wrote, which is then installed
// alone into an empty project (with every other tarball where it has dependencies), and its
// `npx mcp-server-<name> ...` runs there. And `npm pack --dry-run` in one server package, with no
// pnpm on PATH, must succeed: its prepack builds through npx (not with --tarballs). Needs PostgreSQL
// at TEST_DATABASE_URL (default postgresql://postgres@127.0.0.1:5432/test) and git. Ends with
// "smoke: N passed, N failed"; exits 1 on any failure. --keep leaves the temporary directory in
// place; --pack-into DIR packs into DIR and leaves the tarballs there; --tarballs DIR uses
// tarballs packed before instead of packing (CI's Node 22 and 24 runs).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { build } from 'esbuild';
import { npmEnv } from './npm-env.mjs';
import { installFootprint, installTarballs, packAll, packCommand, packedIn, readTarball, root, run, tarballName } from './packed.mjs';
import { assert, packedServers } from './packed-servers.mjs';

const keep = process.argv.includes('--keep');
const tarballsFlag = process.argv.indexOf('--tarballs');
const tarballsDir = tarballsFlag > 0 ? path.resolve(process.argv[tarballsFlag + 1]) : undefined;
const packIntoFlag = process.argv.indexOf('--pack-into');
const packInto = packIntoFlag > 0 ? path.resolve(process.argv[packIntoFlag + 1]) : undefined;
const work = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'suite-packed-')));
const installDir = path.join(work, 'install');
const fixtures = path.join(work, 'fixtures');
const results = { passed: 0, failed: 0 };
const log = (line) => process.stdout.write(`${line}\n`);

/** Runs one named check; a failure is reported and counted, and the run goes on. */
async function check(name, fn) {
  try {
    await fn();
    results.passed++;
    log(`  ok    ${name}`);
  } catch (error) {
    results.failed++;
    log(`  FAIL  ${name}\n        ${String(error instanceof Error ? error.message : error).replace(/\n/g, '\n        ')}`);
  }
}

const kit = packedServers({ fixtures, installDir });
const { servers: SERVERS, postgres, github } = kit;

// --- Running a bin ----------------------------------------------------------------------------

/** What a client starts: a restricted environment plus the config's own. */
function clientEnv(extra = {}) {
  return { ...getDefaultEnvironment(), ...extra };
}

/** Runs a command to its end with stdin closed; a server that did start exits on end of input. */
function runToEnd(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: installDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Connects an SDK client over stdio, calls `use(client)`, and closes. */
async function session(command, args, env, use, cwd = installDir) {
  const transport = new StdioClientTransport({ command, args, cwd, env, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'suite-smoke', version: '1.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const tools = await client.listTools();
    assert(tools.tools.length > 0, 'tools/list is empty');
    await use(client);
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error}${stderr ? `\nserver stderr: ${stderr.trim().slice(-1500)}` : ''}`);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** One clear line: `bin: message`, maybe the --help pointer, no stack trace; npm's own notes aside. */
function assertOneClearLine(bin, { code, signal, stdout, stderr }) {
  assert(code !== 0 && code !== null, `exit ${code ?? signal}, expected a non-zero exit`);
  assert(stdout === '', `wrote to stdout: ${JSON.stringify(stdout.slice(0, 200))}`);
  const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !/^npm (warn|notice)\b/.test(l));
  assert(lines.length >= 1 && lines[0].startsWith(`${bin}: `) && lines[0].length > bin.length + 10, `stderr does not start with "${bin}: <message>": ${JSON.stringify(stderr.slice(0, 500))}`);
  assert(lines.length === 1 || (lines.length === 2 && lines[1] === `Run '${bin} --help' for usage.`), `more than one line on stderr: ${JSON.stringify(stderr.slice(0, 800))}`);
  assert(!/^\s+at /m.test(stderr), 'stderr holds a stack trace');
  const quotes = (lines[0].match(/'/g) ?? []).length;
  assert(quotes % 2 === 0, `unbalanced quotes: ${lines[0]}`);
}

// --- What a tarball must hold -----------------------------------------------------------------

function checkTarball(p) {
  const entries = readTarball(p.tarball);
  const files = new Map(entries.map((e) => [e.path, e]));
  const manifest = JSON.parse(files.get('package.json').data.toString('utf8'));
  const problems = [];
  const text = JSON.stringify(manifest);
  if (text.includes('workspace:')) problems.push('package.json has workspace: ranges');
  for (const field of ['license', 'homepage', 'bugs', 'keywords', 'engines', 'repository', 'description']) if (!manifest[field]) problems.push(`no ${field}`);
  if (manifest.repository?.directory !== p.rel) problems.push(`repository.directory is ${manifest.repository?.directory}, expected ${p.rel}`);
  for (const file of ['README.md', 'LICENSE']) if (!files.has(file)) problems.push(`no ${file}`);
  if (files.has('LICENSE') && files.get('LICENSE').data.toString('utf8') !== readFileSync(path.join(root, 'LICENSE'), 'utf8')) problems.push('LICENSE differs from the root LICENSE');
  for (const file of files.keys()) {
    if (/(^|\/)(test|tests|src|bench)\//.test(file) || /\.test\.|\.map$|\.tsbuildinfo$/.test(file) || (/\.ts$/.test(file) && !file.endsWith('.d.ts'))) problems.push(`ships ${file}`);
  }
  for (const [bin, target] of Object.entries(manifest.bin ?? {})) {
    const entry = files.get(target.replace(/^\.\//, ''));
    if (!entry) problems.push(`bin ${bin} -> ${target} is missing`);
    else {
      if (!entry.data.toString('utf8', 0, 20).startsWith('#!/usr/bin/env node\n')) problems.push(`bin ${target} has no node shebang`);
      if ((entry.mode & 0o111) === 0) problems.push(`bin ${target} is not executable (mode ${entry.mode.toString(8)})`);
    }
  }
  return { problems: [...new Set(problems)], manifest, entries };
}

/**
 * esbuild resolves every import of the installed package's own JavaScript from the install
 * directory, as Node would (exports maps and conditions included): a dependency that is used but
 * not declared is missing there and fails. Only the package's own imports are followed, not its
 * dependencies' (their manifests are theirs). Requires that a bundle keeps as calls (pg's optional
 * pg-native) are checked when bundling, by scripts/bundle.mjs.
 */
async function checkImports(p) {
  const dir = path.join(installDir, 'node_modules', ...p.name.split('/'));
  const files = readTarball(p.tarball).filter((e) => e.path.endsWith('.js')).map((e) => path.join(dir, e.path));
  // An optional peer dependency is the user's to install: not resolving it is right.
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const optionalPeers = new Set(Object.keys(manifest.peerDependencies ?? {}).filter((name) => manifest.peerDependenciesMeta?.[name]?.optional));
  const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
  const ownImportsOnly = {
    name: 'own-imports-only',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData?.inner) return undefined;
        if (optionalPeers.has(packageOf(args.path))) return { path: args.path, external: true };
        const resolved = await b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, importer: args.importer, pluginData: { inner: true } });
        return resolved.errors.length > 0 ? { errors: resolved.errors } : { path: args.path, external: true };
      });
    },
  };
  const result = await build({
    entryPoints: files,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    outdir: path.join(work, 'resolve-check'),
    absWorkingDir: installDir,
    logLevel: 'silent',
    plugins: [ownImportsOnly],
  }).catch((error) => error);
  const errors = result.errors ?? [];
  assert(errors.length === 0, errors.map((e) => `${e.location?.file ?? ''}: ${e.text}`).slice(0, 10).join('\n'));
}

// --- README snippets --------------------------------------------------------------------------

/** The fenced blocks of a README, each with the heading it sits under. */
function fencedBlocks(markdown) {
  const blocks = [];
  let heading = '';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    const open = /^```(\w*)\s*$/.exec(line);
    if (!open) continue;
    const body = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]); i++) body.push(lines[i]);
    blocks.push({ lang: open[1], heading, text: body.join('\n'), line: i + 1 - body.length });
  }
  return blocks;
}

function clientOf(heading) {
  if (/claude desktop/i.test(heading)) return 'Claude Desktop';
  if (/vs ?code/i.test(heading)) return 'VS Code';
  if (/cursor/i.test(heading)) return 'Cursor';
  if (/inspector/i.test(heading)) return 'MCP Inspector';
  return 'other';
}

/**
 * The commands of a shell line: `a && b`, a trailing `# comment` dropped, each with its leading
 * VAR=value assignments as its environment.
 */
function shellCommands(line) {
  return line
    .replace(/\s+#.*$/, '')
    .split('&&')
    .map((part) => {
      const words = part.trim().split(/\s+/).filter(Boolean);
      const env = {};
      while (words.length > 1 && /^[A-Za-z_]\w*=/.test(words[0])) {
        const [k, ...v] = words.shift().split('=');
        env[k] = v.join('=');
      }
      return { words, env };
    })
    .filter((c) => c.words.length > 0);
}

/**
 * The server entries of a README: json config blocks, Inspector command lines and the shell lines
 * of "Not on npm yet" (a clone's bin run with node, an installed package's bin run with npx); and
 * the recipes of those blocks (a pack command and the npm install of its tarball).
 */
function snippetsOf(readme) {
  const snippets = [];
  const recipes = [];
  for (const block of fencedBlocks(readFileSync(path.join(root, readme), 'utf8'))) {
    const where = `${readme}:${block.line}`;
    if (block.lang === 'json') {
      let config;
      try {
        config = JSON.parse(block.text);
      } catch {
        continue;
      }
      const servers = config?.mcpServers ?? config?.servers;
      if (!servers || typeof servers !== 'object') continue;
      const client = clientOf(block.heading);
      for (const [key, entry] of Object.entries(servers)) {
        snippets.push({ where: `${where} ${key}`, client, format: config.mcpServers ? 'mcpServers' : 'servers', inputs: config.inputs ?? [], ...entry });
      }
    }
    if (block.lang === 'sh' || block.lang === 'bash') {
      const recipe = { where };
      for (const { words, env } of block.text.split('\n').flatMap(shellCommands)) {
        if (words[0] === 'npx' && words[1] === '-y' && /^pnpm@/.test(words[2] ?? '') && words.includes('--filter') && words.at(-1) === 'pack') recipe.pack = words;
        else if (words[0] === 'npm' && words[1] === 'install' && words.at(-1).endsWith('.tgz')) recipe.install = words.at(-1);
        else if (words[0] === 'node' && /^\/path\/to\/suite\/servers\//.test(words[1] ?? '')) {
          snippets.push({ where: `${where} node`, client: 'shell', format: 'command line', inputs: [], command: 'node', args: words.slice(1), env });
        } else if (words[0] === 'npx' && /^mcp-server-/.test(words[1] ?? '')) {
          snippets.push({ where: `${where} ${words[1]}`, client: 'shell', format: 'command line', inputs: [], command: 'npx', args: words.slice(1), env, recipe });
        }
      }
      if (recipe.pack || recipe.install) recipes.push(recipe);
      for (const line of block.text.split('\n')) {
        const m = /^npx (?:-y )?@modelcontextprotocol\/inspector\s+(.*)$/.exec(line.trim());
        if (!m) continue;
        // The Inspector's own options (-e KEY=VALUE, --cli, --method M, --) come before the server command.
        const words = m[1].split(/\s+/);
        const env = {};
        while (words.length > 0 && words[0].startsWith('-')) {
          const option = words.shift();
          if (option === '--') break;
          if (option === '-e') {
            const [k, ...v] = words.shift().split('=');
            env[k] = v.join('=');
          } else if (option === '--method') words.shift();
        }
        snippets.push({ where: `${where} inspector`, client: 'MCP Inspector', format: 'command line', command: words[0], args: words.slice(1), env });
      }
    }
  }
  return { snippets, recipes };
}

/** Installed projects of the README recipes, by package: one npm install of each tarball alone. */
const recipeInstalls = new Map();

/**
 * A README's "pack, then npm install" block, checked against this run: the pack command is the one
 * the run packed with, the tarball named is the one it wrote (at the root of the clone), and that
 * tarball installs alone into an empty project. A package with dependencies (sqlite's better-sqlite3,
 * compiled from source here) is not installed a second time: its bin runs where every tarball was
 * installed together. Sets recipe.dir, where the block's `npx mcp-server-<name>` lines run.
 */
async function checkRecipe(recipe, packages) {
  assert(recipe.pack, `npm install ${recipe.install} with no pack command before it in the block`);
  assert(recipe.install, `${recipe.pack.join(' ')} with no npm install of its tarball in the block`);
  const filter = recipe.pack[recipe.pack.indexOf('--filter') + 1];
  const server = packages.find((p) => p.name === filter);
  assert(server, `--filter ${filter} names no package of the suite`);
  const [command, args] = packCommand(server.name);
  assert(recipe.pack.join(' ') === [command, ...args].join(' '), `"${recipe.pack.join(' ')}" is not the command this run packs with: ${[command, ...args].join(' ')}`);
  assert(recipe.install === `/path/to/suite/${tarballName(server)}`, `npm install ${recipe.install}: pnpm pack writes ${tarballName(server)} in the directory it runs in, /path/to/suite`);
  if (Object.keys(server.manifest.dependencies ?? {}).length > 0) recipe.dir = installDir;
  else {
    if (!recipeInstalls.has(server.name)) {
      const dir = path.join(work, `readme-install-${recipeInstalls.size}`);
      await installTarballs(dir, [server.tarball]);
      recipeInstalls.set(server.name, dir);
    }
    recipe.dir = recipeInstalls.get(server.name);
  }
}

/**
 * `npm pack --dry-run` in a package, as someone who has only npm runs it: PATH without any
 * directory that holds pnpm (node, npm and npx linked into one of their own) and no npm_* variable
 * of the pnpm running this script. Its prepack builds the package (through npx -y pnpm@10).
 */
async function npmPackWithoutPnpm(p) {
  const bin = path.join(work, 'npm-only-bin');
  mkdirSync(bin, { recursive: true });
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  const find = (tool) => dirs.map((d) => path.join(d, tool)).find((f) => existsSync(f));
  for (const tool of ['npm', 'npx']) {
    const found = find(tool);
    assert(found, `no ${tool} on PATH`);
    symlinkSync(found, path.join(bin, tool));
  }
  symlinkSync(process.execPath, path.join(bin, 'node'));
  const PATH = [bin, ...dirs.filter((d) => !existsSync(path.join(d, 'pnpm')) && !existsSync(path.join(d, 'pnpm.cmd')))].join(path.delimiter);
  const env = { ...Object.fromEntries(Object.entries(npmEnv()).filter(([k]) => !/^npm_(?!config_)/i.test(k))), PATH };
  const pnpmFound = await run('sh', ['-c', 'command -v pnpm || true'], { env });
  assert(pnpmFound.trim() === '', `pnpm is still on the PATH made without it: ${pnpmFound.trim()}`);
  const output = await run('npm', ['pack', '--dry-run'], { cwd: p.dir, env });
  assert(output.includes(tarballName(p)), `npm pack --dry-run did not name ${tarballName(p)}:\n${output.slice(-2000)}`);
  assert(/prepack/.test(output), `npm pack --dry-run ran no prepack:\n${output.slice(-2000)}`);
}

let fixtureCount = 0;
const isPathLike = (v) => /^(\/|~|\$\{workspaceFolder\}|[A-Za-z]:\\)/.test(v);

/** The snippet's command with the user's paths, URLs and secrets replaced by the run's own. */
async function resolveSnippet(snippet, packages) {
  assert(typeof snippet.command === 'string' && Array.isArray(snippet.args ?? []), 'an entry needs "command" and "args"');
  const args = [...(snippet.args ?? [])];
  let server;
  let command = snippet.command;
  let first = 1;
  if (command === 'npx' && /^mcp-server-/.test(args[0] ?? '')) {
    // An installed package's bin (the READMEs' "Not on npm yet"): npx finds it in the project it was installed in.
    server = packages.find((p) => Object.keys(p.manifest.bin ?? {}).includes(args[0]));
    assert(server, `${args[0]} is the bin of no server of the suite`);
  } else if (command === 'npx') {
    first = 2;
    assert(args[0] === '-y', `npx without -y stops to ask before installing: ${args.join(' ')}`);
    server = packages.find((p) => p.name === args[1]);
    assert(server, `${args[1]} is not a package of the suite`);
  } else if (command === 'node' && /^(\/path\/to\/suite\/)?servers\//.test(args[0] ?? '')) {
    // A local checkout's entry: run the workspace's own build.
    args[0] = path.join(root, args[0].replace(/^\/path\/to\/suite\//, ''));
    server = packages.find((p) => args[0].startsWith(`${p.dir}${path.sep}`));
    assert(server, `${args[0]} is not a server of the suite`);
  } else throw new Error(`unexpected command ${command}`);
  const kind = server.rel.replace(/^servers\//, '');
  const spec = SERVERS[kind];
  const placeholders = new Map();
  const substitute = async (value) => {
    if (/^postgres(ql)?:\/\//.test(value)) return postgres.url;
    const input = /^\$\{input:([^}]+)\}$/.exec(value);
    if (input) {
      // VS Code asks for an input only when the file declares it.
      assert(snippet.inputs.some((i) => i.id === input[1]), `${value} is not declared in "inputs"`);
      return 'smoke-input-value';
    }
    if (isPathLike(value) && !value.includes('/path/to/suite/')) {
      if (!placeholders.has(value)) placeholders.set(value, await spec.fixture(fixtureCount++));
      return placeholders.get(value);
    }
    return value;
  };
  for (let i = first; i < args.length; i++) args[i] = await substitute(args[i]);
  const env = {};
  for (const [k, v] of Object.entries(snippet.env ?? {})) env[k] = await substitute(v);
  if (kind === 'github') {
    // The run's fake GitHub instead of github.com or the Enterprise host the snippet names.
    delete env.GITHUB_HOST;
    for (const k of ['GITHUB_PERSONAL_ACCESS_TOKEN', 'GITHUB_TOKEN']) if (k in env) env[k] = github.token;
    env.GITHUB_API_URL = github.fake.apiUrl;
    const host = args.indexOf('--github-host');
    if (host >= 0) args.splice(host, 2);
  }
  if (kind === 'postgres' && !args.slice(first).some((a) => a.startsWith('postgres')) && !env.DATABASE_URL && !env.PGHOST) env.DATABASE_URL = postgres.url;
  return { command, args, env, kind, spec, server };
}

/** Whether the package claims the running Node.js in its `engines` ("20 || 22 || 24 || 26": whole major lines). */
function claimsThisNode(manifest) {
  const major = process.versions.node.split('.')[0];
  return (manifest.engines?.node ?? '').split('||').some((range) => range.trim() === major);
}

// --- The run ----------------------------------------------------------------------------------

const started = performance.now();
let packages = [];
try {
  if (tarballsDir) {
    packages = packedIn(tarballsDir);
    log(`== the tarballs in ${tarballsDir} (not packed again)`);
  } else {
    const destination = packInto ?? path.join(work, 'tarballs');
    log(`== packing every package (pnpm pack runs each prepack, which builds) into ${destination}`);
    const packStart = performance.now();
    packages = await packAll(destination);
    log(`   ${packages.length} packages packed in ${((performance.now() - packStart) / 1000).toFixed(0)} s`);
  }

  log('== what each tarball holds');
  for (const p of packages) {
    await check(`${p.name}: tarball (${readTarball(p.tarball).length} files) has README, LICENSE, the metadata, no workspace: range and a runnable bin; no tests, sources or maps`, () => {
      const { problems } = checkTarball(p);
      assert(problems.length === 0, problems.join('\n'));
    });
  }

  // Beside the install (it rebuilds the package and shared in the workspace, which nothing reads
  // until the services start). Not on the runs that reuse tarballs: packing is not a Node.js matter.
  const npmOnly = packages.find((p) => p.rel === 'servers/filesystem') ?? packages.find((p) => p.rel.startsWith('servers/'));
  const npmPacked = tarballsDir ? undefined : check(`${npmOnly.name}: npm pack --dry-run with no pnpm on PATH succeeds (its prepack builds through npx -y pnpm@10)`, () => npmPackWithoutPnpm(npmOnly));

  log('== npm install of every tarball together, in an empty directory outside the workspace');
  const install = await installTarballs(installDir, packages.map((p) => p.tarball));
  const footprint = await installFootprint(installDir);
  log(`   ${footprint.packages} packages, ${(footprint.bytes / 1048576).toFixed(1)} MiB, ${install.seconds.toFixed(1)} s`);

  for (const p of packages) {
    await check(`${p.name}: every import of its installed files resolves (nothing that only resolves inside the workspace)`, () => checkImports(p));
  }

  await npmPacked;
  await kit.start();

  const servers = packages.filter((p) => p.rel.startsWith('servers/'));
  for (const server of servers) {
    const kind = server.rel.replace(/^servers\//, '');
    const spec = SERVERS[kind];
    const bin = Object.keys(server.manifest.bin)[0];
    log(`== ${server.name} (npx -y ${server.name} ...)`);
    if (!claimsThisNode(server.manifest)) {
      log(`   not run: its engines (${server.manifest.engines?.node}) do not claim node ${process.version}`);
      continue;
    }
    if (!spec) {
      await check(`${server.name}: the smoke test knows how to drive it`, () => {
        throw new Error(`add servers/${kind} to the servers of scripts/packed-servers.mjs`);
      });
      continue;
    }
    const npx = (args) => ['-y', server.name, ...args];
    const env = clientEnv(spec.env?.() ?? {});
    await check(`${kind}: --help prints the usage and exits 0`, async () => {
      const r = await runToEnd('npx', npx(['--help']), env);
      assert(r.code === 0 && r.stdout.includes(`Usage: ${bin} `), `exit ${r.code}, stdout ${JSON.stringify(r.stdout.slice(0, 200))}, stderr ${r.stderr.slice(0, 500)}`);
    });
    await check(`${kind}: --version prints ${server.version}`, async () => {
      const r = await runToEnd('npx', npx(['--version']), env);
      assert(r.code === 0 && r.stdout === `${server.version}\n`, `exit ${r.code}, stdout ${JSON.stringify(r.stdout)}`);
    });
    const badArgs = [['--no-such-option'], ...(typeof spec.badArgs === 'function' ? await spec.badArgs() : spec.badArgs)];
    for (const args of badArgs) {
      await check(`${kind}: ${args.join(' ')} is refused with one clear line and a non-zero exit`, async () => assertOneClearLine(bin, await runToEnd('npx', npx(args), env)));
    }
    await check(`${kind}: initialize, tools/list and a real call over stdio`, async () => {
      const target = await spec.fixture('main');
      await session('npx', npx(target === undefined ? [] : [target]), env, (client) => spec.realCall(client, target));
    });
  }

  log('== the config snippets of the READMEs, run as written (with this run\'s paths, URLs and tokens)');
  const readmes = ['README.md', ...servers.map((s) => `${s.rel}/README.md`)];
  for (const readme of readmes) {
    const { snippets, recipes } = snippetsOf(readme);
    const server = servers.find((s) => readme === `${s.rel}/README.md`);
    for (const recipe of recipes) {
      await check(`${recipe.where}: ${recipe.pack?.join(' ')}, then npm install ${recipe.install} (into an empty project)`, () => checkRecipe(recipe, servers));
    }
    await check(`${readme}: has a tested entry for Claude Desktop, VS Code, Cursor and the MCP Inspector`, () => {
      const clients = new Set(snippets.map((s) => s.client));
      const missing = ['Claude Desktop', 'VS Code', 'Cursor', 'MCP Inspector'].filter((c) => !clients.has(c));
      assert(missing.length === 0, `no snippet under a heading for ${missing.join(', ')}`);
      for (const s of snippets) {
        if (s.client === 'VS Code') assert(s.format === 'servers' && s.type === 'stdio', `${s.where}: VS Code's mcp.json takes "servers" with "type": "stdio"`);
        if (s.client === 'Claude Desktop' || s.client === 'Cursor') assert(s.format === 'mcpServers', `${s.where}: ${s.client} takes "mcpServers"`);
      }
      if (server) assert(snippets.some((s) => s.args?.includes(server.name) || s.args?.[0]?.includes(`/${server.rel}/`)), `no snippet runs ${server.name}`);
    });
    for (const snippet of snippets) {
      await check(`${snippet.where} (${snippet.client}): ${[snippet.command, ...(snippet.args ?? [])].join(' ')}`, async () => {
        const resolved = await resolveSnippet(snippet, servers);
        if (!claimsThisNode(resolved.server.manifest)) return log(`        (not run: ${resolved.server.name} does not claim node ${process.version})`);
        if (snippet.recipe) assert(snippet.recipe.dir, `${snippet.recipe.where}: the pack and npm install of the block did not succeed`);
        await session(resolved.command, resolved.args, clientEnv(resolved.env), (client) => resolved.spec.probe(client), snippet.recipe?.dir ?? installDir);
      });
    }
  }
} catch (error) {
  results.failed++;
  log(`  FAIL  the run stopped: ${error instanceof Error ? error.stack : error}`);
} finally {
  await kit.stop().catch((error) => log(`  (could not stop the services: ${error.message})`));
  if (!keep) await rm(work, { recursive: true, force: true });
  else log(`kept ${work}`);
}
log(`\nsmoke:packed took ${((performance.now() - started) / 1000).toFixed(0)} s on node ${process.version}`);
log(`smoke: ${results.passed} passed, ${results.failed} failed`);
process.exit(results.failed > 0 ? 1 : 0);
