import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolError, type TestSession } from '@suite/test-kit';
import { TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
const repo = { owner: 'acme', repo: 'widgets' };

beforeAll(async () => {
  world = await startWorld();
  const s = world.fake.state;
  s.addUser('github-actions[bot]', { type: 'Bot' });
  s.addIssue(world.widgets, { title: 'Dependency update', body: 'Bump x.', author: 'github-actions[bot]' });
  s.addIssue(s.repo('alice', 'private-notes')!, { title: 'Private, by an outsider', body: 'ok', author: 'mallory' });
  gh = await world.connect({ lockdown: true });
});
afterAll(() => world.close());

describe('--lockdown on a public repository', () => {
  it('withholds an issue whose author has no push access', async () => {
    const out = await gh.callTool('get_issue', { ...repo, issue_number: 1 });
    expect(out).toMatchObject({
      isError: true,
      text: 'Lockdown mode withholds issue #1: its author @mallory has no push access to acme/widgets, which is public. Content from such authors is not shown (--lockdown).',
    });
    expect(out.text).not.toContain('crashes');
  });

  it('shows content by collaborators with push access and by trusted bots', async () => {
    expect((await gh.callTool('get_issue', { ...repo, issue_number: 2 })).text).toContain('We need blue ones.');
    expect((await gh.callTool('get_issue', { ...repo, issue_number: 4 })).text).toContain('Bump x.');
    expect((await gh.callTool('get_pull_request', { ...repo, pull_number: 3 })).text).toContain('Adds a login page.');
  });

  it('filters lists and searches, and says how much it held back', async () => {
    const issues = await gh.callTool('list_issues', repo);
    expect(issues.text).toContain('#2 [open] Add a blue widget');
    expect(issues.text).not.toContain('Crash on start');
    expect(issues.text).toContain('[1 item withheld by lockdown mode: written by users without push access]');
    const comments = await gh.callTool('list_issue_comments', { ...repo, issue_number: 2 });
    expect(comments.text).toBe('Comments on acme/widgets#2:\nNone.');
    const onOne = await gh.callTool('list_issue_comments', { ...repo, issue_number: 1 });
    expect(onOne.text).toContain('Looking into it.');
    expect(onOne.text).not.toContain('Any news');
    expect(onOne.text).not.toContain('deleted account');
    expect(onOne.text).toContain('[2 items withheld by lockdown mode');
    const search = await gh.callTool('search_issues', { q: 'repo:acme/widgets' });
    expect(search.text).not.toContain('Crash on start');
    expect(search.text).toContain('withheld by lockdown mode');
  });

  it('asks GitHub about each author once per session', async () => {
    const asked = () => world.fake.requests.filter((r) => r.path === '/repos/acme/widgets/collaborators/bob/permission').length;
    const before = asked();
    await gh.callTool('list_issues', repo);
    await gh.callTool('get_issue', { ...repo, issue_number: 2 });
    expect(asked()).toBe(before);
    expect(before).toBe(1);
  });

  it('shows everything on a private repository', async () => {
    const out = await gh.callTool('get_issue', { owner: 'alice', repo: 'private-notes', issue_number: 1 });
    expect(out.text).toContain('Private, by an outsider');
  });

  it("shows the token's own user their own content, and fails closed when it may not ask about others", async () => {
    const mallory = await world.connect({ lockdown: true, token: TOKENS.mallory });
    expect((await mallory.callTool('get_issue', { ...repo, issue_number: 1 })).isError).toBe(false);
    const other = await mallory.callTool('get_issue', { ...repo, issue_number: 2 });
    expect(other.text).toMatch(/^Lockdown mode withholds issue #2: its author @bob/);
  });

  it('applies to prompts as well', async () => {
    const error = await protocolError(gh.getPrompt('issue-to-fix', { owner: 'acme', repo: 'widgets', issue_number: '1' }));
    expect(error.code).toBe(-32003);
    expect(error.message).toMatch(/^Lockdown mode withholds issue #1/);
  });

  it('is off by default: the same issue is shown, sanitised', async () => {
    const open = await world.connect();
    expect((await open.callTool('get_issue', { ...repo, issue_number: 1 })).text).toContain('The app crashes on start.');
  });
});
