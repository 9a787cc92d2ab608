/**
 * The test surface of the official conformance suite's reference fixture (the `test_*` tools, the
 * `test://` resources, the `test_*` prompts), rebuilt on @suite/shared alone: the suite's server
 * scenarios then run against our shared layer instead of being excused. Each piece answers what the
 * scenario that calls it checks, and nothing more. Dev-only: never shipped.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { ToolError, defineTool, type AnyToolDefinition, type SuiteServer } from '@suite/shared';

const READ = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
/** Tools that ask the client something (sampling, elicitation): not idempotent, since the answer can differ. */
const ASKS = { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: true } as const;

/** A 1×1 red PNG. */
export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A valid WAV file: 8 kHz, 8-bit mono, 8 samples of silence (the suite wants audio/wav and some data). */
export const WAV_SILENCE = (() => {
  const samples = 8;
  const wav = Buffer.alloc(44 + samples, 0x80);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16); // fmt chunk size
  wav.writeUInt16LE(1, 20); // PCM
  wav.writeUInt16LE(1, 22); // mono
  wav.writeUInt32LE(8000, 24); // sample rate
  wav.writeUInt32LE(8000, 28); // byte rate
  wav.writeUInt16LE(1, 32); // block align
  wav.writeUInt16LE(8, 34); // bits per sample
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples, 40);
  return wav.toString('base64');
})();

const elicitationSummary = (answer: { action: string; content?: Record<string, unknown> }): string =>
  `Elicitation completed: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;

const SURFACE_TOOLS_BASE: readonly AnyToolDefinition[] = [
  defineTool({
    name: 'test_simple_text',
    description: 'Answers with one text block.',
    input: z.object({}),
    annotations: { title: 'Simple text', ...READ },
    handler: async () => 'This is a simple text response for testing.',
  }),
  defineTool({
    name: 'test_image_content',
    description: 'Answers with a 1×1 PNG image.',
    input: z.object({}),
    annotations: { title: 'Image content', ...READ },
    handler: async () => ({ content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }),
  }),
  defineTool({
    name: 'test_audio_content',
    description: 'Answers with a short silent WAV.',
    input: z.object({}),
    annotations: { title: 'Audio content', ...READ },
    handler: async () => ({ content: [{ type: 'audio', data: WAV_SILENCE, mimeType: 'audio/wav' }] }),
  }),
  defineTool({
    name: 'test_embedded_resource',
    description: 'Answers with an embedded text resource.',
    input: z.object({}),
    annotations: { title: 'Embedded resource', ...READ },
    handler: async () => ({
      content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }],
    }),
  }),
  defineTool({
    name: 'test_multiple_content_types',
    description: 'Answers with text, an image and an embedded resource.',
    input: z.object({}),
    annotations: { title: 'Multiple content types', ...READ },
    handler: async () => ({
      content: [
        { type: 'text', text: 'Multiple content types test:' },
        { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
      ],
    }),
  }),
  defineTool({
    name: 'test_error_handling',
    description: 'Always fails as a tool (isError), to test error reporting.',
    input: z.object({}),
    annotations: { title: 'Error handling', ...READ },
    handler: async () => {
      throw new ToolError('This tool always fails, on purpose: it tests how errors are reported.', 'failed');
    },
  }),
  defineTool({
    name: 'test_tool_with_logging',
    description: 'Logs three info messages to the client, 50 ms apart.',
    input: z.object({}),
    annotations: { title: 'Tool with logging', ...READ },
    handler: async (_args, ctx) => {
      ctx.log.info('Tool execution started');
      await sleep(50, undefined, { signal: ctx.signal });
      ctx.log.info('Tool processing data');
      await sleep(50, undefined, { signal: ctx.signal });
      ctx.log.info('Tool execution completed');
      return 'Logged three messages.';
    },
  }),
  defineTool({
    name: 'test_tool_with_progress',
    description: 'Reports progress 0, 50 and 100 of 100, 120 ms apart.',
    input: z.object({}),
    annotations: { title: 'Tool with progress', ...READ },
    handler: async (_args, ctx) => {
      // Past the shared reporter's 100 ms throttle, so that all three reports go out (the suite wants three).
      ctx.progress.report(0, 100);
      await sleep(120, undefined, { signal: ctx.signal });
      ctx.progress.report(50, 100);
      await sleep(120, undefined, { signal: ctx.signal });
      ctx.progress.report(100, 100);
      return 'Progress reported.';
    },
  }),
  defineTool({
    name: 'test_sampling',
    description: "Asks the client's model PROMPT and answers with its reply.",
    input: z.object({ prompt: z.string().max(10_000) }),
    annotations: { title: 'Sampling', ...ASKS },
    handler: async ({ prompt }, ctx) => {
      const answer = await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 });
      return `LLM response: ${answer.text}`;
    },
  }),
  defineTool({
    name: 'test_elicitation',
    description: 'Asks the user for a username and an email, showing MESSAGE.',
    input: z.object({ message: z.string().max(2000) }),
    annotations: { title: 'Elicitation', ...ASKS },
    handler: async ({ message }, ctx) => {
      const answer = await ctx.client.elicit({
        message,
        requestedSchema: {
          type: 'object',
          properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
          required: ['username', 'email'],
        },
      });
      return `User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`;
    },
  }),
  defineTool({
    name: 'test_elicitation_sep1034_defaults',
    description: 'Asks the user a form whose every primitive field has a default (SEP-1034).',
    input: z.object({}),
    annotations: { title: 'Elicitation defaults', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({
        message: 'Please review these defaults.',
        requestedSchema: {
          type: 'object',
          properties: {
            name: { type: 'string', default: 'John Doe' },
            age: { type: 'integer', default: 30 },
            score: { type: 'number', default: 95.5 },
            status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
            verified: { type: 'boolean', default: true },
          },
        },
      });
      return elicitationSummary(answer);
    },
  }),
  defineTool({
    name: 'test_elicitation_sep1330_enums',
    description: 'Asks the user a form with each kind of enum field (SEP-1330).',
    input: z.object({}),
    annotations: { title: 'Elicitation enums', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({
        message: 'Please choose.',
        requestedSchema: {
          type: 'object',
          properties: {
            untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
            titledSingle: {
              type: 'string',
              oneOf: [
                { const: 'value1', title: 'First Option' },
                { const: 'value2', title: 'Second Option' },
                { const: 'value3', title: 'Third Option' },
              ],
            },
            legacyEnum: { type: 'string', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
            untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
            titledMulti: {
              type: 'array',
              items: {
                anyOf: [
                  { const: 'value1', title: 'First Choice' },
                  { const: 'value2', title: 'Second Choice' },
                  { const: 'value3', title: 'Third Choice' },
                ],
              },
            },
          },
        },
      });
      return elicitationSummary(answer);
    },
  }),
];

const address = z.object({ street: z.string().max(200).optional(), city: z.string().max(200).optional() }).meta({ id: 'address', $anchor: 'addressDef' });

/**
 * The 2020-12 vocabulary the suite looks for in a published input schema ($defs with an $anchor,
 * allOf/anyOf, if/then/else, additionalProperties: false), expressed through zod so that it takes
 * the same path to tools/list as every tool of ours. The composition keywords are metadata: zod
 * does not enforce them, so the handler does.
 */
const CONTACT = z
  .strictObject({
    name: z.string().max(200).optional(),
    address: address.optional(),
    contactMethod: z.enum(['phone', 'email']).optional(),
    phone: z.string().max(50).optional(),
    email: z.string().max(200).optional(),
  })
  .meta({
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
  });

const JSON_SCHEMA_TOOL = defineTool({
    name: 'json_schema_2020_12_tool',
    description: 'Takes a contact whose input schema uses JSON Schema 2020-12 keywords; echoes it.',
    input: CONTACT,
    annotations: { title: 'JSON Schema 2020-12', ...READ },
    handler: async (contact) => {
      const wanted = contact.contactMethod === 'phone' ? 'phone' : 'email';
      if (contact[wanted] === undefined) throw new ToolError(`Give ${wanted}: contactMethod ${contact.contactMethod ?? '(none)'} needs it.`, 'invalid_argument');
      return JSON.stringify(contact);
    },
});

const STATIC_TEXT = 'This is the content of the static text resource.';

export const SURFACE_TOOLS: readonly AnyToolDefinition[] = [...SURFACE_TOOLS_BASE, JSON_SCHEMA_TOOL];

/** The fixture's resources (`test://`), prompts (`test_*`) and a completion, on one server. */
export function addSurface(server: SuiteServer): SuiteServer {
  return server
    .resource({
      uri: 'test://static-text',
      name: 'static-text',
      description: 'A fixed text resource.',
      mimeType: 'text/plain',
      read: async () => ({ uri: 'test://static-text', mimeType: 'text/plain', text: STATIC_TEXT }),
    })
    .resource({
      uri: 'test://static-binary',
      name: 'static-binary',
      description: 'A fixed binary resource (a 1×1 PNG).',
      mimeType: 'image/png',
      read: async () => ({ uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_1X1 }),
    })
    .resource({
      uri: 'test://embedded-resource',
      name: 'embedded-resource',
      description: 'The text a prompt embeds.',
      mimeType: 'text/plain',
      read: async () => ({ uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'Embedded resource content for testing.' }),
    })
    .resource({
      uri: 'test://watched-resource',
      name: 'watched-resource',
      description: 'A resource to subscribe to; it never changes.',
      mimeType: 'text/plain',
      read: async () => ({ uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content.' }),
      // Nothing to follow: subscribing is accepted (and held) so the subscribe and unsubscribe round trips run.
      subscribe: async () => ({ armed: Promise.resolve() }),
    })
    .resourceTemplate({
      uriTemplate: 'test://template/{id}/data',
      name: 'template-data',
      description: 'Data for one ID.',
      mimeType: 'application/json',
      read: async (uri, { id }) => ({ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }),
      complete: { id: (value) => ['1', '2', '3', '123'].filter((id) => id.startsWith(value)) },
    })
    .prompt({
      name: 'test_simple_prompt',
      description: 'A prompt without arguments.',
      args: z.object({}),
      get: async () => ({ messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }] }),
    })
    .prompt({
      name: 'test_prompt_with_arguments',
      description: 'A prompt with two arguments.',
      args: z.object({ arg1: z.string().max(1000).describe('First test argument'), arg2: z.string().max(1000).describe('Second test argument') }),
      complete: { arg1: (value) => ['paris', 'park', 'party'].filter((word) => word.startsWith(value)) },
      get: async ({ arg1, arg2 }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }] }),
    })
    .prompt({
      name: 'test_prompt_with_embedded_resource',
      description: 'A prompt that embeds the resource at RESOURCEURI.',
      args: z.object({ resourceUri: z.string().max(2000).describe('URI of the resource to embed') }),
      get: async ({ resourceUri }) => ({
        messages: [
          { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
          { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
        ],
      }),
    })
    .prompt({
      name: 'test_input_required_result_prompt',
      description: 'A prompt that first asks the user what context to use.',
      args: z.object({}),
      get: async (_args, ctx) => {
        const answer = await ctx.client.elicit({
          message: 'What context should the prompt use?',
          requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
        });
        return { messages: [{ role: 'user', content: { type: 'text', text: `Use this context: ${String(answer.content?.context ?? '(none)')}` } }] };
      },
    })
    .prompt({
      name: 'test_prompt_with_image',
      description: 'A prompt with an image.',
      args: z.object({}),
      get: async () => ({
        messages: [
          { role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } },
          { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
        ],
      }),
    });
}

/** The 2026-07-28 input_required tools: each asks through ctx.client, which the shared layer turns into inputRequests. */
export const INPUT_REQUIRED_TOOLS: readonly AnyToolDefinition[] = [
  defineTool({
    name: 'test_input_required_result_elicitation',
    description: 'Asks the user their name, then greets them.',
    input: z.object({}),
    annotations: { title: 'Input required: elicitation', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({ message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });
      return `Hello, ${String(answer.content?.name ?? 'nobody')}!`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_sampling',
    description: "Asks the client's model for the capital of France.",
    input: z.object({}),
    annotations: { title: 'Input required: sampling', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }], maxTokens: 100 });
      return `The model said: ${answer.text}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_multi_round',
    description: 'Asks two questions, one after the other.',
    input: z.object({}),
    annotations: { title: 'Input required: multi round', ...ASKS },
    handler: async (_args, ctx) => {
      const first = await ctx.client.elicit({ message: 'Step 1: What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } });
      const second = await ctx.client.elicit({ message: 'Step 2: What is your favorite color?', requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] } });
      return `${String(first.content?.name)} likes ${String(second.content?.color)}.`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks the user and the model at once.',
    input: z.object({}),
    annotations: { title: 'Input required: multiple inputs', ...ASKS },
    handler: async (_args, ctx) => {
      const [name, greeting] = await Promise.all([
        ctx.client.elicit({ message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }),
        ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 }),
      ]);
      return `${greeting.text} ${String(name.content?.name)}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_request_state',
    description: 'Asks the user to confirm, keeping its state sealed in requestState.',
    input: z.object({}),
    annotations: { title: 'Input required: request state', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({ message: 'Please confirm', requestedSchema: { type: 'object', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'] } });
      return `Confirmed: ${String(answer.content?.confirmed)}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_tampered_state',
    description: 'Asks the user to confirm; a requestState that was tampered with is refused.',
    input: z.object({}),
    annotations: { title: 'Input required: tampered state', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({ message: 'Please confirm', requestedSchema: { type: 'object', properties: { confirmed: { type: 'boolean' } }, required: ['confirmed'] } });
      return `Confirmed: ${String(answer.content?.confirmed)}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_list_roots',
    description: "Asks the client for its roots and names them.",
    input: z.object({}),
    annotations: { title: 'Input required: roots', ...ASKS },
    handler: async (_args, ctx) => {
      const { clientRoots } = await ctx.roots();
      return `Roots: ${(clientRoots ?? []).map((root) => root.uri).join(', ') || '(none)'}`;
    },
  }),
  defineTool({
    name: 'test_input_required_result_capabilities',
    description: 'Asks only through what the client declared: its model (sampling), then its user (elicitation).',
    input: z.object({}),
    annotations: { title: 'Input required: capabilities', ...ASKS },
    handler: async (_args, ctx) => {
      const said = ctx.client.sampling ? (await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }], maxTokens: 50 })).text : '(no sampling)';
      const name = ctx.client.elicitation
        ? String((await ctx.client.elicit({ message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } })).content?.name)
        : '(no elicitation)';
      return `Model: ${said}; user: ${name}.`;
    },
  }),
];

/**
 * A tool whose `region` argument travels in an `Mcp-Param-Region` header too (SEP-2243): the SDK
 * checks the header against the body before the handler runs.
 */
export const HEADER_TOOL = defineTool({
  name: 'test_custom_headers',
  description: 'Echoes REGION, which the client also sends as the Mcp-Param-Region header.',
  input: z.object({ region: z.string().max(200).meta({ 'x-mcp-header': 'Region' }) }),
  annotations: { title: 'Custom headers', ...READ },
  handler: async ({ region }) => `Region: ${region}`,
});

/** The diagnostic tools of the 2026-07-28 stateless scenario. */
export const STATELESS_TOOLS: readonly AnyToolDefinition[] = [
  defineTool({
    name: 'test_missing_capability',
    description: "Asks the client's model something, which needs the client to have declared sampling.",
    input: z.object({}),
    annotations: { title: 'Missing capability', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }], maxTokens: 20 });
      return `The model said: ${answer.text}`;
    },
  }),
  defineTool({
    name: 'test_logging_tool',
    description: 'Logs one message at each of info and debug; a client that set no log level hears none.',
    input: z.object({}),
    annotations: { title: 'Logging tool', ...READ },
    handler: async (_args, ctx) => {
      ctx.log.info('test_logging_tool ran');
      ctx.log.debug('test_logging_tool detail');
      return 'Logged.';
    },
  }),
  defineTool({
    name: 'test_streaming_elicitation',
    description: 'Asks the user a question; a 2026-07-28 client gets it as input_required, never as a request on the stream.',
    input: z.object({}),
    annotations: { title: 'Streaming elicitation', ...ASKS },
    handler: async (_args, ctx) => {
      const answer = await ctx.client.elicit({ message: 'Continue?', requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } } });
      return `Answer: ${answer.action}`;
    },
  }),
];
