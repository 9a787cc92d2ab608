// What the MCP Bundle scripts share (pack-bundles, check-bundles, bundle-catalog): which servers
// have a bundle, how a bundle's directory is staged from a built server, how a manifest becomes the
// command line Claude Desktop would run, and the catalog of tools and prompts a running server
// answers. The sample configurations to run them with are in mcpb-samples.mjs.
import { build } from 'esbuild';
import { getMcpConfigForManifest, packExtension } from '@anthropic-ai/mcpb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { chmod, copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { builtinModules, createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Every server package that carries an MCPB manifest (servers/<name>/manifest.json). */
export function bundledServers() {
  return readdirSync(path.join(root, 'servers'))
    .filter((name) => existsSync(path.join(root, 'servers', name, 'manifest.json')))
    .sort();
}

export function serverDir(name) {
  return path.join(root, 'servers', name);
}

// ---------------------------------------------------------------------------------------------
// Staging: the bundle's directory, made from the built bin and only what it loads at run time.
// ---------------------------------------------------------------------------------------------

/** Worker and child-process scripts the bin starts by URL, e.g. new URL('./worker/x.js', import.meta.url). */
function startedScripts(binFile) {
  const text = readFileSync(binFile, 'utf8');
  const found = new Set();
  for (const match of text.matchAll(/new URL\(\s*["'](\.{1,2}\/[^"']+\.[cm]?js)["']\s*,\s*import\.meta\.url\s*\)/g)) {
    const file = path.resolve(path.dirname(binFile), match[1]);
    // The bin also names its source-tree twin (used only under vitest); that one is not shipped.
    if (file.startsWith(path.dirname(binFile) + path.sep) && existsSync(file)) found.add(file);
  }
  return [...found];
}

/**
 * The files an entry reaches by static import or require (its own relative modules), and the
 * packages it leaves external. `entry` is a file, or { package, from }: that package as both
 * `import` and `require` from the directory `from` resolve it (an ESM bin and a CommonJS
 * dependency can load different files of one package, through its "exports" conditions).
 */
async function traceEntry(entry, { external }) {
  const source =
    typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { contents: `import ${JSON.stringify(entry.package)};\nrequire(${JSON.stringify(entry.package)});\n`, resolveDir: entry.from, sourcefile: 'external-package.js' } };
  const result = await build({
    ...source,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    logLevel: 'silent',
    absWorkingDir: root,
    ...(external ? { packages: 'external' } : {}),
    // Addons are loaded by computed paths at run time; they are copied by rule (nativeFiles), not traced.
    loader: { '.node': 'empty' },
  });
  const inputs = Object.keys(result.metafile.inputs)
    .filter((p) => path.basename(p) !== 'external-package.js')
    .map((p) => path.resolve(root, p));
  const imports = Object.values(result.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
  return { inputs, imports };
}

function packageNameOf(specifier) {
  if (specifier.startsWith('node:')) return undefined;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  return builtinModules.includes(name) ? undefined : name;
}

/** The directory of the package that holds a file inside node_modules, and the package's name. */
function owningPackage(file) {
  const marker = `${path.sep}node_modules${path.sep}`;
  const at = file.lastIndexOf(marker);
  if (at < 0) return undefined;
  const rest = file.slice(at + marker.length).split(path.sep);
  const nameParts = rest[0].startsWith('@') ? rest.slice(0, 2) : rest.slice(0, 1);
  return { name: nameParts.join('/'), dir: file.slice(0, at + marker.length) + nameParts.join(path.sep) };
}

/**
 * Compiled addons where node-gyp (build/Release) or a package's prebuilds put them: prebuilds/<platform>-<arch>/*.node
 * (prebuildify) or prebuilds/<platform>-<arch>.node (better-sqlite3 13). Of the prebuilds, only this platform's and
 * architecture's (glibc and musl builds alike): a bundle with an addon is marked for this platform only.
 */
function nativeFiles(packageDir) {
  const found = [];
  const release = path.join(packageDir, 'build', 'Release');
  if (existsSync(release)) for (const f of readdirSync(release)) if (f.endsWith('.node')) found.push(path.join(release, f));
  const prebuilds = path.join(packageDir, 'prebuilds');
  const thisPlatform = new RegExp(`^${process.platform}(musl)?-${process.arch}(\\.node)?$`);
  if (existsSync(prebuilds)) {
    for (const entry of readdirSync(prebuilds, { withFileTypes: true })) {
      if (!thisPlatform.test(entry.name)) continue;
      if (entry.isFile() && entry.name.endsWith('.node')) found.push(path.join(prebuilds, entry.name));
      if (entry.isDirectory()) for (const f of readdirSync(path.join(prebuilds, entry.name))) if (f.endsWith('.node')) found.push(path.join(prebuilds, entry.name, f));
    }
  }
  return found;
}

/**
 * Stages servers/<name> as a bundle directory: manifest.json, package.json (the bin reads its
 * version from ../package.json), server/ (the bundled bin and the scripts it starts, as the build
 * wrote them) and node_modules/ (only the packages the bin leaves external, with the files they
 * load). Returns what it staged, including any compiled addons.
 */
export async function stageServer(name, stageDir, manifest) {
  const dir = serverDir(name);
  const pkg = readJson(path.join(dir, 'package.json'));
  const binFile = path.join(dir, Object.values(pkg.bin)[0]);
  if (!existsSync(binFile)) throw new Error(`${name}: ${path.relative(root, binFile)} is missing; build first (pnpm build).`);
  const distDir = path.dirname(binFile);
  await rm(stageDir, { recursive: true, force: true });
  await mkdir(stageDir, { recursive: true });

  const serverFiles = new Set();
  const externals = new Set();
  for (const entry of [binFile, ...startedScripts(binFile)]) {
    const { inputs, imports } = await traceEntry(entry, { external: true });
    for (const input of inputs) {
      if (!input.startsWith(distDir + path.sep)) throw new Error(`${name}: ${path.relative(root, entry)} loads ${path.relative(root, input)}, outside ${path.relative(root, distDir)}.`);
      serverFiles.add(input);
    }
    for (const specifier of imports) {
      const pkgName = packageNameOf(specifier);
      if (pkgName) externals.add(pkgName);
    }
    // The build gives bundled CommonJS code its own `require` (a local variable, which the trace does
    // not follow), so a package it leaves external shows up only as require("name") in the text. Such
    // strings also occur inside code generators' templates; the ones that are dependencies count.
    const declared = { ...pkg.dependencies, ...pkg.optionalDependencies };
    // esbuild renames a `require` of the sources that would clash with the banner's (require2, ...).
    for (const m of readFileSync(entry, 'utf8').matchAll(/\brequire\d*\(\s*["']([^"'./][^"']*)["']\s*\)/g)) {
      const pkgName = packageNameOf(m[1]);
      if (pkgName && pkgName in declared && !pkgName.startsWith('@suite/')) externals.add(pkgName);
    }
  }
  for (const file of serverFiles) {
    const target = path.join(stageDir, 'server', path.relative(distDir, file));
    await mkdir(path.dirname(target), { recursive: true });
    await copyFile(file, target);
  }
  await chmod(path.join(stageDir, 'server', path.relative(distDir, binFile)), 0o755);
  // The MCP Apps' HTML (dist/apps/*.html): read at run time beside the bin, so no import reaches it.
  const appsDir = path.join(distDir, 'apps');
  if (existsSync(appsDir)) {
    for (const file of readdirSync(appsDir).filter((f) => f.endsWith('.html'))) {
      await mkdir(path.join(stageDir, 'server', 'apps'), { recursive: true });
      await copyFile(path.join(appsDir, file), path.join(stageDir, 'server', 'apps', file));
    }
  }

  // External packages (native addons and whatever the build left out), traced the same way.
  const packages = new Map();
  const skipped = [];
  const requireFromServer = createRequire(path.join(dir, 'package.json'));
  for (const pkgName of [...externals].sort()) {
    let traced;
    let installedDir;
    try {
      traced = await traceEntry({ package: pkgName, from: dir }, { external: false });
      installedDir = path.dirname(realpathSync(requireFromServer.resolve(`${pkgName}/package.json`)));
    } catch {
      // Not installed here (an optional peer such as pg-native, or an optional dependency this
      // Node skipped for its engines): an npm install on this Node lacks it too.
      skipped.push(pkgName);
      continue;
    }
    const { inputs } = traced;
    for (const input of inputs) {
      // The package itself goes where the bin resolves it: under the name it is declared with,
      // which for an npm alias (better-sqlite3-13) is not the name in its own package.json.
      const owner = input.startsWith(installedDir + path.sep) ? { name: pkgName, dir: installedDir } : owningPackage(input);
      if (!owner) throw new Error(`${name}: ${pkgName} loads ${input}, which is in no package.`);
      const known = packages.get(owner.name);
      if (known && known.dir !== owner.dir) throw new Error(`${name}: two copies of ${owner.name} (${known.dir}, ${owner.dir}); a flat node_modules cannot hold both.`);
      if (!known) packages.set(owner.name, { dir: owner.dir, files: new Set() });
      packages.get(owner.name).files.add(input);
    }
  }
  const addons = [];
  for (const [pkgName, { dir: pkgDir, files }] of packages) {
    files.add(path.join(pkgDir, 'package.json'));
    // Their licences travel with their code.
    for (const f of readdirSync(pkgDir)) if (/^(licen[cs]e|notice|copying)/i.test(f)) files.add(path.join(pkgDir, f));
    for (const addon of nativeFiles(pkgDir)) {
      files.add(addon);
      addons.push(path.join('node_modules', pkgName, path.relative(pkgDir, addon)));
    }
    for (const file of files) {
      const target = path.join(stageDir, 'node_modules', pkgName, path.relative(pkgDir, file));
      await mkdir(path.dirname(target), { recursive: true });
      await copyFile(file, target);
    }
  }

  await writeFile(
    path.join(stageDir, 'package.json'),
    `${JSON.stringify({ name: pkg.name, version: pkg.version, description: pkg.description, license: pkg.license, private: true, type: 'module' }, null, 2)}\n`,
  );
  for (const doc of ['README.md', 'LICENSE']) {
    const from = [path.join(dir, doc), path.join(root, doc)].find((f) => existsSync(f));
    if (from && (doc !== 'README.md' || from.startsWith(dir))) await copyFile(from, path.join(stageDir, doc));
  }
  await writeFile(path.join(stageDir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { files: serverFiles.size, packages: [...packages.keys()], skipped, addons };
}

/** `mcpb pack` of a directory, without the validator's console chatter (errors still print to stderr). */
export async function packQuietly(extensionPath, outputPath) {
  const log = console.log;
  console.log = () => {};
  try {
    return await packExtension({ extensionPath, outputPath, silent: true });
  } finally {
    console.log = log;
  }
}

/**
 * A bundle that carries a compiled addon runs only where the addon was built: this platform and
 * this Node major (its ABI). The committed manifest cannot know that; the staged one says so.
 */
export function narrowForAddons(manifest, addons) {
  if (addons.length === 0) return manifest;
  const major = Number(process.versions.node.split('.')[0]);
  return {
    ...manifest,
    compatibility: {
      ...manifest.compatibility,
      platforms: [process.platform],
      runtimes: { ...manifest.compatibility?.runtimes, node: `>=${major}.0.0 <${major + 1}.0.0` },
    },
  };
}

/** Whether a version satisfies a range made of `>=x.y.z` and `<x.y.z` comparators (the forms our manifests use). */
export function satisfies(version, range) {
  const num = (v) => v.split('.').map(Number);
  const cmp = (a, b) => {
    for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
    return 0;
  };
  return range.split(/\s+/).every((comparator) => {
    const m = /^(>=|<)(\d+\.\d+\.\d+)$/.exec(comparator);
    if (!m) throw new Error(`unsupported range comparator "${comparator}" in "${range}"`);
    const c = cmp(num(version), num(m[2]));
    return m[1] === '>=' ? c >= 0 : c < 0;
  });
}

// ---------------------------------------------------------------------------------------------
// Launching: the manifest's mcp_config resolved as Claude Desktop resolves it.
// ---------------------------------------------------------------------------------------------

/**
 * The command, arguments and environment for a bundle unpacked at `dir`, with `userConfig` as the
 * user filled the form in. Uses the MCPB library's own resolver (the code Claude Desktop uses):
 * ${__dirname}, ${HOME} and friends, ${user_config.x} with defaults, arrays expanded into
 * separate arguments. A placeholder left unresolved would reach the server verbatim; that is an error.
 */
export async function launchConfig(manifest, dir, userConfig) {
  const home = os.homedir();
  const config = await getMcpConfigForManifest({
    manifest,
    extensionPath: dir,
    systemDirs: { HOME: home, DESKTOP: path.join(home, 'Desktop'), DOCUMENTS: path.join(home, 'Documents'), DOWNLOADS: path.join(home, 'Downloads') },
    userConfig,
    pathSeparator: path.sep,
  });
  if (!config) throw new Error(`${manifest.name}: a required user_config value is missing from ${JSON.stringify(Object.keys(userConfig))}.`);
  const leftover = JSON.stringify([config.args ?? [], config.env ?? {}]).match(/\$\{[^}]*\}/g);
  if (leftover) throw new Error(`${manifest.name}: ${leftover.join(', ')} would reach the server unresolved (an optional user_config needs a default).`);
  // Claude Desktop runs "node" bundles with a Node it picks; here it is the Node running this script.
  return { command: config.command === 'node' ? process.execPath : config.command, args: config.args ?? [], env: config.env ?? {} };
}

/** Starts a server and connects an SDK client over stdio. The environment is the SDK's default plus the config's, as a desktop client passes it. */
export async function connect({ command, args, env }, { cwd } = {}) {
  const transport = new StdioClientTransport({ command, args, env, cwd: cwd ?? os.tmpdir(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'suite-bundle-check', version: '0.0.0' }, { capabilities: {} });
  try {
    await client.connect(transport);
  } catch (error) {
    await client.close().catch(() => {});
    throw new Error(`${error.message}\n--- server stderr ---\n${stderr.trim()}`);
  }
  return { client, stderr: () => stderr, close: () => client.close() };
}

// ---------------------------------------------------------------------------------------------
// Catalog: the tools and prompts a manifest lists, made from what the server answers.
// ---------------------------------------------------------------------------------------------

async function listAll(method, key) {
  const items = [];
  let cursor;
  do {
    const page = await method(cursor ? { cursor } : {});
    items.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

/**
 * A prompt's manifest `text` is required by the schema but cannot hold what our servers send: they
 * build the messages at prompts/get from the repository, database or logs. The text states the
 * prompt's purpose and its arguments as template variables, which is what a client that only
 * reads the manifest can show.
 */
function promptText(prompt) {
  const args = (prompt.arguments ?? []).map((a) => `${a.name}: \${arguments.${a.name}}`);
  return [prompt.description ?? prompt.name, ...(args.length ? ['', ...args] : [])].join('\n');
}

/** The manifest's `tools` and `prompts` for what a connected server lists. */
export async function liveCatalog(client) {
  const capabilities = client.getServerCapabilities() ?? {};
  const tools = capabilities.tools ? await listAll((p) => client.listTools(p), 'tools') : [];
  const prompts = capabilities.prompts ? await listAll((p) => client.listPrompts(p), 'prompts') : [];
  return {
    tools: tools.map((t) => ({ name: t.name, description: t.description ?? '' })).sort((a, b) => a.name.localeCompare(b.name)),
    prompts: prompts
      .map((p) => {
        const args = (p.arguments ?? []).map((a) => a.name);
        return { name: p.name, description: p.description ?? '', ...(args.length ? { arguments: args } : {}), text: promptText(p) };
      })
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** Where two texts part, with a little context: `…listed text… | …served text…`. */
function firstDifference(a, b) {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const from = Math.max(0, i - 30);
  return `manifest …${a.slice(from, i + 50)}… | server …${b.slice(from, i + 50)}…`;
}

/** Differences between a manifest's lists and a live catalog, one line each; empty when they agree. */
export function catalogDrift(manifest, live) {
  const drift = [];
  for (const key of ['tools', 'prompts']) {
    const listed = new Map((manifest[key] ?? []).map((item) => [item.name, item]));
    const served = new Map(live[key].map((item) => [item.name, item]));
    for (const item of served.keys()) if (!listed.has(item)) drift.push(`${key}: the server has "${item}", the manifest does not`);
    for (const [itemName, item] of listed) {
      const other = served.get(itemName);
      if (!other) drift.push(`${key}: the manifest lists "${itemName}", the server does not`);
      else if (JSON.stringify(item) !== JSON.stringify(other)) drift.push(`${key}: "${itemName}" differs from the server's: ${firstDifference(JSON.stringify(item), JSON.stringify(other))}`);
    }
  }
  return drift;
}
