#!/usr/bin/env node
// Bundles a server for publishing, in place (run from the package directory after tsc):
// dist/index.js (the bin) and every dist/worker/*.js (entry points the running server starts by
// file path: a worker thread or a child process) each become one self-contained file.
//
// Why: Node's ESM loader resolves and links each of the ~300 modules of the SDK, zod and the
// shared layer one by one; one file starts the server about 100 ms sooner, which is most of the
// start-up a client waits for. And a user who runs `npx @suite/server-x` then installs only what
// the bundle cannot hold.
//
// What stays outside the bundle is exactly what package.json declares in `dependencies` (native
// addons such as better-sqlite3): the package.json is the one list, and this script fails when
// the bundle would need anything else at run time. tsc's maps of the bundled files are deleted:
// they describe the modules before bundling, so they would point a debugger at the wrong lines.
// The notices of the packages inlined go to dist/THIRD-PARTY-NOTICES.txt, which ships with them.
import { build } from 'esbuild';
import { builtinModules } from 'node:module';
import { existsSync } from 'node:fs';
import { chmod, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

const BIN = 'dist/index.js';
const NOTICES = 'dist/THIRD-PARTY-NOTICES.txt';
/**
 * The OpenTelemetry SDK and exporters, which shared imports dynamically only when telemetry is
 * configured: a file of their own beside the bin, so that a server with telemetry off neither
 * loads nor parses them (inlined, they made the bin 30% larger).
 */
const TELEMETRY_SDK = 'dist/telemetry-sdk.js';
const telemetrySdkSource = path.resolve('node_modules/@suite/shared/dist/telemetry/sdk.js');
const isTelemetrySdkImport = (args) => args.path === './sdk.js' && args.importer.endsWith(`${path.sep}telemetry${path.sep}setup.js`);

/**
 * Bare imports left in the bundle although no dependency declares them: each sits behind a code
 * path the servers never take, so it is never loaded (and declaring it would make every user
 * install or compile it).
 */
const NEVER_LOADED = {
  // pg's native libpq bindings: loaded only through `pg.native`, which the postgres server never touches.
  'pg-native': 'pg.native only',
};

const pkg = JSON.parse(await readFile('package.json', 'utf8'));
const declared = new Set(Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies, ...pkg.peerDependencies }));
const workers = existsSync('dist/worker') ? (await readdir('dist/worker')).filter((f) => f.endsWith('.js')).map((f) => `dist/worker/${f}`) : [];
const entryPoints = [BIN, ...workers];

const result = await build({
  entryPoints,
  outdir: 'dist',
  outbase: 'dist',
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: [...declared, ...Object.keys(NEVER_LOADED)],
  // Bundled CommonJS dependencies call require(); give them one.
  banner: { js: "import { createRequire as __suiteCreateRequire } from 'node:module';\nconst require = __suiteCreateRequire(import.meta.url);" },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'telemetry-sdk-apart',
      setup(build) {
        build.onResolve({ filter: /^\.\/sdk\.js$/ }, (args) => (isTelemetrySdkImport(args) ? { path: `./${path.basename(TELEMETRY_SDK)}`, external: true } : undefined));
      },
    },
  ],
});
const telemetry = existsSync(telemetrySdkSource)
  ? await build({
      entryPoints: [telemetrySdkSource],
      outfile: TELEMETRY_SDK,
      allowOverwrite: true,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      external: [...declared],
      banner: { js: "import { createRequire as __suiteCreateRequire } from 'node:module';\nconst require = __suiteCreateRequire(import.meta.url);" },
      legalComments: 'none',
      metafile: true,
      logLevel: 'warning',
    })
  : undefined;
if (telemetry) for (const [file, output] of Object.entries(telemetry.metafile.outputs)) result.metafile.outputs[file] = output;
if (telemetry) Object.assign(result.metafile.inputs, telemetry.metafile.inputs);

const builtins = new Set(builtinModules);
const isBuiltin = (specifier) => specifier.startsWith('node:') || builtins.has(specifier.split('/')[0]);
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const undeclared = new Set();
for (const output of Object.values(result.metafile.outputs)) {
  for (const { path: specifier, external } of output.imports) {
    if (!external || isBuiltin(specifier) || specifier === `./${path.basename(TELEMETRY_SDK)}`) continue;
    const name = packageOf(specifier);
    if (!declared.has(name) && !(name in NEVER_LOADED)) undeclared.add(name);
  }
}
// A require made through createRequire(import.meta.url) is invisible to esbuild: it stays a
// run-time lookup in node_modules, which a user's install no longer has.
for (const entry of entryPoints) {
  for (const [, specifier] of (await readFile(entry, 'utf8')).matchAll(/createRequire\w*\)?\(import\.meta\.url\)\(\s*["']([^"'.][^"']*)["']/g)) {
    if (!isBuiltin(specifier) && !declared.has(packageOf(specifier))) undeclared.add(`${packageOf(specifier)} (through createRequire in ${entry})`);
  }
}
if (undeclared.size > 0) {
  console.error(`bundle: ${pkg.name} would need ${[...undeclared].join(', ')} at run time without declaring it; bundle it or add it to dependencies.`);
  process.exit(1);
}

for (const entry of entryPoints) await rm(`${entry}.map`, { force: true });

// The bin must start with exactly one shebang, before the banner, and be executable.
const text = await readFile(BIN, 'utf8');
await writeFile(BIN, `#!/usr/bin/env node\n${text.replace(/^(#!.*\n)+/, '')}`);
await chmod(BIN, 0o755);

await writeFile(NOTICES, await noticesOf(Object.keys(result.metafile.inputs)));

/**
 * The license texts of the packages whose code the bundle holds: their licenses (MIT, ISC,
 * Apache-2.0, BSD) ask that the notice travel with every copy, and the bundle is one.
 */
async function noticesOf(inputs) {
  const roots = new Set();
  for (const input of inputs) {
    const at = input.lastIndexOf('node_modules/');
    if (at < 0) continue;
    const rest = input.slice(at + 'node_modules/'.length).split('/');
    roots.add(input.slice(0, at + 'node_modules/'.length) + rest.slice(0, rest[0].startsWith('@') ? 2 : 1).join('/'));
  }
  const sections = [];
  for (const root of [...roots].sort()) {
    const meta = JSON.parse(await readFile(path.join(root, 'package.json'), 'utf8'));
    // The workspace's own packages are under this package's license.
    if (meta.name?.startsWith('@suite/')) continue;
    const files = await readdir(root);
    const licenseFile = files.find((f) => /^(licen[cs]e|copying)(\.(md|txt))?$/i.test(f));
    const text = licenseFile ? (await readFile(path.join(root, licenseFile), 'utf8')).trim() : `License: ${meta.license ?? 'see the package'}`;
    sections.push(`${meta.name}@${meta.version} (${meta.license ?? 'unknown license'})\n\n${text}`);
  }
  const rule = `\n\n${'-'.repeat(78)}\n\n`;
  return `${pkg.name} bundles the following packages into its files. Their notices:${rule}${sections.join(rule)}\n`;
}
