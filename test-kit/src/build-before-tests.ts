/**
 * A vitest global setup that builds the package under test from its current sources before any
 * test runs, with the package's own `build` script (as `npm run build` would run it), so tests
 * that spawn the built bin (`dist/index.js`) never run a stale one. A build newer than every input
 * is kept as it is.
 *
 * In vitest.config.ts: `test: { globalSetup: [buildBeforeTests] }` (from `@suite/test-kit/vitest`).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

const BUILT = Symbol.for('suite.test.built');

/** The directories whose node_modules/.bin hold the build's tools, nearest first, as npm puts them on PATH. */
function binDirectories(from: string): string[] {
  const dirs: string[] = [];
  for (let dir = from; ; dir = path.dirname(dir)) {
    dirs.push(path.join(dir, 'node_modules', '.bin'));
    if (path.dirname(dir) === dir) return dirs;
  }
}

/** The newest modification time (ms) of a file or of every file below a directory; 0 when missing. */
function newestMtime(target: string): number {
  let stat;
  try {
    stat = statSync(target);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(target)) newest = Math.max(newest, newestMtime(path.join(target, entry)));
  return newest;
}

/**
 * Whether the built bin is newer than everything it is built from: the package's sources and
 * manifests, the bundler script, and the built shared layer it bundles. CI's `pnpm build` has just
 * built every package, and building again before the tests cost each package seconds of CPU.
 */
function upToDate(root: string): boolean {
  const built = newestMtime(path.join(root, 'dist', 'index.js'));
  if (built === 0) return false;
  let shared = '';
  try {
    shared = realpathSync(path.join(root, 'node_modules', '@suite', 'shared', 'dist'));
  } catch {
    // Not a server (or shared not built): nothing more to compare.
  }
  const inputs = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json', path.join('..', '..', 'scripts', 'bundle.mjs')].map((p) => path.join(root, p));
  if (shared) inputs.push(shared);
  return inputs.every((input) => newestMtime(input) < built);
}

export default function setup(): void {
  // Vitest calls a global setup once per project; a package with several projects builds once.
  const marks = globalThis as { [BUILT]?: true };
  if (marks[BUILT]) return;
  marks[BUILT] = true;
  const root = process.cwd();
  const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const build = scripts?.build;
  if (!build) throw new Error(`${root}/package.json has no build script to run before the tests.`);
  if (process.env.SUITE_TEST_BUILD !== 'always' && upToDate(root)) {
    console.warn(`build before the tests: ${path.basename(root)}'s dist is newer than its sources and shared's build; not built again (SUITE_TEST_BUILD=always builds anyway).`);
    return;
  }
  const result = spawnSync(build, {
    cwd: root,
    shell: true,
    stdio: 'inherit',
    env: { ...process.env, PATH: [...binDirectories(root), process.env.PATH ?? ''].join(path.delimiter) },
  });
  if (result.status !== 0) throw new Error(`The build before the tests failed (${build}: exit ${result.status ?? result.signal}).`);
}
