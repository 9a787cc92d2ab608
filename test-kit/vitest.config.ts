import { defineConfig } from 'vitest/config';
import { suiteTestDefaults } from './src/vitest.js';

export default defineConfig({
  // src/quiet-logs.ts: the test process's loggers stay off stderr (tests provoke failures on purpose).
  test: { ...suiteTestDefaults, setupFiles: ['src/quiet-logs.ts'] },
});
