import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SuiteServer } from '../src/index.js';
import { connectInProcess, type TestSession } from '@suite/test-kit';

/** A tool that asks the client's model, with an optional timeout. */
function samplingServer(): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-sampling', version: '0.0.1' });
  server.tool({
    name: 'ask',
    description: 'Asks the client model.',
    input: z.object({ question: z.string(), timeoutMs: z.number().optional() }),
    output: z.object({ text: z.string(), model: z.string(), stopReason: z.string().optional() }),
    annotations: { title: 'Ask', readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler: async ({ question, timeoutMs }, ctx) => {
      const answer = await ctx.client.createMessage(
        {
          messages: [{ role: 'user', content: { type: 'text', text: question } }],
          maxTokens: 100,
          modelPreferences: { hints: [{ name: 'claude' }], speedPriority: 0.8 },
          systemPrompt: 'Be brief.',
        },
        timeoutMs ? { timeoutMs } : {},
      );
      return { text: answer.text, structured: { text: answer.text, model: answer.model, ...(answer.stopReason ? { stopReason: answer.stopReason } : {}) } };
    },
  });
  return server;
}

describe('typed sampling', () => {
  let session: TestSession;
  afterEach(async () => session?.close());

  it('sends a typed request and returns a typed answer with its text', async () => {
    let seen: Record<string, unknown> | undefined;
    session = await connectInProcess(samplingServer(), {
      sampling: async (params) => {
        seen = params;
        return { role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'test-model', stopReason: 'endTurn' };
      },
    });
    const out = await session.callTool('ask', { question: 'Capital of France?' });
    expect(out.structured).toEqual({ text: 'Paris', model: 'test-model', stopReason: 'endTurn' });
    expect(seen).toMatchObject({ maxTokens: 100, systemPrompt: 'Be brief.', modelPreferences: { hints: [{ name: 'claude' }], speedPriority: 0.8 } });
  });

  it('cancels the sampling request when the tool call is cancelled', async () => {
    let clientSignal: AbortSignal | undefined;
    let calls = 0;
    session = await connectInProcess(samplingServer(), {
      sampling: async (_params, { signal }) => {
        if (calls++ === 0) return { role: 'assistant', content: { type: 'text', text: 'quick' }, model: 'm' };
        clientSignal = signal;
        return new Promise(() => {}); // a human who never answers
      },
    });
    // The SDK's client ignores notifications/cancelled for request id 0 (it tests the id for
    // truthiness), so the request under test must not be the server's first one.
    expect((await session.callTool('ask', { question: 'warm-up' })).text).toBe('quick');
    const controller = new AbortController();
    const call = session.callTool('ask', { question: 'slow?' }, { signal: controller.signal });
    await expect.poll(() => clientSignal).toBeDefined();
    controller.abort('stop');
    await expect(call).rejects.toThrow();
    await expect.poll(() => clientSignal?.aborted, { timeout: 2000 }).toBe(true);
  });

  it('times out a sampling request the client does not answer, as an isError', async () => {
    session = await connectInProcess(samplingServer(), { sampling: () => new Promise(() => {}) });
    const started = Date.now();
    const out = await session.callTool('ask', { question: 'x', timeoutMs: 200 });
    expect(out).toMatchObject({ isError: true, text: 'The client did not answer the sampling request within 0.2 s.' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('reports a refused sampling request with the client reason', async () => {
    session = await connectInProcess(samplingServer(), {
      sampling: async () => {
        throw new Error('User rejected sampling request');
      },
    });
    const out = await session.callTool('ask', { question: 'x' });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^The client refused the sampling request: .*User rejected sampling request/);
  });

  it('says so when the client has no sampling capability', async () => {
    session = await connectInProcess(samplingServer());
    expect(await session.callTool('ask', { question: 'x' })).toMatchObject({ isError: true, text: 'The client does not support sampling.' });
  });
});
