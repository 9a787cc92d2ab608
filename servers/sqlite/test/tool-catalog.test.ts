import { afterEach, describe, expect, it } from 'vitest';
import { toolCatalog } from '@suite/test-kit';
import { makeDatabaseFile, openServer, type Harness } from './helpers.js';

// Every tool's name, schemas and annotations as clients see them, in both modes. A change shows up
// in review as a snapshot diff; update deliberately with `vitest run -u`.
describe('tool catalog', () => {
  let harness: Harness | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await harness?.close();
    await cleanup?.();
    harness = undefined;
  });

  for (const allowWrite of [false, true]) {
    it(`matches the snapshot${allowWrite ? ' (--allow-write)' : ''}`, async () => {
      const db = await makeDatabaseFile();
      cleanup = db.cleanup;
      harness = await openServer({ file: db.file, allowWrite, workers: 1 });
      await expect(await toolCatalog(harness.session.client)).toMatchFileSnapshot(`./__snapshots__/tools${allowWrite ? '.allow-write' : ''}.json`);
    });
  }
});
