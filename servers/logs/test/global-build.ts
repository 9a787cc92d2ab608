import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The stdio tests run the built bin, and every scan runs in a worker thread, which loads built
 * JavaScript: build from the current sources first (as `pnpm build` does).
 */
export default function setup(): void {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(process.execPath, [path.join(root, '..', '..', 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'inherit' });
}
