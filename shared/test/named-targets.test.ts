import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SuiteServer, defineTool, toolsForNamedTargets, type AnyToolDefinition } from '../src/index.js';
import { connectInProcess, type TestSession } from '@suite/test-kit';

/** Each target's tools answer with the target's own name, as a database's pool would answer from its database. */
function targetTools(name: string, writable: boolean): AnyToolDefinition[] {
  const tools: AnyToolDefinition[] = [
    defineTool({
      name: 'whoami',
      description: 'Says which target answered.',
      input: z.object({ shout: z.boolean().default(false) }).superRefine((args, ctx) => {
        if ((args as { shout?: unknown }).shout === 'never') ctx.addIssue({ code: 'custom', message: 'unreachable' });
      }),
      annotations: { title: 'Who am I', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: async ({ shout }) => (shout ? name.toUpperCase() : name),
    }),
  ];
  if (writable) {
    tools.push(
      defineTool({
        name: 'write',
        description: 'Writes.',
        input: z.object({ value: z.string() }),
        annotations: { title: 'Write', readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
        handler: async ({ value }) => `${name} wrote ${value}`,
      }),
    );
  }
  return tools;
}

describe('toolsForNamedTargets', () => {
  let session: TestSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it('routes each call to the named target (the first by default), publishes the names as an enum, and refuses what a target lacks', async () => {
    const tools = toolsForNamedTargets({
      argument: 'database',
      noun: 'database',
      targets: [
        { name: 'main', tools: targetTools('main', true) },
        { name: 'archive', tools: targetTools('archive', false) },
      ],
    });
    const server = new SuiteServer({ name: 't', version: '1', selection: { readOnly: false } });
    server.tools(tools);
    session = await connectInProcess(server);
    const listed = (await session.client.listTools()).tools;
    expect(listed.map((t) => t.name)).toEqual(['whoami', 'write']);
    for (const tool of listed) expect((tool.inputSchema.properties as Record<string, { enum?: string[] }>).database?.enum).toEqual(['main', 'archive']);
    expect((await session.callTool('whoami', {})).text).toBe('main');
    expect((await session.callTool('whoami', { database: 'archive', shout: true })).text).toBe('ARCHIVE');
    expect((await session.callTool('write', { database: 'main', value: 'x' })).text).toBe('main wrote x');
    const refused = await session.callTool('write', { database: 'archive', value: 'x' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toBe('write is not available for the database archive (it is available for: main).');
    const unknown = await session.callTool('whoami', { database: 'elsewhere' });
    expect(unknown.isError).toBe(true);
    expect(unknown.text).toMatch(/^Invalid arguments for whoami: database: .*"main"\|"archive"/);
  });
});
