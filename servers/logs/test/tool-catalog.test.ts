import { afterEach, describe, expect, it } from 'vitest';
import { toolCatalog } from '@suite/test-kit';
import { fixture, type Fixture } from './helpers.js';

let fx: Fixture | undefined;
afterEach(async () => {
  await fx?.close();
  fx = undefined;
});

describe('tool catalog', () => {
  it('is the reviewed surface (a change to a name, schema, description or annotation shows in the snapshot diff)', async () => {
    fx = await fixture();
    const session = await fx.connect();
    expect(await session.toolNames()).toEqual(['list_logs', 'tail_log', 'read_log_range', 'search_logs', 'log_stats', 'read_new_lines']);
    const { tools } = await session.client.listTools();
    for (const tool of tools) expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false, openWorldHint: false });
    await expect(await toolCatalog(session.client)).toMatchFileSnapshot('./__snapshots__/tools.json');
  });
});
