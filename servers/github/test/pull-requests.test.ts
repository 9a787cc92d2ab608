import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestSession } from '@suite/test-kit';
import { TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
beforeAll(async () => {
  world = await startWorld();
  gh = await world.connect();
});
afterAll(() => world.close());

const repo = { owner: 'acme', repo: 'widgets' };

describe('reading pull requests', () => {
  it('gets a pull request: branches, mergeability, size and description', async () => {
    const out = await gh.callTool('get_pull_request', { ...repo, pull_number: 3 });
    expect(out.text).toMatch(
      /^acme\/widgets#3: Add login\nstate open · by @bob · feature\/login \([0-9a-f]{7}\) -> trunk · created [^·]+· updated [^\n]+\nmergeable: true \(clean\) · 1 commits · 1 files, \+1 -0 · 0 comments, 1 review comments\nhttps:\/\/github\.example\/acme\/widgets\/pull\/3\nBody:\nAdds a login page\.$/,
    );
  });

  it('lists and searches pull requests', async () => {
    const list = await gh.callTool('list_pull_requests', repo);
    expect(list.text).toMatch(/^Pull requests of acme\/widgets \(open\):\n#3 \[open\] Add login · @bob · feature\/login -> trunk · updated /);
    const byHead = await gh.callTool('list_pull_requests', { ...repo, head: 'acme:nope' });
    expect(byHead.text).toBe('Pull requests of acme/widgets (open):\nNone.');
    const search = await gh.callTool('search_pull_requests', { q: 'login repo:acme/widgets' });
    expect(search.text).toMatch(/^1 pull requests match:\nacme\/widgets#3 \[open, PR\] Add login/);
    expect(world.fake.requests.filter((r) => r.path === '/search/issues').at(-1)!.query.get('q')).toBe('login repo:acme/widgets is:pr');
  });

  it('lists the changed files and returns the diff exactly', async () => {
    const files = await gh.callTool('get_pull_request_files', { ...repo, pull_number: 3 });
    expect(files.text).toBe('Files of acme/widgets#3:\nadded src/login.ts (+1 -0)');
    const diff = await gh.callTool('get_pull_request_diff', { ...repo, pull_number: 3 });
    expect(diff.text).toBe('diff --git a/src/login.ts b/src/login.ts\n--- /dev/null\n+++ b/src/login.ts\n@@ -0,0 +1,1 @@\n+export const login = () => true;\n');
    const accept = world.fake.requests.filter((r) => r.path === '/repos/acme/widgets/pulls/3').at(-1)!.headers.accept;
    expect(accept).toMatch(/application\/vnd\.github\.v3\.diff/);
  });

  it('reports statuses and check runs of the head with one verdict', async () => {
    const out = await gh.callTool('get_pull_request_status', { ...repo, pull_number: 3 });
    expect(out.text).toBe(
      [
        `acme/widgets#3 at ${world.widgets.refs.get('heads/feature/login')!.slice(0, 7)}: failing (2 passed, 1 failed, 0 pending)`,
        'Commit statuses:',
        '- ci/lint: success (Lint passed)',
        'Check runs:',
        '- build: success (Build passed)',
        '- test: failure (2 tests failed)',
      ].join('\n'),
    );
  });

  it('lists reviews and review comments', async () => {
    const reviews = await gh.callTool('get_pull_request_reviews', { ...repo, pull_number: 3 });
    expect(reviews.text).toMatch(/^Reviews of acme\/widgets#3:\n@alice COMMENTED at [^\n]+ on [0-9a-f]{7}:\nLooks close\.$/);
    const comments = await gh.callTool('get_pull_request_comments', { ...repo, pull_number: 3 });
    expect(comments.text).toMatch(/^Review comments on acme\/widgets#3:\n@alice on src\/login\.ts:1 at [^\n]+:\nReturn a promise\?$/);
  });
});

describe('writing pull requests', () => {
  it("opens a pull request into the repository's real default branch when base is omitted", async () => {
    world.fake.state.commit(world.widgets, 'feature/docs', 'Docs', { 'docs/guide.md': 'Guide\n' }, 'alice');
    // The branch was created from nothing above; give it trunk's history first.
    const out = await gh.callTool('create_pull_request', { ...repo, title: 'Add a guide', head: 'feature/docs', body: 'Docs.' });
    expect(out.text).toBe('Opened acme/widgets#4 (feature/docs -> trunk): https://github.example/acme/widgets/pull/4');
    expect(world.widgets.issues[3]!.pull).toMatchObject({ head: 'feature/docs', base: 'trunk' });
    const dup = await gh.callTool('create_pull_request', { ...repo, title: 'Again', head: 'feature/docs', base: 'trunk' });
    expect(dup).toMatchObject({ isError: true, text: 'GitHub rejected the request as invalid: Validation Failed: A pull request already exists for acme:feature/docs.' });
  });

  it('submits a review with line comments; GitHub refuses an approval of your own pull request', async () => {
    const bob = await world.connect({ token: TOKENS.bob });
    const own = await bob.callTool('create_pull_request_review', { ...repo, pull_number: 3, event: 'APPROVE' });
    expect(own).toMatchObject({ isError: true, text: 'GitHub rejected the request as invalid: Unprocessable Entity: Can not approve your own pull request.' });
    const out = await gh.callTool('create_pull_request_review', { ...repo, pull_number: 3, event: 'REQUEST_CHANGES', body: 'Please add tests.', comments: [{ path: 'src/login.ts', line: 1, body: 'Test this.' }] });
    expect(out.text).toMatch(/^Submitted review \d+ \(CHANGES_REQUESTED\) on acme\/widgets#3 with 1 comments: https:\/\/github\.example\/acme\/widgets\/pull\/3#pullrequestreview-\d+$/);
    expect(world.widgets.reviewComments.at(-1)).toMatchObject({ path: 'src/login.ts', line: 1, body: 'Test this.', author: 'alice' });
    const bad = await gh.callTool('create_pull_request_review', { ...repo, pull_number: 3, event: 'COMMENT', body: 'x', comments: [{ path: 'src/login.ts', body: 'no line' }] });
    expect(bad.isError).toBe(true);
    expect(bad.text).toContain('comments.0.line');
  });

  it('updates the branch, refusing when the head moved', async () => {
    const head = world.widgets.refs.get('heads/feature/login')!;
    const out = await gh.callTool('update_pull_request_branch', { ...repo, pull_number: 3, expected_head_sha: head });
    expect(out.text).toBe('acme/widgets#3: Updating pull request branch; GitHub updates the branch in the background.');
    const stale = await gh.callTool('update_pull_request_branch', { ...repo, pull_number: 3, expected_head_sha: '1'.repeat(40) });
    expect(stale).toMatchObject({ isError: true, text: "GitHub rejected the request as invalid: expected head sha didn't match current head ref." });
  });

  it('merges only the head it was told about (409), then merges, then cannot merge again (405)', async () => {
    const moved = await gh.callTool('merge_pull_request', { ...repo, pull_number: 3, sha: '2'.repeat(40) });
    expect(moved).toMatchObject({ isError: true, text: 'GitHub refused: Head branch was modified. Review and try the merge again (acme/widgets).' });
    const out = await gh.callTool('merge_pull_request', { ...repo, pull_number: 3, merge_method: 'squash', commit_message: 'Login (#3)' });
    expect(out.text).toMatch(/^Merged acme\/widgets#3 \(squash\): [0-9a-f]{7} Pull Request successfully merged$/);
    const trunk = world.widgets.refs.get('heads/trunk')!;
    expect(world.widgets.commits.get(trunk)!.message).toBe('Login (#3)');
    const again = await gh.callTool('merge_pull_request', { ...repo, pull_number: 3 });
    expect(again).toMatchObject({ isError: true, text: 'GitHub refused: Pull Request is not mergeable (acme/widgets).' });
    const after = await gh.callTool('get_pull_request', { ...repo, pull_number: 3 });
    expect(after.text).toMatch(/state merged · .*\nmerged 2025-[^ ]+ [^ ]+ by @alice/);
  });
});
