import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCatalog } from '@suite/shared/testing';
import { startWorld, type World } from './helpers.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

// Every tool's name, schemas and annotations as clients see them. Default, read-only and dynamic
// mode, and every toolset at once (actions and notifications are off by default).
describe('tool catalog snapshots (a change to the tool surface is a reviewed diff; update with vitest -u)', () => {
  for (const [file, selection] of [
    ['tools.json', {}],
    ['tools.read-only.json', { readOnly: true }],
    ['tools.dynamic.json', { dynamic: true }],
    ['tools.all.json', { toolsets: ['all'] }],
  ] as const) {
    it(file, async () => {
      const gh = await world.connect({}, selection);
      await expect(await toolCatalog(gh.client)).toMatchFileSnapshot(`./__snapshots__/${file}`);
    });
  }
});
