/**
 * What a server's vitest.config.ts takes from the shared layer. Kept apart from `./testing` so
 * that importing the test kit never loads anything of vitest's.
 */
import { fileURLToPath } from 'node:url';

/** A vitest `globalSetup` entry that builds the package (its `build` script) before the tests. */
export const buildBeforeTests: string = fileURLToPath(new URL('./build-before-tests.js', import.meta.url));
