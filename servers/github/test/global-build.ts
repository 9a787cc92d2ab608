import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BUILT = Symbol.for('suite.github.test.built');

/**
 * The stdio and HTTP tests run the built bin, so build it from the current sources first (as `pnpm
 * build` does). Once per run: vitest calls this for each project, in one process.
 */
export default function setup(): void {
  const marks = globalThis as { [BUILT]?: true };
  if (marks[BUILT]) return;
  marks[BUILT] = true;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  // The same bundling step as `pnpm build`, so the tests run the bin users get.
  execFileSync(process.execPath, [path.join(root, '..', '..', 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'inherit' });
}
