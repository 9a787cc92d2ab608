import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolError } from '@suite/test-kit';
import { startWorld, type World } from './helpers.js';

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());

const DEFAULT_TOOLS = [
  'get_me',
  'get_file_contents', 'create_or_update_file', 'delete_file', 'push_files', 'search_repositories', 'create_repository', 'fork_repository',
  'create_branch', 'list_branches', 'list_tags', 'list_commits', 'get_commit', 'list_releases', 'get_latest_release', 'search_code',
  'create_issue', 'get_issue', 'list_issues', 'update_issue', 'search_issues', 'add_issue_comment', 'list_issue_comments', 'list_labels',
  'create_pull_request', 'get_pull_request', 'list_pull_requests', 'search_pull_requests', 'merge_pull_request', 'update_pull_request_branch',
  'get_pull_request_files', 'get_pull_request_diff', 'get_pull_request_status', 'create_pull_request_review', 'get_pull_request_reviews',
  'get_pull_request_comments', 'search_users',
];
const ARCHIVED = [
  'create_or_update_file', 'push_files', 'get_file_contents', 'search_repositories', 'create_repository', 'fork_repository', 'create_branch',
  'list_commits', 'create_issue', 'get_issue', 'list_issues', 'update_issue', 'add_issue_comment', 'search_code', 'search_issues', 'search_users',
  'create_pull_request', 'get_pull_request', 'list_pull_requests', 'create_pull_request_review', 'merge_pull_request', 'get_pull_request_files',
  'get_pull_request_status', 'update_pull_request_branch', 'get_pull_request_comments', 'get_pull_request_reviews',
];
const WRITES = [
  'create_or_update_file', 'delete_file', 'push_files', 'create_repository', 'fork_repository', 'create_branch', 'create_issue', 'update_issue',
  'add_issue_comment', 'create_pull_request', 'merge_pull_request', 'update_pull_request_branch', 'create_pull_request_review',
  'rerun_failed_jobs', 'cancel_workflow_run', 'update_security_alert', 'add_sub_issue', 'remove_sub_issue',
  'create_discussion', 'add_discussion_comment', 'create_pending_pull_request_review', 'add_pending_review_comment',
  'submit_pending_pull_request_review', 'delete_pending_pull_request_review', 'resolve_review_thread',
];
const ALL_TOOLS = 66;
const DESTRUCTIVE = ['create_or_update_file', 'delete_file', 'push_files', 'update_issue', 'merge_pull_request', 'cancel_workflow_run', 'delete_pending_pull_request_review'];

describe('toolsets', () => {
  it('default: context, repos, issues, pull_requests and users; every tool name of the archived server is there', async () => {
    const gh = await world.connect({}, {});
    const names = await gh.toolNames();
    expect(names).toEqual(DEFAULT_TOOLS);
    expect(names.length).toBeGreaterThan(26);
    for (const name of ARCHIVED) expect(names).toContain(name);
  });

  it('every tool is annotated explicitly: open world, read-only exactly when it writes nothing, destructive where it replaces or deletes', async () => {
    const gh = await world.connect({}, { toolsets: ['all'] });
    const { tools } = await gh.client.listTools();
    expect(tools).toHaveLength(ALL_TOOLS);
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toEqual({
        title: expect.any(String),
        readOnlyHint: !WRITES.includes(tool.name),
        destructiveHint: DESTRUCTIVE.includes(tool.name),
        idempotentHint: expect.any(Boolean),
        openWorldHint: true,
      });
    }
  });

  it("names parameters as GitHub's REST API does (snake_case), per_page published with its maximum of 100, beside page or GraphQL's cursor (after)", async () => {
    const gh = await world.connect({}, { toolsets: ['all'] });
    const { tools } = await gh.client.listTools();
    for (const tool of tools) {
      const props = (tool.inputSchema.properties ?? {}) as Record<string, Record<string, unknown>>;
      for (const name of Object.keys(props)) expect(name, tool.name).toMatch(/^[a-z]+(?:_[a-z]+)*$/);
      expect('page' in props || 'after' in props, tool.name).toBe('per_page' in props);
      expect('page' in props && 'after' in props, tool.name).toBe(false);
      if ('per_page' in props) expect(props.per_page, tool.name).toEqual({ type: 'integer', maximum: 100 });
      if ('owner' in props && tool.name !== 'create_repository') expect(props.repo, tool.name).toEqual({ type: 'string' });
      if (tool.name.startsWith('search_')) expect(Object.keys(props), tool.name).toEqual(['q', 'page', 'per_page']);
    }
    for (const per_page of [0, 101, 500, 2.5]) {
      const out = await gh.callTool('list_issues', { owner: 'acme', repo: 'widgets', per_page });
      expect(out, String(per_page)).toMatchObject({ isError: true, text: expect.stringContaining('per_page: a whole number from 1 to 100') });
    }
  });

  it("accepts the archived server's and this server's earlier argument names, unpublished", async () => {
    const gh = await world.connect({}, { toolsets: ['all'] });
    const repo = { owner: 'acme', repo: 'widgets' };
    expect((await gh.callTool('list_issues', { ...repo, perPage: 2 })).text).toMatch(/\nPage 1 of 2\. More: call again with page: 2\.$/);
    expect((await gh.callTool('search_issues', { query: 'crash repo:acme/widgets' })).text).toMatch(/^1 issues match:\nacme\/widgets#1 /);
    // The archived get_file_contents read a branch; here that is ref (a branch, tag or SHA).
    const old = await gh.callTool('get_file_contents', { ...repo, path: 'src/util/math.ts', branch: 'v0.9.0' });
    expect(old.content[0]).toMatchObject({ text: expect.stringContaining(' at v0.9.0') });
    expect(old.text).not.toContain('sub');
    expect((await gh.callTool('get_commit', { ...repo, sha: 'trunk', includeDiff: false })).text).not.toContain('Diff:');
    expect((await gh.callTool('get_workflow_run_logs', { ...repo, run_id: 9001, failedOnly: false, tailLines: 1 })).text).toContain('== job 501 build (completed/success): last 1 of 1 lines\nbuild ok');
    expect((await gh.callTool('create_repository', { name: 'from-archived', autoInit: true })).text).toMatch(/default branch main/);
    const twice = await gh.callTool('list_issues', { ...repo, per_page: 2, perPage: 3 });
    expect(twice).toMatchObject({ isError: true, text: 'Invalid arguments for list_issues: per_page: given twice (perPage is another name for per_page); give it once.' });
  });

  it('--toolsets picks toolsets, --tools adds single tools on top', async () => {
    const actions = await world.connect({}, { toolsets: ['actions'] });
    expect(await actions.toolNames()).toEqual(['list_workflows', 'list_workflow_runs', 'list_workflow_jobs', 'get_workflow_run_logs', 'list_workflow_run_artifacts', 'rerun_failed_jobs', 'cancel_workflow_run']);
    const plus = await world.connect({}, { toolsets: ['context'], tools: ['list_notifications'] });
    expect(await plus.toolNames()).toEqual(['get_me', 'list_notifications']);
  });

  it('a tool outside the selection is unknown: a protocol error, and no request reaches GitHub', async () => {
    const gh = await world.connect({}, { toolsets: ['context'] });
    const before = world.fake.requests.length;
    const error = await protocolError(gh.callTool('list_issues', { owner: 'acme', repo: 'widgets' }));
    expect(error).toMatchObject({ code: -32602, message: 'Unknown tool: list_issues' });
    expect(world.fake.requests.length).toBe(before);
  });
});

describe('read-only mode wins over everything', () => {
  it('removes every write tool, whatever the toolsets or --tools ask for', async () => {
    const gh = await world.connect({}, { readOnly: true, toolsets: ['all'], tools: ['create_issue', 'merge_pull_request'] });
    const names = await gh.toolNames();
    expect(names).toHaveLength(ALL_TOOLS - WRITES.length);
    for (const write of WRITES) expect(names).not.toContain(write);
    const error = await protocolError(gh.callTool('create_issue', { owner: 'acme', repo: 'widgets', title: 'x' }));
    expect(error.message).toBe('Unknown tool: create_issue');
    expect(world.widgets.issues.some((i) => i.title === 'x')).toBe(false);
  });
});

describe('dynamic toolsets', () => {
  it('starts with the three meta-tools only, and enabling a toolset announces the new tools', async () => {
    const gh = await world.connect({}, { dynamic: true });
    expect(await gh.toolNames()).toEqual(['list_available_toolsets', 'get_toolset_tools', 'enable_toolset']);
    const list = await gh.callTool('list_available_toolsets');
    expect(list.text).toContain('issues: Issues, their comments and labels; issue search. [8 tools]');
    const mark = gh.mark();
    const enabled = await gh.callTool('enable_toolset', { toolset: 'issues' });
    expect(enabled.text).toContain('Enabled issues: create_issue, get_issue, list_issues');
    await gh.waitFor('notifications/tools/list_changed', undefined, { after: mark });
    const names = await gh.toolNames();
    expect(names).toContain('create_issue');
    expect(names).not.toContain('get_pull_request');
    expect((await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 })).isError).toBe(false);
  });

  it('enable_toolset accepts default and all, which its error message offers', async () => {
    const gh = await world.connect({}, { dynamic: true });
    expect((await gh.callTool('enable_toolset', { toolset: 'nope' })).text).toContain('(or all, default)');
    const defaults = await gh.callTool('enable_toolset', { toolset: 'default' });
    expect(defaults.isError, defaults.text).toBe(false);
    expect(defaults.text).toContain('get_me');
    expect(await gh.toolNames()).toContain('get_pull_request');
    expect(await gh.toolNames()).not.toContain('list_workflow_runs');
    const all = await gh.callTool('enable_toolset', { toolset: 'all' });
    expect(all.text).toMatch(/^Enabled all: .*list_workflow_runs.*list_notifications/);
    expect((await gh.callTool('enable_toolset', { toolset: 'all' })).text).toBe('all was already enabled; no tools were added.');
  });

  it('read-only and the allowlist still apply to what is enabled', async () => {
    const gh = await world.connect({ repos: [{ owner: 'acme', repo: 'gadgets' }] }, { dynamic: true, readOnly: true });
    const enabled = await gh.callTool('enable_toolset', { toolset: 'issues' });
    expect(enabled.text).not.toContain('create_issue');
    expect(await gh.toolNames()).not.toContain('create_issue');
    const out = await gh.callTool('get_issue', { owner: 'acme', repo: 'widgets', issue_number: 2 });
    expect(out).toMatchObject({ isError: true, text: expect.stringContaining('outside this server\'s repository allowlist') });
  });
});
