import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil, type TestSession } from '@suite/test-kit';
import { BIG_FILE_BYTES, TAG_TEXT, TOKENS, startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
beforeAll(async () => {
  world = await startWorld();
  gh = await world.connect();
});
afterAll(() => world.close());

const repo = { owner: 'acme', repo: 'widgets' };
const requestsTo = (method: string, pattern: RegExp) => world.fake.requests.filter((r) => r.method === method && pattern.test(r.path));
const fileAt = (path: string, branch = 'trunk'): string | undefined => {
  const r = world.widgets;
  const sha = world.fake.state.filesAt(r, r.refs.get(`heads/${branch}`)!).get(path);
  return sha ? r.blobs.get(sha)!.toString('utf8') : undefined;
};

describe('get_file_contents', () => {
  it('returns a text file from the default branch as its exact text, in its own block', async () => {
    const out = await gh.callTool('get_file_contents', { ...repo, path: 'README.md' });
    expect(out.isError).toBe(false);
    expect(out.content).toHaveLength(2);
    expect(out.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^acme\/widgets:\/README\.md \(25 bytes, sha [0-9a-f]{7}\):$/) });
    expect(out.content[1]).toEqual({ type: 'text', text: '# Widgets\n\nMake widgets.\n' });
  });

  it('lists a directory (the root when path is omitted), directories first', async () => {
    const root = await gh.callTool('get_file_contents', repo);
    expect(root.text).toMatch(/^acme\/widgets:\/: 5 entries\nassets\/\ndata\/\ndocs\/\nsrc\/\nREADME\.md \(25 bytes\)$/);
    const src = await gh.callTool('get_file_contents', { ...repo, path: 'src' });
    expect(src.text).toContain('util/\nindex.ts (58 bytes)');
  });

  it('percent-encodes every path segment, so #, % and spaces reach the right file', async () => {
    const out = await gh.callTool('get_file_contents', { ...repo, path: 'docs/a b#c%d.md' });
    expect(out.isError).toBe(false);
    expect(out.content[1]).toEqual({ type: 'text', text: 'A file whose name needs encoding.\n' });
    expect(requestsTo('GET', /contents\/docs\//).at(-1)?.path).toBe('/repos/acme/widgets/contents/docs/a%20b%23c%25d.md');
  });

  it('reads at a ref (tag), which differs from the default branch', async () => {
    const old = await gh.callTool('get_file_contents', { ...repo, path: 'src/util/math.ts', ref: 'v0.9.0' });
    const now = await gh.callTool('get_file_contents', { ...repo, path: 'src/util/math.ts' });
    expect(old.text).not.toContain('sub');
    expect(now.text).toContain('export const sub');
    expect(old.content[0]).toMatchObject({ text: expect.stringContaining(' at v0.9.0') });
  });

  it('answers a binary file with a repo:// resource link instead of bytes', async () => {
    const out = await gh.callTool('get_file_contents', { ...repo, path: 'assets/logo.png' });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/is binary; read it as the resource repo:\/\/acme\/widgets\/contents\/assets\/logo\.png/);
    expect(out.content[1]).toEqual({ type: 'resource_link', uri: 'repo://acme/widgets/contents/assets/logo.png', name: 'logo.png', mimeType: 'image/png', description: '16 bytes from acme/widgets' });
  });

  it('answers a file over 1 MB with a resource link (at the ref when one was given)', async () => {
    const out = await gh.callTool('get_file_contents', { ...repo, path: 'data/big.txt', ref: 'trunk' });
    expect(out.text).toContain('is larger than 1 MiB');
    expect(out.content[1]).toMatchObject({ type: 'resource_link', uri: 'repo://acme/widgets/refs/trunk/contents/data/big.txt', name: 'big.txt' });
    expect(out.text).not.toContain('xxxxxxxx');
    expect(BIG_FILE_BYTES).toBeGreaterThan(1024 * 1024);
  });

  it('never sanitises file contents: hidden characters in a file reach the model as they are', async () => {
    const out = await gh.callTool('get_file_contents', { ...repo, path: 'docs/hidden.md' });
    expect(out.content[1]).toEqual({ type: 'text', text: `Visible text.${TAG_TEXT}\u200b<!-- hidden -->\n` });
  });

  it('refuses .. and empty segments before any request is made', async () => {
    const before = world.fake.requests.length;
    for (const path of ['../secret', 'src/../../x', 'src//index.ts', '/etc/passwd']) {
      const out = await gh.callTool('get_file_contents', { ...repo, path });
      expect(out.isError, path).toBe(true);
      expect(out.text).toMatch(/path/);
    }
    expect(world.fake.requests.length).toBe(before);
  });
});

describe('create_or_update_file and delete_file', () => {
  it('creates a file on the real default branch (trunk) when no branch is given', async () => {
    const out = await gh.callTool('create_or_update_file', { ...repo, path: 'notes/new file.md', content: 'héllo\n', message: 'Add notes' });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/^Created notes\/new file\.md on the default branch of acme\/widgets: commit [0-9a-f]{7}, blob [0-9a-f]{40}\.$/);
    expect(fileAt('notes/new file.md')).toBe('héllo\n');
    expect(world.widgets.refs.has('heads/main')).toBe(false);
  });

  it('updates a file without a sha by looking the current blob sha up first', async () => {
    const out = await gh.callTool('create_or_update_file', { ...repo, path: 'README.md', content: '# Widgets v2\n', message: 'Update README', branch: 'trunk' });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(/^Updated README\.md on trunk/);
    expect(fileAt('README.md')).toBe('# Widgets v2\n');
    const put = requestsTo('PUT', /contents\/README\.md$/).at(-1)!;
    expect(put.body).toMatchObject({ message: 'Update README', branch: 'trunk', sha: expect.stringMatching(/^[0-9a-f]{40}$/) });
  });

  it('refuses to overwrite a newer version when the given sha is stale (409)', async () => {
    const out = await gh.callTool('create_or_update_file', { ...repo, path: 'README.md', content: 'x', message: 'm', sha: '0'.repeat(40) });
    expect(out.isError).toBe(true);
    expect(out.text).toMatch(/^GitHub refused: README\.md does not match 0{40} \(acme\/widgets\)\.$/);
    expect(fileAt('README.md')).toBe('# Widgets v2\n');
  });

  it('tells a read-only token which permission is missing (403)', async () => {
    const carol = await world.connect({ token: TOKENS.carol });
    const out = await carol.callTool('create_or_update_file', { ...repo, path: 'x.md', content: 'x', message: 'm' });
    expect(out.isError).toBe(true);
    expect(out.text).toBe('GitHub denied access to acme/widgets (403: Resource not accessible by personal access token). The token needs Contents: write on acme/widgets.');
  });

  it('deletes a file (looking its sha up) and says when there is nothing to delete', async () => {
    const out = await gh.callTool('delete_file', { ...repo, path: 'notes/new file.md', message: 'Remove notes' });
    expect(out.text).toMatch(/^Deleted notes\/new file\.md from the default branch of acme\/widgets: commit [0-9a-f]{7}\.$/);
    expect(fileAt('notes/new file.md')).toBeUndefined();
    const again = await gh.callTool('delete_file', { ...repo, path: 'notes/new file.md', message: 'Remove notes' });
    expect(again).toMatchObject({ isError: true, text: 'notes/new file.md does not exist on the default branch of acme/widgets; nothing to delete.' });
  });
});

describe('push_files', () => {
  it('commits several files in one commit on the default branch, and never asks for a force update', async () => {
    const before = world.widgets.refs.get('heads/trunk')!;
    const out = await gh.callTool('push_files', { ...repo, files: [{ path: 'a.txt', content: 'A' }, { path: 'dir/b.txt', content: 'B' }], message: 'Add a and b' });
    expect(out.isError).toBe(false);
    expect(out.text).toMatch(new RegExp(`^Pushed 2 files to trunk of acme/widgets: commit [0-9a-f]{7} "Add a and b" on top of ${before.slice(0, 7)}\\.$`));
    const after = world.widgets.refs.get('heads/trunk')!;
    expect(world.widgets.commits.get(after)!.parents).toEqual([before]);
    expect(fileAt('a.txt')).toBe('A');
    expect(fileAt('dir/b.txt')).toBe('B');
    expect(fileAt('src/index.ts')).toContain('widget');
    const patch = requestsTo('PATCH', /git\/refs\/heads\/trunk$/).at(-1)!;
    expect(patch.body).toEqual({ sha: after, force: false });
  });

  it('changes nothing when the branch moved meanwhile, and says so', async () => {
    world.fake.upstream.fault({ method: 'POST', path: '/repos/acme/widgets/git/commits', delayMs: 500 });
    const commits = () => requestsTo('POST', /\/git\/commits$/).length;
    const before = commits();
    const call = gh.callTool('push_files', { ...repo, branch: 'trunk', files: [{ path: 'race.txt', content: 'mine' }], message: 'Race' });
    // While the commit is being created (its request has arrived and is held), someone else pushes to trunk.
    await waitUntil(() => commits() > before, { what: 'the commit request' });
    const theirs = world.fake.state.commit(world.widgets, 'trunk', 'Someone else', { 'theirs.txt': 'theirs' }, 'bob');
    const out = await call;
    expect(out.isError).toBe(true);
    expect(out.text).toBe('trunk of acme/widgets moved while pushing (someone pushed to it), and this server never force-pushes: the branch is unchanged. Read the files again and retry.');
    expect(world.widgets.refs.get('heads/trunk')).toBe(theirs);
    expect(fileAt('race.txt')).toBeUndefined();
  });

  it('refuses the same path twice', async () => {
    const out = await gh.callTool('push_files', { ...repo, files: [{ path: 'x', content: '1' }, { path: 'x', content: '2' }], message: 'm' });
    expect(out).toMatchObject({ isError: true, text: 'x appears twice in files; give each path once.' });
  });
});

describe('branches, tags, commits', () => {
  it('creates a branch from the default branch, refuses an existing one', async () => {
    const out = await gh.callTool('create_branch', { ...repo, branch: 'fix/one' });
    const trunk = world.widgets.refs.get('heads/trunk')!;
    expect(out.text).toBe(`Created fix/one in acme/widgets from trunk at ${trunk.slice(0, 7)}.`);
    expect(world.widgets.refs.get('heads/fix/one')).toBe(trunk);
    const again = await gh.callTool('create_branch', { ...repo, branch: 'fix/one' });
    expect(again).toMatchObject({ isError: true, text: 'The branch fix/one already exists in acme/widgets (or its name collides with one). Pick another name.' });
    const invalid = await gh.callTool('create_branch', { ...repo, branch: 'bad..name' });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toMatch(/not a valid branch name/);
  });

  it('creates a branch from another branch whose name has a slash', async () => {
    const out = await gh.callTool('create_branch', { ...repo, branch: 'feature/login-2', from_branch: 'feature/login' });
    expect(out.isError).toBe(false);
    expect(world.widgets.refs.get('heads/feature/login-2')).toBe(world.widgets.refs.get('heads/feature/login'));
  });

  it('lists branches a page at a time, following GitHub\'s Link header', async () => {
    const first = await gh.callTool('list_branches', { ...repo, per_page: 2 });
    expect(first.text).toMatch(/^Branches of acme\/widgets:\nfeature\/login [0-9a-f]{7}\nfeature\/login-2 [0-9a-f]{7}\nPage 1 of 2\. More: call again with page: 2\.$/);
    const last = await gh.callTool('list_branches', { ...repo, per_page: 2, page: 2 });
    expect(last.text).toMatch(/trunk [0-9a-f]{7} \(protected\)$/);
    expect(last.text).not.toContain('More:');
    const perPage = await gh.callTool('list_branches', { ...repo, per_page: 101 });
    expect(perPage.isError).toBe(true);
    expect(perPage.text).toContain('per_page: a whole number from 1 to 100');
  });

  it('lists tags', async () => {
    const out = await gh.callTool('list_tags', repo);
    expect(out.text).toMatch(/^Tags of acme\/widgets:\nv1\.0\.0 [0-9a-f]{7}\nv0\.9\.0 [0-9a-f]{7}$/);
  });

  it('lists commits, newest first, for a path and from a branch', async () => {
    const forPath = await gh.callTool('list_commits', { ...repo, path: 'src/util/math.ts' });
    expect(forPath.text.split('\n').slice(1)).toEqual([expect.stringMatching(/^[0-9a-f]{7} 2025-\S+ \S+ @bob: Add math helpers$/), expect.stringMatching(/Initial commit$/)]);
    const fromBranch = await gh.callTool('list_commits', { ...repo, sha: 'feature/login', per_page: 1 });
    expect(fromBranch.text).toMatch(/@bob: Add login\nPage 1 of 3\. More: call again with page: 2\.$/);
  });

  it('gets a commit with its whole message, files and the diff unaltered (unless include_diff is false)', async () => {
    const sha = world.widgets.refs.get('tags/v1.0.0')!;
    const out = await gh.callTool('get_commit', { ...repo, sha });
    expect(out.text).toContain(`Commit ${sha} in acme/widgets`);
    expect(out.text).toContain('Message:\nAdd math helpers\n\nWith a longer body.');
    expect(out.text).toContain('modified src/util/math.ts (+2 -1)');
    expect(out.text).toContain('+export const sub = (a: number, b: number) => a - b;');
    const short = await gh.callTool('get_commit', { ...repo, sha: 'v1.0.0', include_diff: false });
    expect(short.text).toContain('modified src/util/math.ts');
    expect(short.text).not.toContain('Diff:');
  });
});

describe('releases', () => {
  it('lists releases and gets the latest published one, its notes sanitised', async () => {
    const list = await gh.callTool('list_releases', repo);
    expect(list.text).toMatch(/^Releases of acme\/widgets:\nv1\.0\.0 · One · 2025-[\d-]+ [\d:]+Z · @alice\nv0\.9\.0 · Beta · pre-release · /);
    const latest = await gh.callTool('get_latest_release', repo);
    expect(latest.text).toContain('Latest release of acme/widgets: v1.0.0 "One"');
    expect(latest.text).toContain('Assets: widgets.tgz (2 KiB, 7 downloads)');
    expect(latest.text).toMatch(/Notes:\nStable\.$/);
  });

  it('says when a repository has no release (404 named)', async () => {
    const out = await gh.callTool('get_latest_release', { owner: 'acme', repo: 'gadgets' });
    expect(out).toMatchObject({ isError: true, text: expect.stringMatching(/^Not found: a published release in acme\/gadgets\./) });
  });
});

describe('repositories and code search', () => {
  it('searches repositories and pages through the results', async () => {
    const out = await gh.callTool('search_repositories', { q: 'user:acme', per_page: 1 });
    expect(out.text).toMatch(/^2 repositories match:\nacme\/\w+ · ★\d+/);
    expect(out.text).toContain('More: call again with page: 2.');
    const widgets = await gh.callTool('search_repositories', { q: 'widgets' });
    expect(widgets.text).toContain('acme/widgets · ★42 · TypeScript · Widgets for everyone');
  });

  it('creates a repository for the user and in an organization', async () => {
    const mine = await gh.callTool('create_repository', { name: 'sandbox', private: true, auto_init: true });
    expect(mine.text).toBe('Created alice/sandbox (private, default branch main): https://github.example/alice/sandbox');
    expect(world.fake.state.repo('alice', 'sandbox')?.refs.has('heads/main')).toBe(true);
    const org = await gh.callTool('create_repository', { name: 'tooling', organization: 'acme', description: 'Internal tools' });
    expect(org.text).toMatch(/^Created acme\/tooling \(public/);
    const again = await gh.callTool('create_repository', { name: 'sandbox' });
    expect(again).toMatchObject({ isError: true, text: 'GitHub rejected the request as invalid: Repository creation failed: name: name already exists on this account.' });
  });

  it('forks a repository', async () => {
    const out = await gh.callTool('fork_repository', { owner: 'mallory', repo: 'tools' });
    expect(out.text).toBe('Forked mallory/tools to alice/tools: https://github.example/alice/tools (GitHub may take a few seconds to copy the contents).');
    expect(world.fake.state.repo('alice', 'tools')).toMatchObject({ fork: true, parent: 'mallory/tools' });
  });

  it('searches code and names the files found', async () => {
    const out = await gh.callTool('search_code', { q: 'widget repo:acme/widgets' });
    expect(out.text).toContain('acme/widgets:/src/index.ts');
    expect(out.text).not.toContain('gadgets');
  });
});
