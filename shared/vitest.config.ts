import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { suiteTestDefaults } from '../test-kit/src/vitest.js';

const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));

export default defineConfig({
  // Shared's tests use the test kit, which is a package of its own that depends on shared: taken
  // from its sources here (not as a dependency, which would be a circle between the packages), with
  // its `@suite/shared` pointed at these sources, so tests and kit share one copy of every module.
  resolve: {
    alias: [
      { find: /^@suite\/test-kit$/, replacement: here('../test-kit/src/testing.ts') },
      { find: /^@suite\/test-kit\/replicas$/, replacement: here('../test-kit/src/replicas.ts') },
      { find: /^@suite\/test-kit\/oauth$/, replacement: here('../test-kit/src/authorization-server.ts') },
      { find: /^@suite\/test-kit\/eras$/, replacement: here('../test-kit/src/eras.ts') },
      { find: /^@suite\/test-kit\/tasks$/, replacement: here('../test-kit/src/tasks.ts') },
      { find: /^@suite\/test-kit\/otlp$/, replacement: here('../test-kit/src/otlp-receiver.ts') },
      { find: /^@suite\/test-kit\/prometheus$/, replacement: here('../test-kit/src/prometheus.ts') },
      { find: /^@suite\/shared$/, replacement: here('src/index.ts') },
    ],
  },
  // The kit's quiet-logs: the test process's loggers stay off stderr (tests provoke failures on purpose).
  test: { ...suiteTestDefaults, setupFiles: [here('../test-kit/src/quiet-logs.ts')] },
});
