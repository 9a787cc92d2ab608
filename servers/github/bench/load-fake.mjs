// The fake GitHub of the tests (TypeScript, in test/fake-github) for plain Node scripts: the bench
// and `pnpm demo`. esbuild bundles it, with the seeded world of the tests, into .bench/; packages
// stay external and resolve from this package's node_modules.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const packageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Returns { startFakeGithub, seed, TOKENS } from the test sources. */
export async function loadFakeGithub() {
  const outdir = path.join(packageDir, '.bench');
  await mkdir(outdir, { recursive: true });
  const outfile = path.join(outdir, 'fake-github.mjs');
  await build({
    stdin: {
      contents: "export { startFakeGithub, tokenOf } from './test/fake-github/index.ts';\nexport { seed, TOKENS } from './test/helpers.ts';\n",
      resolveDir: packageDir,
      sourcefile: 'fake-entry.ts',
      loader: 'ts',
    },
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return import(`${pathToFileURL(outfile).href}?t=${Date.now()}`);
}
