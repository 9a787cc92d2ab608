import { defineConfig } from 'vitest/config';
import { buildBeforeTests, quietTestLogs, suiteTestDefaults } from '@suite/test-kit/vitest';

export default defineConfig({
  test: {
    ...suiteTestDefaults,
    // Some tests run the built bin: build it from the current sources first, as `pnpm build` does.
    globalSetup: [buildBeforeTests],
    setupFiles: [quietTestLogs],
  },
});
