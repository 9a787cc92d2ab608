import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { DEFAULT_LIMITS } from '../src/server.js';
import { TAG_TEXT, TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
beforeAll(async () => {
  world = await startWorld();
  gh = await world.connect();
});
afterAll(() => world.close());

const repo = { owner: 'acme', repo: 'widgets' };

describe('issues', () => {
  it('gets an issue: state, author, labels, assignees and the body', async () => {
    const out = await gh.callTool('get_issue', { ...repo, issue_number: 2 });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/^acme\/widgets#2: Add a blue widget\nstate open · by @bob · created [^·]+· updated [^·]+· 0 comments\nlabels: enhancement · assignees: @alice\nhttps:\/\/github\.example\/acme\/widgets\/issues\/2\nBody:\nWe need blue ones\.$/);
  });

  it('sanitises what an outsider wrote: hidden characters, comments, bidi overrides and fence info strings are gone', async () => {
    const out = await gh.callTool('get_issue', { ...repo, issue_number: 1 });
    expect(out.text).toContain('acme/widgets#1: Crash on start\n');
    expect(out.text).toContain('Body:\nThe app crashes on start.\n\nSteps: 1. run it\nevil\n```\nconsole.log(1)\n```');
    for (const hidden of [TAG_TEXT, '\u200b', '\u202e', '<!--', 'ssh', 'exfiltrate']) expect(out.text).not.toContain(hidden);
  });

  it('caps a long body and a long answer with a marker saying how much was left out', async () => {
    world.fake.state.addIssue(world.widgets, { title: 'Long', body: 'x'.repeat(5000), author: 'bob' });
    try {
      const number = world.widgets.issues.length;
      const capped = await world.connect({ limits: { ...DEFAULT_LIMITS, maxTextChars: 100 } });
      const out = await capped.callTool('get_issue', { ...repo, issue_number: number });
      expect(out.text).toMatch(/Body:\nx{100}\n\[truncated: 4900 more characters\]$/);
      const short = await world.connect({ limits: { ...DEFAULT_LIMITS, maxOutputChars: 60 } });
      const list = await short.callTool('list_issues', repo);
      expect(list.text).toMatch(/^Issues of acme\/widgets \(open\):\n#4 \[open\] Long · @bob · updat\n\[truncated: \d+ more characters\]$/);
    } finally {
      world.widgets.issues.pop();
    }
  });

  it('says a number is a pull request when it is one', async () => {
    const out = await gh.callTool('get_issue', { ...repo, issue_number: 3 });
    expect(out.text).toContain('This is a pull request: get_pull_request has its branches and merge state.');
  });

  it('lists issues, marks pull requests, filters by state and labels', async () => {
    const open = await gh.callTool('list_issues', repo);
    expect(open.text.split('\n')).toEqual([
      'Issues of acme/widgets (open):',
      expect.stringMatching(/^#3 \[open, PR\] Add login · @bob · updated /),
      expect.stringMatching(/^#2 \[open\] Add a blue widget · @bob · labels: enhancement · updated /),
      expect.stringMatching(/^#1 \[open\] Crash on start · @mallory · labels: bug · 3 comments · updated /),
    ]);
    const bugs = await gh.callTool('list_issues', { ...repo, labels: 'bug' });
    expect(bugs.text).toContain('#1 [open]');
    expect(bugs.text).not.toContain('#2');
    const paged = await gh.callTool('list_issues', { ...repo, per_page: 2 });
    expect(paged.text).toMatch(/\nPage 1 of 2\. More: call again with page: 2\.$/);
  });

  it('creates an issue with labels and assignees', async () => {
    const out = await gh.callTool('create_issue', { ...repo, title: 'Widgets wobble', body: 'They wobble.', labels: ['bug'], assignees: ['bob'] });
    expect(out.text).toBe('Created acme/widgets#4: https://github.example/acme/widgets/issues/4');
    expect(world.widgets.issues[3]).toMatchObject({ title: 'Widgets wobble', body: 'They wobble.', labels: ['bug'], assignees: ['bob'], author: 'alice' });
  });

  it("passes GitHub's validation details on (422)", async () => {
    const out = await gh.callTool('create_issue', { ...repo, title: 'x', assignees: ['nobody-here'] });
    expect(out).toMatchObject({ isError: true, text: 'GitHub rejected the request as invalid: Validation Failed: Issue.assignees is invalid ("nobody-here").' });
    const empty = await gh.callTool('create_issue', { ...repo, title: '   ' });
    expect(empty.isError).toBe(true);
    expect(empty.text).toContain('title: must not be empty');
  });

  it('updates an issue: state, title and labels (replacing them)', async () => {
    const out = await gh.callTool('update_issue', { ...repo, issue_number: 4, state: 'closed', title: 'Widgets wobble a lot', labels: ['enhancement'] });
    expect(out.text).toBe('Updated acme/widgets#4 (title, state, labels): now closed. https://github.example/acme/widgets/issues/4');
    expect(world.widgets.issues[3]).toMatchObject({ state: 'closed', title: 'Widgets wobble a lot', labels: ['enhancement'], stateReason: 'completed' });
  });

  it('says when an issue does not exist, naming it and the repository (404)', async () => {
    const out = await gh.callTool('get_issue', { ...repo, issue_number: 999 });
    expect(out).toMatchObject({
      isError: true,
      text: 'Not found: issue #999 in acme/widgets. Either it does not exist, or acme/widgets itself does not exist or is private and the token has no access to it (GitHub answers 404 then). Check the names.',
    });
  });

  it('says when issues are turned off (410)', async () => {
    world.fake.state.addRepo('acme', 'no-issues', { hasIssues: false, files: { a: 'a' } }).collaborators.set('alice', 'admin');
    const out = await gh.callTool('list_issues', { owner: 'acme', repo: 'no-issues' });
    expect(out).toMatchObject({ isError: true, text: 'GitHub answered 410 Gone for acme/no-issues: Issues are disabled for this repo (for example, issues are disabled on the repository).' });
  });

  it('searches issues, adding is:issue as GitHub requires', async () => {
    const out = await gh.callTool('search_issues', { q: 'crash repo:acme/widgets' });
    expect(out.text).toMatch(/^1 issues match:\nacme\/widgets#1 \[open\] Crash on start · @mallory/);
    const q = world.fake.requests.filter((r) => r.path === '/search/issues').at(-1)!.query.get('q');
    expect(q).toBe('crash repo:acme/widgets is:issue');
  });
});

describe('comments and labels', () => {
  it('lists comments (sanitised, a deleted author shown as @ghost) and adds one', async () => {
    const out = await gh.callTool('list_issue_comments', { ...repo, issue_number: 1 });
    expect(out.text).toMatch(/^Comments on acme\/widgets#1:\n@mallory at [^:]+:\d\dZ:\nAny news\? hidden\n\n@bob at [^\n]+ \(member\):\nLooking into it\.\n\n@ghost at [^\n]+:\nComment of a deleted account\.$/);
    const add = await gh.callTool('add_issue_comment', { ...repo, issue_number: 1, body: 'Fixed in #3.' });
    expect(add.text).toMatch(/^Commented on acme\/widgets#1: https:\/\/github\.example\/acme\/widgets\/issues\/1#issuecomment-\d+$/);
    expect(world.widgets.comments.at(-1)).toMatchObject({ issue: 1, author: 'alice', body: 'Fixed in #3.' });
  });

  it('lists labels', async () => {
    const out = await gh.callTool('list_labels', repo);
    expect(out.text).toMatch(/^Labels of acme\/widgets:\nbug: Something isn't working\nenhancement/);
  });

  it('lets a token without write permission read but not comment', async () => {
    const carol = await world.connect({ token: TOKENS.carol });
    expect((await carol.callTool('get_issue', { ...repo, issue_number: 2 })).isError).toBe(false);
    const out = await carol.callTool('add_issue_comment', { ...repo, issue_number: 2, body: 'hi' });
    expect(out).toMatchObject({ isError: true, text: 'GitHub denied access to acme/widgets (403: Resource not accessible by personal access token). The token needs Issues: write on acme/widgets.' });
  });
});
