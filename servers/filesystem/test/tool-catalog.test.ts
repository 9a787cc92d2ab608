import { afterEach, describe, expect, it } from 'vitest';
import { ChangeHub } from '@suite/shared';
import { connectInProcess, toolCatalog, type TestSession } from '@suite/test-kit';
import { DEFAULT_LIMITS } from '../src/config.js';
import { buildServer } from '../src/server.js';

// Every tool's name, schemas and annotations, as clients see them. A change shows up in review
// as a snapshot diff; update deliberately with `vitest run -u`.
describe('tool catalog', () => {
  let session: TestSession | undefined;
  const changes = new ChangeHub();
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  for (const readOnly of [false, true]) {
    it(`matches the snapshot${readOnly ? ' (--read-only)' : ''}`, async () => {
      session = await connectInProcess(buildServer({ directories: ['/'], aliases: [], readOnly, limits: DEFAULT_LIMITS }, { changes }));
      await expect(await toolCatalog(session.client)).toMatchFileSnapshot(`./__snapshots__/tools${readOnly ? '.read-only' : ''}.json`);
    });
  }
});
