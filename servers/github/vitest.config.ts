import { defineConfig } from 'vitest/config';
import { buildBeforeTests, suiteTestDefaults } from '@suite/test-kit/vitest';

/**
 * The scenarios (every file that talks to the server through startWorld) run three times: against
 * a server built in the test process, against the built bin over stdio, and against the built bin
 * over Streamable HTTP, where each session's token is its bearer token. The files that test one
 * transport or a pure function run once.
 */
const SCENARIOS = [
  'test/actions.test.ts',
  'test/allowlist.test.ts',
  'test/code-security.test.ts',
  'test/context-users-actions.test.ts',
  'test/errors.test.ts',
  'test/graphql.test.ts',
  'test/issues.test.ts',
  'test/lockdown.test.ts',
  'test/pull-requests.test.ts',
  'test/repos.test.ts',
  'test/resources-prompts.test.ts',
  'test/sanitize.test.ts',
  'test/selection.test.ts',
  'test/sub-issues.test.ts',
  'test/tool-catalog.test.ts',
  'test/upstream-absurd.test.ts',
  'test/upstream-hostile.test.ts',
];

export default defineConfig({
  test: {
    ...suiteTestDefaults,
    globalSetup: [buildBeforeTests],
    env: { SUITE_LOG_LEVEL: 'emergency' },
    projects: [
      { extends: true, test: { name: 'in-process', include: ['test/**/*.test.ts'] } },
      { extends: true, test: { name: 'stdio', include: SCENARIOS, env: { SUITE_TEST_TRANSPORT: 'stdio' } } },
      { extends: true, test: { name: 'http', include: SCENARIOS, env: { SUITE_TEST_TRANSPORT: 'http' } } },
    ],
  },
});
