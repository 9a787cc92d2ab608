import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SuiteServer, ToolError } from '../src/index.js';
import { connectInProcess, protocolError, type TestSession } from '@suite/test-kit';

/** Notes as a resource template, and prompts that embed them by URI. */
function notesServer(seen: string[] = []): SuiteServer {
  const notes: Record<string, string> = { 'a b': 'spaces in the name', '100%': 'a percent sign', 'x/y': 'a slash' };
  const server = new SuiteServer({ name: '@suite/server-notes', version: '0.0.1' });
  server.resourceTemplate({
    uriTemplate: 'notes://note/{name}',
    name: 'note',
    mimeType: 'text/plain',
    read: async (uri, vars) => {
      seen.push(vars.name!);
      const text = notes[vars.name!];
      if (text === undefined) throw ToolError.notFound(`No note named ${vars.name}.`);
      return { uri, mimeType: 'text/plain', text };
    },
    complete: {
      name: (value) => {
        seen.push(`complete:${value}`);
        return Object.keys(notes).filter((n) => n.startsWith(value));
      },
    },
  });
  server.prompt({
    name: 'discuss',
    description: 'Discusses a note.',
    args: z.object({ name: z.string().describe('The note') }),
    complete: { name: (value) => Object.keys(notes).filter((n) => n.startsWith(value)) },
    get: async ({ name }, ctx) => ({
      description: `About ${name}`,
      messages: [
        { role: 'user', content: { type: 'text', text: 'Discuss this note:' } },
        ...(await ctx.embedResource(`notes://note/${encodeURIComponent(name)}`)).map((content) => ({ role: 'user' as const, content })),
      ],
    }),
  });
  return server;
}

describe('prompts embed resources; template variables arrive decoded', () => {
  let session: TestSession;
  afterEach(async () => session?.close());

  it('embeds a registered resource by URI as resource content', async () => {
    session = await connectInProcess(notesServer());
    const prompt = await session.getPrompt('discuss', { name: 'a b' });
    expect(prompt.description).toBe('About a b');
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Discuss this note:' } },
      { role: 'user', content: { type: 'resource', resource: { uri: 'notes://note/a%20b', mimeType: 'text/plain', text: 'spaces in the name' } } },
    ]);
    expect(prompt.text).toBe('Discuss this note:\nspaces in the name');
  });

  it('fails the prompt with the embedded resource error code when the resource is missing', async () => {
    session = await connectInProcess(notesServer());
    expect(await protocolError(session.getPrompt('discuss', { name: 'nope' }))).toMatchObject({ code: -32602, message: 'No note named nope.' });
  });

  it('percent-decodes template variables once, and keeps malformed encoding as written', async () => {
    const seen: string[] = [];
    session = await connectInProcess(notesServer(seen));
    expect((await session.readResource('notes://note/a%20b')).text).toBe('spaces in the name');
    expect((await session.readResource('notes://note/100%25')).text).toBe('a percent sign');
    expect((await session.readResource('notes://note/x%2Fy')).text).toBe('a slash');
    expect(await protocolError(session.readResource('notes://note/%zz'))).toMatchObject({ code: -32602, message: 'No note named %zz.' });
    expect(seen).toEqual(['a b', '100%', 'x/y', '%zz']);
  });

  it('completes template variables from the decoded partial value', async () => {
    const seen: string[] = [];
    session = await connectInProcess(notesServer(seen));
    expect((await session.complete({ template: 'notes://note/{name}' }, 'name', 'a%20')).values).toEqual(['a b']);
    expect((await session.complete({ prompt: 'discuss' }, 'name', '10')).values).toEqual(['100%']);
    expect(seen).toEqual(['complete:a ']);
  });
});

describe('logging reaches the client from loggers made before connect', () => {
  it('a child logger created in the constructor sends through the session attached later', async () => {
    const server = new SuiteServer({ name: '@suite/server-logs', version: '0.0.1' });
    const early = server.log.child('early');
    server.tool({
      name: 'log_early',
      description: 'Logs through the early child.',
      input: z.object({}),
      annotations: { title: 'Log', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: async () => {
        early.warning('from the early child');
        return 'ok';
      },
    });
    const session = await connectInProcess(server);
    try {
      await session.callTool('log_early');
      const message = await session.waitFor('notifications/message');
      expect(message.params).toMatchObject({ level: 'warning', logger: 'logs:early', data: 'from the early child' });
    } finally {
      await session.close();
    }
  });
});

describe('waitFor sees notifications that arrived before it was called', () => {
  it('returns an earlier notification once, and the next one to the next wait', async () => {
    const server = new SuiteServer({ name: '@suite/server-wait', version: '0.0.1' });
    server.tool({
      name: 'announce',
      description: 'Sends a log message before answering.',
      input: z.object({ n: z.number() }),
      annotations: { title: 'Announce', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: async ({ n }, ctx) => {
        ctx.log.warning(`message ${n}`);
        return 'ok';
      },
    });
    const session = await connectInProcess(server);
    try {
      await session.callTool('announce', { n: 1 });
      await session.callTool('announce', { n: 2 });
      // Both notifications are already here; each wait takes the next unconsumed one.
      expect((await session.waitFor('notifications/message', undefined, 100)).params?.data).toBe('message 1');
      expect((await session.waitFor('notifications/message', undefined, 100)).params?.data).toBe('message 2');
      await expect(session.waitFor('notifications/message', undefined, 100)).rejects.toThrow(/Timed out after 100 ms/);
      const mark = session.mark();
      await session.callTool('announce', { n: 3 });
      expect((await session.waitFor('notifications/message', undefined, { after: mark, timeoutMs: 1000 })).params?.data).toBe('message 3');
    } finally {
      await session.close();
    }
  });
});

describe('templates with query expressions', () => {
  it('match with none, some or all of the query variables, in any order, each decoded once', async () => {
    const seen: Record<string, string>[] = [];
    const server = new SuiteServer({ name: '@suite/server-query', version: '0.0.1' });
    server.resourceTemplate({
      uriTemplate: 'logs://file/{+path}{?level,since}',
      name: 'log',
      read: async (uri, vars) => {
        seen.push({ ...vars });
        return { uri, text: JSON.stringify(vars) };
      },
    });
    const session = await connectInProcess(server);
    try {
      await session.readResource('logs://file/var/log/app.log');
      await session.readResource('logs://file/var/log/app.log?level=error');
      await session.readResource('logs://file/var/log/app.log?since=1h&level=warn&other=x');
      await session.readResource('logs://file/a%20b.log?level=err%26or');
      expect(seen).toEqual([
        { path: 'var/log/app.log' },
        { path: 'var/log/app.log', level: 'error' },
        { path: 'var/log/app.log', since: '1h', level: 'warn' },
        { path: 'a b.log', level: 'err&or' },
      ]);
      expect(await protocolError(session.readResource('other://file/x'))).toMatchObject({ code: -32602 });
    } finally {
      await session.close();
    }
  });
});
