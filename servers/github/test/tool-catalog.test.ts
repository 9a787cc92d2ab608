import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCatalog } from '@suite/test-kit';
import type { ToolSelection } from '@suite/shared';
import { TOOLSETS } from '../src/server.js';
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

/**
 * What the tool list costs the model's context: the tools/list result as JSON, in bytes, without
 * each tool's `_meta` (the permission it needs: for clients and tooling, which do not hand `_meta`
 * to the model). The bench prints the same figures.
 */
async function listBytes(selection: ToolSelection): Promise<{ tools: number; bytes: number; metaBytes: number }> {
  const gh = await world.connect({}, selection);
  const result = await gh.client.listTools();
  const withoutMeta = { ...result, tools: result.tools.map(({ _meta: _ignored, ...tool }) => tool) };
  const bytes = Buffer.byteLength(JSON.stringify(withoutMeta));
  return { tools: result.tools.length, bytes, metaBytes: Buffer.byteLength(JSON.stringify(result)) - bytes };
}

/**
 * Each toolset's share of the context, with a budget: a new tool, or a longer description or
 * schema, that takes a toolset over its budget fails here and is a decision, not an accident.
 * The budgets are the sizes measured when they were set (issue 30) plus about 3% headroom.
 */
const TOOLSET_BUDGETS: Record<string, { tools: number; maxBytes: number }> = {
  context: { tools: 1, maxBytes: 270 },
  repos: { tools: 15, maxBytes: 6650 },
  issues: { tools: 8, maxBytes: 3870 },
  pull_requests: { tools: 12, maxBytes: 5950 },
  users: { tools: 1, maxBytes: 390 },
  actions: { tools: 7, maxBytes: 4050 },
  code_security: { tools: 7, maxBytes: 4450 },
  sub_issues: { tools: 3, maxBytes: 1730 },
  discussions: { tools: 5, maxBytes: 2510 },
  review_threads: { tools: 6, maxBytes: 3410 },
  notifications: { tools: 1, maxBytes: 490 },
};

describe('the context budget of the tool list (issue targets; the bench prints the same figures)', () => {
  it("default toolsets: more tools than the archived server's 26, at most 450 bytes per tool on average", async () => {
    const { tools, bytes } = await listBytes({});
    expect(tools).toBeGreaterThan(26);
    expect(bytes / tools).toBeLessThanOrEqual(450);
  });

  it('--dynamic-toolsets starts under 2 KB', async () => {
    expect((await listBytes({ dynamic: true })).bytes).toBeLessThan(2048);
  });

  it('each toolset stays within its budget; the new toolsets are opt-in', async () => {
    const measured: Record<string, { tools: number; bytes: number; metaBytes: number }> = {};
    for (const name of Object.keys(TOOLSET_BUDGETS)) measured[name] = await listBytes({ toolsets: [name] });
    for (const [name, budget] of Object.entries(TOOLSET_BUDGETS)) {
      expect(measured[name]!.tools, `${name}: tools`).toBe(budget.tools);
      if (process.env.SUITE_PRINT_TOOLSET_BYTES !== '1') expect(measured[name]!.bytes, `${name}: ${JSON.stringify(measured[name])}`).toBeLessThanOrEqual(budget.maxBytes);
    }
    expect(TOOLSETS.filter((t) => t.default).map((t) => t.name)).toEqual(['context', 'repos', 'issues', 'pull_requests', 'users']);
    if (process.env.SUITE_PRINT_TOOLSET_BYTES === '1') console.log(JSON.stringify(measured));
  });
});
