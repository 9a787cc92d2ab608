#!/usr/bin/env node
/**
 * The conformance fixture of the suite: a server built on @suite/shared alone, exposing the tools the
 * official conformance suite's tasks scenarios call (greet, slow_compute, failing_job,
 * protocol_error_job, confirm_delete, multi_input, test_tool_with_task), so those scenarios run
 * against the shared layer itself. Dev-only: never shipped.
 *
 * `--per-user-tokens`: over HTTP every request must bring a bearer token, and each token is a
 * principal of its own (tests of task visibility).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ChangeHub, SuiteServer, ToolError, defineTool, runServer, type AnyToolDefinition, type RequestContext } from '@suite/shared';
import { HEADER_TOOL, INPUT_REQUIRED_TOOLS, STATELESS_TOOLS, SURFACE_TOOLS, addSurface } from './fixture-surface.js';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** Sleeps `ms`, woken early by the call's (or the task's) cancellation. */
async function wait(ms: number, ctx: RequestContext): Promise<void> {
  await sleep(ms, undefined, { signal: ctx.signal });
}

export const FIXTURE_TOOLS: readonly AnyToolDefinition[] = [
  defineTool({
    name: 'greet',
    description: 'Greets NAME; never a task.',
    input: z.object({ name: z.string().max(200) }),
    annotations: { title: 'Greet', ...READ },
    handler: async ({ name }) => `Hello, ${name}!`,
  }),
  defineTool({
    name: 'slow_compute',
    description: 'Sleeps SECONDS, then answers; a task when it runs past the budget.',
    input: z.object({ seconds: z.number().min(0).max(600), label: z.string().max(200).optional() }),
    annotations: { title: 'Slow compute', ...READ },
    longRunning: true,
    handler: async ({ seconds, label }, ctx) => {
      await wait(seconds * 1000, ctx);
      return `Computed ${label ?? 'result'} after ${seconds} s.`;
    },
  }),
  defineTool({
    name: 'failing_job',
    description: 'Fails as a tool after a second; always a task, and refused to clients without the tasks extension.',
    input: z.object({}),
    annotations: { title: 'Failing job', ...READ },
    longRunning: 'required',
    handler: async (_args, ctx) => {
      await wait(1000, ctx);
      throw new ToolError('The job failed, as this fixture job always does.', 'failed');
    },
  }),
  defineTool({
    name: 'protocol_error_job',
    description: 'Breaks unexpectedly after a moment (a protocol-level failure).',
    input: z.object({}),
    annotations: { title: 'Protocol error job', ...READ },
    longRunning: 'required',
    handler: async (_args, ctx) => {
      await wait(200, ctx);
      // Not a ToolError: the server breaking, which fails the task (rather than completing it with isError).
      throw new Error('The fixture job broke.');
    },
  }),
  defineTool({
    name: 'confirm_delete',
    description: 'Asks the client to confirm deleting FILENAME, then says what it decided.',
    input: z.object({ filename: z.string().max(500) }),
    annotations: { title: 'Confirm delete', ...READ },
    longRunning: true,
    handler: async ({ filename }, ctx) => {
      const answer = await ctx.client.elicit({
        message: `Delete ${filename}?`,
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
      });
      const confirmed = answer.action === 'accept' && answer.content?.confirm === true;
      return confirmed ? `Deleted ${filename} (not really: this is a fixture).` : `Kept ${filename}.`;
    },
  }),
  defineTool({
    name: 'multi_input',
    description: 'Asks the client two questions at once.',
    input: z.object({}),
    annotations: { title: 'Multi input', ...READ },
    longRunning: true,
    handler: async (_args, ctx) => {
      const schema = { type: 'object' as const, properties: { name: { type: 'string' as const } } };
      const [first, second] = await Promise.all([ctx.client.elicit({ message: 'First name?', requestedSchema: schema }), ctx.client.elicit({ message: 'Second name?', requestedSchema: schema })]);
      return `Got ${String(first.content?.name)} and ${String(second.content?.name)}.`;
    },
  }),
  defineTool({
    name: 'test_tool_with_task',
    description: 'Asks for a user name, then works on it as a task.',
    input: z.object({}),
    annotations: { title: 'Tool with task', ...READ },
    longRunning: 'required',
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({ message: 'Your name?', requestedSchema: { type: 'object', properties: { user_name: { type: 'string' } } } });
      await wait(200, ctx);
      return `Hello, ${String(answer.content?.user_name ?? answer.content?.name ?? 'nobody')}!`;
    },
  }),
];

await runServer({
  bin: 'mcp-fixture-server',
  packageName: '@suite/test-kit',
  version: '0.0.0',
  description: "the suite's conformance fixture (tasks extension test tools)",
  usage: '[options]',
  flags: {
    'per-user-tokens': { type: 'boolean', description: 'Over HTTP, every bearer token is a principal of its own (one is required).' },
  },
  async prepare({ flags }) {
    const changes = new ChangeHub();
    return {
      createSession: (session) => addSurface(new SuiteServer({ name: '@suite/fixture', version: '0.0.0', session, changes, roots: { directories: [] } }).tools([...FIXTURE_TOOLS, ...SURFACE_TOOLS, ...INPUT_REQUIRED_TOOLS, ...STATELESS_TOOLS, HEADER_TOOL])),
      close: () => changes.close(),
      ...(flags['per-user-tokens'] ? { authenticate: (token: string | undefined) => (token ? { token, clientId: 'fixture' } : null) } : {}),
    };
  },
});
