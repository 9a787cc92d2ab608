import { defineConfig } from 'vitest/config';
import { buildBeforeTests } from '@suite/test-kit/vitest';

export default defineConfig({
  test: {
    // Some tests run the built bin: build it from the current sources first, as `pnpm build` does.
    globalSetup: [buildBeforeTests],
  },
});
