#!/usr/bin/env node
// Builds a server's MCP Apps (run from the package directory, after tsc and the bundle): each name
// given is app/<name>.ts with app/<name>.css if there is one (and the style sheets the script imports), written to dist/apps/<name>.html as one
// self-contained file by @suite/shared's buildApp (the app kit's base.css first). Prints each size.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const names = process.argv.slice(2);
if (names.length === 0) {
  console.error('usage: build-apps.mjs NAME...');
  process.exit(2);
}
const require = createRequire(path.join(process.cwd(), 'package.json'));
const { buildApp } = await import(pathToFileURL(require.resolve('@suite/shared/app-build')).href);
const baseCss = require.resolve('@suite/shared/app-kit/base.css');
for (const name of names) {
  const built = await buildApp({
    entry: path.resolve('app', `${name}.ts`),
    styles: [baseCss, ...[path.resolve('app', `${name}.css`)].filter((file) => existsSync(file))],
    outFile: path.resolve('dist', 'apps', `${name}.html`),
    title: name,
  });
  console.log(`dist/apps/${name}.html: ${(built.bytes / 1024).toFixed(1)} KiB (${(built.gzipBytes / 1024).toFixed(1)} KiB gzipped)`);
}
