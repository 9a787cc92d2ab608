import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client as ClientV2, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as StreamableV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttpServer, type HttpServerProcess } from '../src/conformance.js';

/**
 * The reference fixture's test surface on the suite's fixture server (built bin, over HTTP), in
 * both eras: what the official scenarios check, asserted here too so that a change to the shared
 * layer that breaks one shows up in the test run, not only in `pnpm conformance`.
 */
const bin = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'fixture-server.js');

describe('the fixture server: the reference fixture test surface on @suite/shared', () => {
  let server: HttpServerProcess;
  beforeAll(async () => {
    server = await startHttpServer(bin, []);
  });
  afterAll(async () => {
    await server?.server.stop();
  });

  it('serves a 2025-11-25 client the content kinds, logging, progress, sampling, elicitation, prompts, resources and completion', async () => {
    const client = new ClientV1({ name: 'fixture-test', version: '0' }, { capabilities: { sampling: {}, elicitation: {} } });
    const logs: string[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(String(n.params.data)));
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({ role: 'assistant', content: { type: 'text', text: 'Paris' }, model: 'm' }));
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { username: 'ann', email: 'a@example.com' } }));
    await client.connect(new StreamableV1(new URL(server.url)));
    try {
      const kinds = async (name: string) => ((await client.callTool({ name, arguments: {} })).content as { type: string }[]).map((c) => c.type);
      expect(await kinds('test_image_content')).toEqual(['image']);
      expect(await kinds('test_audio_content')).toEqual(['audio']);
      expect(await kinds('test_multiple_content_types')).toEqual(['text', 'image', 'resource']);
      expect(await client.callTool({ name: 'test_error_handling', arguments: {} })).toMatchObject({ isError: true });

      await client.setLoggingLevel('debug');
      await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
      await expect.poll(() => logs.filter((l) => l.startsWith('Tool ')), { timeout: 5000 }).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);

      const progress: number[] = [];
      await client.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { onprogress: (p) => void progress.push(p.progress) });
      expect(progress).toEqual([0, 50, 100]);

      expect((await client.callTool({ name: 'test_sampling', arguments: { prompt: 'Capital of France?' } })).content).toEqual([{ type: 'text', text: 'LLM response: Paris' }]);
      expect(((await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } })).content as { text: string }[])[0]!.text).toContain('"username":"ann"');

      const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'hello', arg2: 'world' } });
      expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: "Prompt with arguments: arg1='hello', arg2='world'" });
      const read = await client.readResource({ uri: 'test://template/123/data' });
      expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual({ id: '123', templateTest: true, data: 'Data for ID: 123' });
      expect((await client.readResource({ uri: 'test://static-binary' })).contents[0]).toMatchObject({ mimeType: 'image/png', blob: expect.any(String) });
      const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } });
      expect(completion.completion.values).toEqual(['paris', 'park', 'party']);
      await client.subscribeResource({ uri: 'test://watched-resource' });
      await client.unsubscribeResource({ uri: 'test://watched-resource' });
    } finally {
      await client.close();
    }
  });

  it('publishes the 2020-12 keywords of json_schema_2020_12_tool and enforces its rule', async () => {
    const client = new ClientV1({ name: 'fixture-test', version: '0' });
    await client.connect(new StreamableV1(new URL(server.url)));
    try {
      const tool = (await client.listTools()).tools.find((t) => t.name === 'json_schema_2020_12_tool')!;
      expect(tool.inputSchema).toMatchObject({ additionalProperties: false, $defs: { address: { $anchor: 'addressDef' } }, allOf: [{ anyOf: expect.any(Array) }], if: expect.any(Object), then: expect.any(Object), else: expect.any(Object) });
      expect(await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { contactMethod: 'phone', email: 'a@example.com' } })).toMatchObject({ isError: true });
      expect(await client.callTool({ name: 'json_schema_2020_12_tool', arguments: { contactMethod: 'phone', phone: '123' } })).not.toHaveProperty('isError', true);
    } finally {
      await client.close();
    }
  });

  it('asks a 2026-07-28 client through input_required, and refuses with -32021 what it did not declare', async () => {
    const modern = async (capabilities: Record<string, unknown>): Promise<ClientV2> => {
      const client = new ClientV2({ name: 'fixture-test', version: '0' }, { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      return client;
    };
    const asking = await modern({ elicitation: {} });
    asking.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { name: 'Ann' } }));
    try {
      expect((await asking.callTool({ name: 'test_input_required_result_elicitation', arguments: {} })).content).toEqual([{ type: 'text', text: 'Hello, Ann!' }]);
      const prompt = await asking.getPrompt({ name: 'test_input_required_result_prompt', arguments: {} });
      expect(prompt.messages[0]!.content).toMatchObject({ type: 'text' });
    } finally {
      await asking.close();
    }
    const bare = await modern({});
    try {
      await expect(bare.callTool({ name: 'test_missing_capability', arguments: {} })).rejects.toMatchObject({ code: -32021 });
    } finally {
      await bare.close();
    }
  });
});
