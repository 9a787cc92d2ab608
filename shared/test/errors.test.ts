import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CancelledError, ERROR_CODES, SuiteServer, ToolError, UpstreamError, registerSecret } from '../src/index.js';
import { connectInProcess, protocolError, type TestSession } from '@suite/test-kit';

registerSecret('sekrit-password-42');

const FAILURES: Record<string, () => Error> = {
  'rate-limited': () => UpstreamError.rateLimited('GitHub', 42.2),
  unreachable: () => UpstreamError.unreachable('GitHub', 502),
  'timed-out': () => UpstreamError.timedOut('GitHub', 10_000),
  missing: () => ToolError.notFound('No such thing: widget-9'),
  bad: () => ToolError.invalidArgument('The name must be lower case.'),
  denied: () => ToolError.accessDenied('Access denied: widget-9 is private.'),
  conflict: () => ToolError.conflict('widget-9 changed while it was being read; read it again.'),
  // A nested operation cancelled (its own signal), not the request itself: the client still gets an answer.
  cancelled: () => new CancelledError(),
  crashed: () => new Error('boom at /srv/app/config.json with sekrit-password-42'),
};

/** A resource template, a prompt and a tool that fail as the variable or argument says. */
function failingServer(): SuiteServer {
  const server = new SuiteServer({ name: '@suite/server-fail', version: '0.0.1' });
  server.resourceTemplate({
    uriTemplate: 'fail://{kind}',
    name: 'failure',
    read: async (_uri, vars) => {
      throw FAILURES[vars.kind!]!();
    },
    // Completing a kind fails as that kind says.
    complete: {
      kind: async (value) => {
        throw FAILURES[value]!();
      },
    },
  });
  server.prompt({
    name: 'fail',
    description: 'Fails as asked.',
    args: z.object({ kind: z.string() }),
    get: async ({ kind }) => {
      throw FAILURES[kind]!();
    },
  });
  server.tool({
    name: 'fail',
    description: 'Fails as asked.',
    input: z.object({ kind: z.string() }),
    annotations: { title: 'Fail', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler: async ({ kind }) => {
      throw FAILURES[kind]!();
    },
  });
  return server;
}

describe('error mapping', () => {
  let session: TestSession;
  afterEach(async () => session?.close());

  it('gives resource reads and prompts the JSON-RPC code of the failure kind, not "invalid params"', async () => {
    session = await connectInProcess(failingServer());
    const expected: [string, number, RegExp, Record<string, unknown>][] = [
      ['rate-limited', -32029, /^GitHub rate limit reached\. Retry in 43 seconds and try again\.$/, { kind: 'rate_limited', retryAfterSeconds: 43, status: 429 }],
      ['unreachable', -32030, /^GitHub answered 502\. This is not a problem with your request/, { kind: 'unavailable', status: 502 }],
      ['timed-out', -32001, /^GitHub did not answer within 10 seconds/, { kind: 'timeout' }],
      ['missing', -32602, /^No such thing: widget-9$/, { kind: 'not_found' }],
      ['bad', -32602, /^The name must be lower case\.$/, { kind: 'invalid_argument' }],
      ['denied', -32003, /^Access denied: widget-9 is private\.$/, { kind: 'access_denied' }],
      ['conflict', -32004, /^widget-9 changed while it was being read; read it again\.$/, { kind: 'conflict' }],
      ['cancelled', -32800, /^The request was cancelled/, { kind: 'cancelled' }],
    ];
    for (const [kind, code, message, data] of expected) {
      for (const request of [session.readResource(`fail://${kind}`), session.getPrompt('fail', { kind })]) {
        const error = await protocolError(request);
        expect(error.code, kind).toBe(code);
        expect(error.message, kind).toMatch(message);
        expect(error.data, kind).toEqual(data);
      }
    }
    expect(ERROR_CODES).toMatchObject({ rate_limited: -32029, unavailable: -32030, timeout: -32001, conflict: -32004, cancelled: -32800 });
  });

  it('reports an unexpected failure as an internal error with an id, never its detail', async () => {
    session = await connectInProcess(failingServer());
    for (const request of [session.readResource('fail://crashed'), session.getPrompt('fail', { kind: 'crashed' })]) {
      const error = await protocolError(request);
      expect(error.code).toBe(-32603);
      expect(error.message).toMatch(/^The request failed unexpectedly \(error id [0-9a-f]{8}\)\. The server log has the detail\.$/);
      expect(JSON.stringify(error)).not.toMatch(/srv|sekrit/);
    }
  });

  it('keeps client mistakes as invalid params: an unknown prompt and bad prompt arguments', async () => {
    session = await connectInProcess(failingServer());
    expect(await protocolError(session.getPrompt('nope'))).toMatchObject({ code: -32602, message: 'Unknown prompt: nope' });
    expect(await protocolError(session.client.getPrompt({ name: 'fail', arguments: {} }))).toMatchObject({ code: -32602, message: expect.stringMatching(/^Invalid arguments for prompt fail: kind/) });
    expect(await protocolError(session.readResource('nothing://here'))).toMatchObject({ code: -32602, message: 'Resource not found: nothing://here' });
  });

  it('turns the same failures into isError tool results that say when to retry', async () => {
    session = await connectInProcess(failingServer());
    expect(await session.callTool('fail', { kind: 'rate-limited' })).toMatchObject({ isError: true, text: 'GitHub rate limit reached. Retry in 43 seconds and try again.' });
    expect(await session.callTool('fail', { kind: 'unreachable' })).toMatchObject({ isError: true, text: expect.stringMatching(/try again in a few seconds/) });
    expect(await session.callTool('fail', { kind: 'timed-out' })).toMatchObject({ isError: true, text: 'GitHub did not answer within 10 seconds. Try again, or narrow the request.' });
    expect(await session.callTool('fail', { kind: 'conflict' })).toMatchObject({ isError: true, text: 'widget-9 changed while it was being read; read it again.' });
    const crashed = await session.callTool('fail', { kind: 'crashed' });
    expect(crashed.text).toMatch(/^fail failed unexpectedly \(error id [0-9a-f]{8}\)/);
  });

  it('answers a failed completion with no values and a logged warning, not an error: completion is a typing aid', async () => {
    session = await connectInProcess(failingServer());
    for (const kind of ['rate-limited', 'timed-out', 'crashed']) {
      const mark = session.mark();
      expect(await session.complete({ template: 'fail://{kind}' }, 'kind', kind), kind).toEqual({ values: [], total: 0, hasMore: false });
      const warning = await session.waitFor('notifications/message', (n) => n.params?.level === 'warning', { after: mark });
      const text = JSON.stringify(warning.params?.data);
      if (kind === 'rate-limited') expect(text).toContain('Completing kind failed: GitHub rate limit reached. Retry in 43 seconds');
      if (kind === 'crashed') {
        expect(text).toMatch(/Completing kind failed unexpectedly \(error id [0-9a-f]{8}\)/);
        expect(text).not.toMatch(/srv|sekrit/);
      }
    }
    // Asking to complete something that does not exist is still the client's mistake.
    expect(await protocolError(session.complete({ template: 'nope://{x}' }, 'x', ''))).toMatchObject({ code: -32602 });
    expect(await protocolError(session.complete({ prompt: 'nope' }, 'x', ''))).toMatchObject({ code: -32602, message: 'Unknown prompt: nope' });
  });
});
