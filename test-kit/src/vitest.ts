/**
 * What a server's vitest.config.ts takes from the test kit. Kept apart from `./testing` so
 * that importing the test kit never loads anything of vitest's.
 */
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';

/** A vitest `globalSetup` entry that builds the package (its `build` script) before the tests. */
export const buildBeforeTests: string = fileURLToPath(new URL('./build-before-tests.js', import.meta.url));

/** A vitest `setupFiles` entry that keeps the test process's own loggers off stderr. */
export const quietTestLogs: string = fileURLToPath(new URL('./quiet-logs.js', import.meta.url));

/**
 * The settings every package's tests share (spread them into `test`).
 *
 * Most of the suites' time is spent waiting (for a child process to start, a socket, a file watch,
 * a debounce, PostgreSQL), not computing, so test files run several at a time even on two cores:
 * vitest's default of one worker per core less one would leave a 2-core machine running one file
 * at a time. SUITE_TEST_WORKERS overrides the count. The limits are generous because the root
 * `pnpm test` runs the packages side by side on a loaded machine; no test asserts on speed.
 *
 * A worker keeps its modules from one test file to the next (`isolate: false`): loading the SDK,
 * zod and the server's sources again for every file was a third of the suites' CPU time (github:
 * 129 s of CPU isolated, 88 s not). The files share no state but what the process holds (the
 * loggers' level, the process secrets), which no test depends on; SUITE_TEST_ISOLATE=1 isolates.
 */
export const suiteTestDefaults = {
  testTimeout: 60_000,
  hookTimeout: 120_000,
  isolate: process.env.SUITE_TEST_ISOLATE === '1',
  maxWorkers: Number(process.env.SUITE_TEST_WORKERS) || Math.max(2, availableParallelism()),
  minWorkers: 1,
} as const;
