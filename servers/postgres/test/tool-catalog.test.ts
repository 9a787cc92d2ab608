import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectInProcess, toolCatalog } from '@suite/test-kit';
import { buildServer } from '../src/server.js';
import { createTestDatabase, makeConfig, type TestDatabase } from './helpers.js';

// Every tool's name, schemas and annotations as clients see them, in both modes. A change shows up
// in review as a snapshot diff; update deliberately with `vitest run -u`.
describe('tool catalog', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);
  afterAll(async () => db?.drop());

  for (const allowWrite of [false, true]) {
    it(`matches the snapshot${allowWrite ? ' (--allow-write)' : ''}`, async () => {
      const made = makeConfig(allowWrite ? db.adminUrl : db.roleUrl, { allowWrite });
      const session = await connectInProcess(buildServer(made.config));
      try {
        await expect(await toolCatalog(session.client)).toMatchFileSnapshot(`./__snapshots__/tools${allowWrite ? '.allow-write' : ''}.json`);
      } finally {
        await session.close();
        await made.close();
      }
    });
  }
});
