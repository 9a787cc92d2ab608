/**
 * Faults of the server process itself: killed with SIGKILL while git runs for a call, it leaves
 * nothing of git behind (no git, no process git started), whatever git was doing.
 */
import { chmodSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { descendantsOf, expectAllGone, makeTempDir, spawnServer, waitUntil } from '@suite/test-kit';
import { BIN, makeRepo } from './helpers.js';

describe('the server killed with SIGKILL mid-work', () => {
  it('every git it started (and what that git started) is gone within 2 s', async () => {
    const { dir, cleanup } = await makeTempDir('git-prompts-faults-');
    try {
      const repo = makeRepo(path.join(dir, 'app'));
      const hang = path.join(dir, 'hang');
      const started = path.join(dir, 'started');
      // A git that behaves until told to hang: then it starts a helper of its own and waits on it,
      // as git does with its pager, hooks or a credential helper.
      const fakeGit = path.join(dir, 'git');
      writeFileSync(
        fakeGit,
        `#!/bin/sh
if [ -e '${hang}' ]; then
  sleep 300 &
  touch '${started}'
  wait
fi
exec git "$@"
`,
      );
      chmodSync(fakeGit, 0o755);
      const session = await spawnServer(BIN, ['--git', fakeGit, repo]);
      try {
        writeFileSync(hang, '');
        const inFlight = session.callTool('git_status', {}).catch((error: unknown) => error);
        await waitUntil(() => existsSync(started), { what: 'git to be running for the call' });
        const children = descendantsOf(session.pid!);
        expect(children.filter((c) => c.command.includes('sleep 300')).length, JSON.stringify(children)).toBeGreaterThan(0);
        process.kill(session.pid!, 'SIGKILL');
        await expectAllGone(children, 2_000);
        expect(await inFlight).toBeInstanceOf(Error);
      } finally {
        await session.close().catch(() => undefined);
      }
    } finally {
      await cleanup();
    }
  });
});
