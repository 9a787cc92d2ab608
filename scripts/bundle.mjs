#!/usr/bin/env node
// Bundles a server's bin (dist/index.js, as tsc wrote it) into one file, in place.
// Why: Node's ESM loader resolves and links each of the ~300 modules of the SDK, zod and the
// shared layer one by one; one file starts the server about 100 ms sooner, which is most of
// the start-up a client waits for. dist/server.js and the other modules stay as they are for
// programs that import the package as a library. Native addons stay external.
import { build } from 'esbuild';
import { chmod, readFile, writeFile } from 'node:fs/promises';

const entry = 'dist/index.js';
const external = ['better-sqlite3', 'pg-native', 'fsevents', ...process.argv.slice(2)];

await build({
  entryPoints: [entry],
  outfile: entry,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external,
  // Bundled CommonJS dependencies call require(); give them one.
  banner: { js: "import { createRequire as __suiteCreateRequire } from 'node:module';\nconst require = __suiteCreateRequire(import.meta.url);" },
  legalComments: 'eof',
  logLevel: 'warning',
});

// The bin must start with exactly one shebang, before the banner, and be executable.
const text = await readFile(entry, 'utf8');
await writeFile(entry, `#!/usr/bin/env node\n${text.replace(/^(#!.*\n)+/, '')}`);
await chmod(entry, 0o755);
