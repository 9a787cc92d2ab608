/**
 * A vitest setup file (`quietTestLogs` in `@suite/test-kit/vitest`): tests provoke failures on purpose,
 * and the loggers of the test process would print each as an error line in a passing run. Servers
 * that tests start as child processes log as ever, since tests read their stderr.
 */
import { Logger } from '@suite/shared';

Logger.setStderrLevel('emergency');
