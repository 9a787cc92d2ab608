import { defineConfig } from 'vitest/config';
import { buildBeforeTests, suiteTestDefaults } from '@suite/shared/vitest';

export default defineConfig({
  test: {
    ...suiteTestDefaults,
    globalSetup: [buildBeforeTests],
    env: { SUITE_LOG_LEVEL: 'emergency' },
  },
});
