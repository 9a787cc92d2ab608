import { defineConfig } from 'vitest/config';
import { buildBeforeTests } from '@suite/shared/vitest';

export default defineConfig({
  test: {
    // Generous limits: the suite must pass on a loaded 2-core machine; no test asserts on speed.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    globalSetup: [buildBeforeTests],
    env: { SUITE_LOG_LEVEL: 'emergency' },
  },
});
