import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SuiteServer, UsageError } from '../src/index.js';
import { connectInProcess, spawnServer, protocolError, type TestSession } from '@suite/test-kit';
import { TOOLS, TOOLSETS, toolsetServer } from './fixtures/toolset-server.js';

const BIN = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'toolset-bin.mjs');

describe('toolsets and read-only as data', () => {
  let session: TestSession | undefined;
  afterEach(async () => {
    await session?.close();
    session = undefined;
  });

  it('exposes the core tools and the default toolsets when nothing is chosen', async () => {
    session = await connectInProcess(toolsetServer());
    expect(await session.toolNames()).toEqual(['whoami', 'read_file', 'write_file', 'list_issues', 'close_issue']);
  });

  it('exposes exactly the named toolsets, "all", and single tools on top', async () => {
    session = await connectInProcess(toolsetServer({ toolsets: ['admin'] }));
    expect(await session.toolNames()).toEqual(['whoami', 'list_users', 'delete_repo']);
    await session.close();
    session = await connectInProcess(toolsetServer({ toolsets: ['all'] }));
    expect(await session.toolNames()).toHaveLength(7);
    await session.close();
    session = await connectInProcess(toolsetServer({ toolsets: ['files'], tools: ['list_users'] }));
    expect(await session.toolNames()).toEqual(['whoami', 'read_file', 'write_file', 'list_users']);
    await session.close();
    session = await connectInProcess(toolsetServer({ tools: ['list_issues'] }));
    expect(await session.toolNames()).toEqual(['whoami', 'list_issues']);
  });

  it('read-only mode wins over toolsets and single tools', async () => {
    session = await connectInProcess(toolsetServer({ readOnly: true, toolsets: ['all'], tools: ['delete_repo'] }));
    expect(await session.toolNames()).toEqual(['whoami', 'read_file', 'list_issues', 'list_users']);
  });

  it('treats a tool the session does not expose as unknown, even when called by name', async () => {
    session = await connectInProcess(toolsetServer({ readOnly: true }));
    const error = await protocolError(session.callTool('write_file'));
    expect(error).toMatchObject({ code: -32602, message: 'Unknown tool: write_file' });
    expect((await session.callTool('read_file')).text).toBe('read_file ran');
  });

  it('refuses unknown toolsets and unknown single tools', async () => {
    expect(() => toolsetServer({ toolsets: ['nope'] })).toThrow(UsageError);
    expect(() => toolsetServer({ toolsets: ['nope'] })).toThrow(/Unknown toolset "nope". Available: files, issues, admin/);
    const server = toolsetServer({ tools: ['no_such_tool'] });
    expect(() => server.checkSelection()).toThrow(/Unknown tool in --tools: no_such_tool/);
    await expect(connectInProcess(server)).rejects.toThrow(UsageError);
  });

  it('announces a tool registered after connect with tools/list_changed', async () => {
    const server = toolsetServer();
    session = await connectInProcess(server);
    expect((await session.client.getServerCapabilities())?.tools).toEqual({ listChanged: true });
    server.tool({
      name: 'late_tool',
      toolset: 'files',
      description: 'Registered late.',
      input: z.object({}),
      annotations: { title: 'Late', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      handler: async () => 'late',
    });
    await session.waitFor('notifications/tools/list_changed');
    expect(await session.toolNames()).toContain('late_tool');
  });

  it('lets a server that exposed no tool at connect gain tools afterwards', async () => {
    // No tool registered at all: the capability is still declared, so the client hears of new ones.
    const empty = new SuiteServer({ name: '@suite/server-empty', version: '0.0.1', toolsets: TOOLSETS });
    session = await connectInProcess(empty);
    expect(session.client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(await session.toolNames()).toEqual([]);
    const mark = session.mark();
    empty.tool(TOOLS.find((t) => t.name === 'read_file')!);
    await session.waitFor('notifications/tools/list_changed', undefined, { after: mark });
    expect(await session.toolNames()).toEqual(['read_file']);
    expect((await session.callTool('read_file')).text).toBe('read_file ran');
    await session.close();

    // Tools registered, but none in the selection: enabling a toolset later exposes them.
    const none = new SuiteServer({ name: '@suite/server-none', version: '0.0.1', toolsets: TOOLSETS, selection: { toolsets: [] } }).tools(TOOLS.filter((t) => t.toolset));
    session = await connectInProcess(none);
    expect(await session.toolNames()).toEqual([]);
    expect(none.enableToolset('issues')).toEqual(['list_issues', 'close_issue']);
    await session.waitFor('notifications/tools/list_changed');
    expect((await session.callTool('list_issues')).text).toBe('list_issues ran');
  });

  describe('dynamic toolsets', () => {
    it('starts with the core tools and the three meta-tools only', async () => {
      session = await connectInProcess(toolsetServer({ dynamic: true }));
      expect(await session.toolNames()).toEqual(['list_available_toolsets', 'get_toolset_tools', 'enable_toolset', 'whoami']);
      const listed = await session.callTool('list_available_toolsets');
      expect(listed.text).toBe(['files: Read and write files. [2 tools]', 'issues: Work with issues. [2 tools]', 'admin: Dangerous things. [2 tools]'].join('\n'));
      // Text only: output schemas would cost the model's context before any real tool is on.
      const { tools } = await session.client.listTools();
      expect(tools.filter((t) => t.outputSchema)).toEqual([]);
    });

    it('enables a toolset: its tools appear and the client hears tools/list_changed', async () => {
      session = await connectInProcess(toolsetServer({ dynamic: true }));
      const described = await session.callTool('get_toolset_tools', { toolset: 'issues' });
      expect(described.text).toBe('issues:\n- list_issues: list_issues (issues).\n- close_issue (writes): close_issue (issues).');
      const enabled = await session.callTool('enable_toolset', { toolset: 'issues' });
      expect(enabled).toMatchObject({ isError: false, text: 'Enabled issues: list_issues, close_issue are now available.' });
      await session.waitFor('notifications/tools/list_changed');
      expect(await session.toolNames()).toEqual(['list_available_toolsets', 'get_toolset_tools', 'enable_toolset', 'whoami', 'list_issues', 'close_issue']);
      expect((await session.callTool('close_issue')).text).toBe('close_issue ran');
      // Enabling again adds nothing and announces nothing.
      const before = session.received('notifications/tools/list_changed').length;
      expect((await session.callTool('enable_toolset', { toolset: 'issues' })).text).toBe('issues was already enabled; no tools were added.');
      await new Promise((r) => setTimeout(r, 50));
      expect(session.received('notifications/tools/list_changed')).toHaveLength(before);
    });

    it('keeps read-only mode after a toolset is enabled', async () => {
      session = await connectInProcess(toolsetServer({ dynamic: true, readOnly: true }));
      expect((await session.callTool('get_toolset_tools', { toolset: 'admin' })).text).toBe('admin:\n- list_users: list_users (admin).');
      expect((await session.callTool('enable_toolset', { toolset: 'admin' })).text).toBe('Enabled admin: list_users are now available.');
      expect(await session.toolNames()).not.toContain('delete_repo');
      expect((await protocolError(session.callTool('delete_repo'))).code).toBe(-32602);
    });

    it('answers an unknown toolset with an isError naming the available ones', async () => {
      session = await connectInProcess(toolsetServer({ dynamic: true }));
      const out = await session.callTool('enable_toolset', { toolset: 'nope' });
      expect(out).toMatchObject({ isError: true, text: 'Unknown toolset "nope". Available: files, issues, admin (or all, default).' });
    });

    it('enables only what this session asked for; another session is unaffected', async () => {
      session = await connectInProcess(toolsetServer({ dynamic: true }));
      const other = await connectInProcess(toolsetServer({ dynamic: true }));
      try {
        await session.callTool('enable_toolset', { toolset: 'files' });
        expect(await session.toolNames()).toContain('read_file');
        expect(await other.toolNames()).not.toContain('read_file');
      } finally {
        await other.close();
      }
    });
  });
});

describe('selection flags, parsed once by the CLI', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', input: '', timeout: 10_000, env: { ...process.env, ...env } });

  it('documents --read-only, --toolsets, --tools and --dynamic-toolsets with their variables', () => {
    const help = run(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--read-only +Register no tool that writes \(or PROBE_READ_ONLY=1\)/);
    expect(help.stdout).toMatch(/--toolsets <LIST> +Comma-separated toolsets to enable: files, admin, all, default \(without the flag: files\) \(or PROBE_TOOLSETS\)/);
    expect(help.stdout).toContain('--tools <LIST>');
    expect(help.stdout).toContain('--dynamic-toolsets');
    expect(help.stdout).toContain('--max-sessions <N>');
    // Every variable the parser reads has a line of its own under Environment.
    const environment = help.stdout.split('\nEnvironment:\n')[1]?.split('\n\n')[0] ?? '';
    for (const name of ['PROBE_READ_ONLY', 'PROBE_TOOLSETS', 'PROBE_TOOLS', 'PROBE_DYNAMIC_TOOLSETS']) {
      expect(environment).toMatch(new RegExp(`^  ${name} `, 'm'));
    }
  });

  it('accepts every flag and toolset name its --help lists (all and default included)', () => {
    const help = run(['--help']).stdout;
    const options = help.split('\nOptions:\n')[1]!.split('\n\n')[0]!;
    const flags = [...options.matchAll(/^ +(?:-\w, )?--([\w-]+)( <\w+>)?/gm)].map((m) => ({ name: m[1]!, takesValue: m[2] !== undefined }));
    expect(flags.length).toBeGreaterThan(10);
    const sample: Record<string, string> = { toolsets: 'all', tools: 'read_file', 'log-level': 'error', port: '0', host: '127.0.0.1' };
    // One run with every flag: the parser refuses an unknown one with exit 2 before --version answers.
    const args = flags.filter((f) => !['help', 'version'].includes(f.name)).flatMap((f) => [`--${f.name}`, ...(f.takesValue ? [sample[f.name] ?? '1'] : [])]);
    const all = run([...args, '--version']);
    expect(all.status, `${args.join(' ')}: ${all.stderr}`).toBe(0);
    expect(run(['--no-such-flag', '--version']).status).toBe(2);
    // Toolset names are checked after parsing: each value --help offers starts a server.
    for (const toolsets of ['all', 'default', 'default,admin']) {
      const r = run(['--toolsets', toolsets]);
      expect(r.status, `${toolsets}: ${r.stderr}`).toBe(0);
    }
  });

  it('refuses an unknown toolset or tool with a usage error (exit 2), over stdio and HTTP', () => {
    for (const args of [['--toolsets', 'files,nope'], ['--tools', 'nope'], ['--http', '--port', '0', '--tools', 'nope']]) {
      const r = run(args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^mcp-server-toolsets: Unknown (toolset|tool in --tools): nope/);
    }
  });

  it('gives a server that is read-only by default --allow-write instead of --read-only', async () => {
    const env = { PROBE_WRITES: 'read-only' };
    const help = run(['--help'], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/--allow-write +Also register the tools that write \(or PROBE_ALLOW_WRITE=1\)/);
    expect(help.stdout).not.toMatch(/^ +--read-only/m);
    const refused = run(['--read-only'], env);
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(/--read-only/);
    const cases: [string[], Record<string, string>, string[]][] = [
      // Read-only unless asked: the write tools are listed nowhere.
      [[], {}, ['read_file']],
      [['--allow-write'], {}, ['read_file', 'write_file']],
      [[], { PROBE_ALLOW_WRITE: '1' }, ['read_file', 'write_file']],
      [[], { PROBE_ALLOW_WRITE: '0' }, ['read_file']],
      [['--allow-write', '--toolsets', 'all'], {}, ['read_file', 'write_file', 'list_users', 'delete_repo']],
      [['--toolsets', 'all'], {}, ['read_file', 'list_users']],
    ];
    for (const [args, extra, expected] of cases) {
      const session = await spawnServer(BIN, args, { env: { ...env, ...extra } });
      try {
        expect(await session.toolNames(), `${args.join(' ')} ${JSON.stringify(extra)}`).toEqual(expected);
        if (!expected.includes('write_file')) expect((await protocolError(session.callTool('write_file'))).code).toBe(-32602);
      } finally {
        await session.close();
      }
    }
  }, 60_000);

  it('applies the flags, and the environment variables when the flags are absent', async () => {
    const cases: [string[], Record<string, string>, string[]][] = [
      [[], {}, ['read_file', 'write_file']],
      [['--read-only', '--toolsets', 'all'], {}, ['read_file', 'list_users']],
      [[], { PROBE_TOOLSETS: 'admin', PROBE_READ_ONLY: '1' }, ['list_users']],
      [['--toolsets', 'files'], { PROBE_TOOLSETS: 'admin' }, ['read_file', 'write_file']],
      // A variable set to "" in a client config counts as not set, not as "no toolsets".
      [[], { PROBE_TOOLSETS: '', PROBE_TOOLS: '' }, ['read_file', 'write_file']],
      [['--dynamic-toolsets'], {}, ['list_available_toolsets', 'get_toolset_tools', 'enable_toolset']],
    ];
    for (const [args, env, expected] of cases) {
      const session = await spawnServer(BIN, args, { env });
      try {
        expect(await session.toolNames(), `${args.join(' ')} ${JSON.stringify(env)}`).toEqual(expected);
      } finally {
        await session.close();
      }
    }
  }, 60_000);
});
