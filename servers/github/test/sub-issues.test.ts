import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { TAG_TEXT, TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
const repo = { owner: 'acme', repo: 'widgets' };

beforeAll(async () => {
  world = await startWorld();
  const s = world.fake.state;
  s.addIssue(world.widgets, { title: `Epic: widgets v2${TAG_TEXT}`, author: 'alice' });
  s.addIssue(world.widgets, { title: 'Paint them', author: 'bob' });
  const gadgets = s.repo('acme', 'gadgets')!;
  s.addIssue(gadgets, { title: 'Gadget part', author: 'alice' });
  gh = await world.connect({}, { toolsets: ['sub_issues'] });
});
afterAll(() => world.close());

describe('sub-issues', () => {
  it('adds sub-issues by number (in this or another repository of the owner), lists them, removes one', async () => {
    const add = await gh.callTool('add_sub_issue', { ...repo, issue_number: 4, sub_issue_number: 5 });
    expect(add.text).toBe('acme/widgets#5 (Paint them) is now a sub-issue of acme/widgets#4.');
    const other = await gh.callTool('add_sub_issue', { ...repo, issue_number: 4, sub_issue_number: 1, sub_issue_repo: 'gadgets' });
    expect(other.text).toBe('acme/gadgets#1 (Gadget part) is now a sub-issue of acme/widgets#4.');
    const list = await gh.callTool('list_sub_issues', { ...repo, issue_number: 4 });
    expect(list.text).toBe('Sub-issues of acme/widgets#4:\n#5 Paint them · open\nacme/gadgets#1 Gadget part · open');
    const removed = await gh.callTool('remove_sub_issue', { ...repo, issue_number: 4, sub_issue_number: 5 });
    expect(removed.text).toBe('acme/widgets#5 is no longer a sub-issue of acme/widgets#4.');
    expect((await gh.callTool('list_sub_issues', { ...repo, issue_number: 4 })).text).toBe('Sub-issues of acme/widgets#4:\nacme/gadgets#1 Gadget part · open');
  });

  it("GitHub's refusals read as what to fix: a second parent, itself, a link that is not there", async () => {
    await gh.callTool('add_sub_issue', { ...repo, issue_number: 4, sub_issue_number: 2 });
    const twice = await gh.callTool('add_sub_issue', { ...repo, issue_number: 5, sub_issue_number: 2 });
    expect(twice).toMatchObject({ isError: true, text: expect.stringContaining('Sub issue may only have one parent') });
    const self = await gh.callTool('add_sub_issue', { ...repo, issue_number: 4, sub_issue_number: 4 });
    expect(self).toMatchObject({ isError: true, text: expect.stringContaining('cannot be a sub-issue of itself') });
    const absent = await gh.callTool('remove_sub_issue', { ...repo, issue_number: 5, sub_issue_number: 1 });
    expect(absent).toMatchObject({ isError: true, text: expect.stringMatching(/^Not found: issue #5 in acme\/widgets/) });
  });

  it('a token without Issues: write is told so; --repos refuses a sub-issue in another repository before anything is sent', async () => {
    const carol = await world.connect({ token: TOKENS.carol }, { toolsets: ['sub_issues'] });
    const denied = await carol.callTool('add_sub_issue', { ...repo, issue_number: 5, sub_issue_number: 1 });
    expect(denied).toMatchObject({ isError: true, text: expect.stringContaining('The token needs Issues: write on acme/widgets.') });
    const limited = await world.connect({ repos: [{ owner: 'acme', repo: 'widgets' }] }, { toolsets: ['sub_issues'] });
    const before = world.fake.requests.length;
    const outside = await limited.callTool('add_sub_issue', { ...repo, issue_number: 5, sub_issue_number: 1, sub_issue_repo: 'gadgets' });
    expect(outside).toMatchObject({ isError: true, text: expect.stringContaining("outside this server's repository allowlist") });
    expect(world.fake.requests.slice(before).filter((r) => r.path.includes('gadgets'))).toEqual([]);
  });
});
