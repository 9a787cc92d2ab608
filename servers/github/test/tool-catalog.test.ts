import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCatalog } from '@suite/test-kit';
import type { ToolSelection } from '@suite/shared';
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

/** What the bench measures: the tools/list result as JSON, in bytes (what the definitions cost the model's context). */
async function listBytes(selection: ToolSelection): Promise<{ tools: number; bytes: number }> {
  const gh = await world.connect({}, selection);
  const result = await gh.client.listTools();
  return { tools: result.tools.length, bytes: Buffer.byteLength(JSON.stringify(result)) };
}

describe('the context budget of the tool list (issue targets; the bench prints the same figures)', () => {
  it("default toolsets: more tools than the archived server's 26, at most 450 bytes per tool on average", async () => {
    const { tools, bytes } = await listBytes({});
    expect(tools).toBeGreaterThan(26);
    expect(bytes / tools).toBeLessThanOrEqual(450);
  });

  it('--dynamic-toolsets starts under 2 KB', async () => {
    expect((await listBytes({ dynamic: true })).bytes).toBeLessThan(2048);
  });
});
