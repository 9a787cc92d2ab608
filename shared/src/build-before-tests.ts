/**
 * A vitest global setup that builds the package under test from its current sources before any
 * test runs, with the package's own `build` script (as `npm run build` would run it), so tests
 * that spawn the built bin (`dist/index.js`) never run a stale one.
 *
 * In vitest.config.ts: `test: { globalSetup: [buildBeforeTests] }` (from `@suite/shared/vitest`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

export default function setup(): void {
  // Vitest calls a global setup once per project; a package with several projects builds once.
  const marks = globalThis as { [BUILT]?: true };
  if (marks[BUILT]) return;
  marks[BUILT] = true;
  const root = process.cwd();
  const { scripts } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
  const build = scripts?.build;
  if (!build) throw new Error(`${root}/package.json has no build script to run before the tests.`);
  const result = spawnSync(build, {
    cwd: root,
    shell: true,
    stdio: 'inherit',
    env: { ...process.env, PATH: [...binDirectories(root), process.env.PATH ?? ''].join(path.delimiter) },
  });
  if (result.status !== 0) throw new Error(`The build before the tests failed (${build}: exit ${result.status ?? result.signal}).`);
}
