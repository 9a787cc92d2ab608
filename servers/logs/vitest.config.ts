import { defineConfig } from 'vitest/config';
import { buildBeforeTests, suiteTestDefaults } from '@suite/test-kit/vitest';

export default defineConfig({
  test: {
    ...suiteTestDefaults,
    globalSetup: [buildBeforeTests],
    env: { SUITE_LOG_LEVEL: 'emergency' },
  },
});
