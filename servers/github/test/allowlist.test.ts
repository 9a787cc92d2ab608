import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolError, type TestSession } from '@suite/test-kit';
import { parseRepoPatterns } from '../src/repo-allowlist.js';
import { startWorld, type World } from './helpers.js';

let world: World;
let gh: TestSession;
const REFUSAL = /is outside this server's repository allowlist \(--repos acme\/widgets, alice\/\*\)\. Work in one of those repositories, or ask the operator to add it\.$/;

beforeAll(async () => {
  world = await startWorld();
  gh = await world.connect({ repos: parseRepoPatterns('acme/widgets, alice/*') });
});
afterAll(() => world.close());

/** Runs a call and returns it with the requests it made. */
async function traced(name: string, args: Record<string, unknown>) {
  const before = world.fake.requests.length;
  const out = await gh.callTool(name, args);
  return { out, requests: world.fake.requests.slice(before) };
}

describe('--repos', () => {
  it('parses owner/repo and owner/* entries, and refuses anything else at start-up', () => {
    expect(parseRepoPatterns('Acme/Widgets,alice/*')).toEqual([{ owner: 'acme', repo: 'widgets' }, { owner: 'alice', repo: '*' }]);
    for (const bad of ['acme', 'acme/*/x', '../x/y', 'a/b c/', '*/*', '']) expect(() => parseRepoPatterns(bad), bad).toThrow(/--repos/);
  });

  it('lets calls on allowed repositories through (case-insensitively, owner/* included)', async () => {
    expect((await gh.callTool('get_issue', { owner: 'ACME', repo: 'Widgets', issue_number: 2 })).isError).toBe(false);
    expect((await gh.callTool('get_file_contents', { owner: 'alice', repo: 'private-notes', path: 'notes.md' })).isError).toBe(false);
    expect((await gh.callTool('get_me')).isError).toBe(false);
    expect((await gh.callTool('search_users', { q: 'bob' })).isError).toBe(false);
  });

  it('refuses every tool on another repository before a request leaves the server', async () => {
    const calls: [string, Record<string, unknown>][] = [
      ['get_issue', { owner: 'acme', repo: 'gadgets', issue_number: 1 }],
      ['get_file_contents', { owner: 'acme', repo: 'gadgets', path: 'README.md' }],
      ['create_or_update_file', { owner: 'acme', repo: 'gadgets', path: 'x', content: 'x', message: 'x' }],
      ['push_files', { owner: 'acme', repo: 'gadgets', files: [{ path: 'x', content: 'x' }], message: 'x' }],
      ['list_pull_requests', { owner: 'mallory', repo: 'tools' }],
      ['fork_repository', { owner: 'mallory', repo: 'tools' }],
      ['list_workflow_runs', { owner: 'acme', repo: 'gadgets' }],
    ];
    for (const [name, args] of calls) {
      const { out, requests } = await traced(name, args);
      expect(out.isError, name).toBe(true);
      expect(out.text, name).toMatch(new RegExp(`^The repository ${args.owner}/${args.repo} ${REFUSAL.source}`));
      expect(requests, name).toEqual([]);
    }
  });

  it('checks where a fork or a new repository would go', async () => {
    const org = await traced('create_repository', { name: 'tooling', organization: 'acme' });
    expect(org.out.text).toMatch(new RegExp(`^A new repository acme/tooling ${REFUSAL.source}`));
    expect(org.requests).toEqual([]);
    const mine = await gh.callTool('create_repository', { name: 'allowed-new' });
    expect(mine.text).toBe('Created alice/allowed-new (public, default branch main): https://github.example/alice/allowed-new');
    const fork = await traced('fork_repository', { owner: 'alice', repo: 'private-notes', organization: 'acme' });
    expect(fork.out.text).toMatch(new RegExp(`^A fork to acme/private-notes ${REFUSAL.source}`));
    expect(fork.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('scopes searches: a query without a scope gets the allowlist, one that names another repository is refused', async () => {
    const code = await traced('search_code', { q: 'widget' });
    expect(code.out.isError).toBe(false);
    expect(code.requests.at(-1)!.query.get('q')).toBe('widget repo:acme/widgets user:alice');
    const scoped = await traced('search_issues', { q: 'blue repo:acme/widgets' });
    expect(scoped.requests.at(-1)!.query.get('q')).toBe('blue repo:acme/widgets is:issue');
    const bypasses = ['foo,repo:acme/secret', 'foo)repo:acme/secret', '"foo"repo:acme/secret', 'foo repository:acme/secret', 'repo:acme/widgets/../secret', 'x REPO:acme/secret', 'x repo: acme/secret', 'x repo:"acme/secret"', 'x organization:acme'];
    for (const query of ['crash repo:acme/gadgets', 'x repo:acme/widgets repo:acme/secret', 'x user:acme', 'x org:mallory', 'x (repo:acme/widgets OR repo:mallory/tools)', ...bypasses]) {
      const refused = await traced('search_issues', { query });
      expect(refused.out.text, query).toMatch(REFUSAL);
      expect(refused.requests, query).toEqual([]);
    }
    const excluded = await traced('search_pull_requests', { q: 'login -repo:acme/gadgets' });
    expect(excluded.requests.at(-1)!.query.get('q')).toBe('login -repo:acme/gadgets is:pr repo:acme/widgets user:alice');
    // An allowed repository in a form GitHub may not read as a qualifier, or next to an OR, limits nothing: the allowlist is added.
    for (const query of ['foo,repo:acme/widgets', 'crash OR repo:acme/widgets']) {
      const odd = await traced('search_issues', { q: query });
      expect(odd.requests.at(-1)!.query.get('q'), query).toBe(`${query} is:issue repo:acme/widgets user:alice`);
    }
  });

  it('drops search results and notifications from other repositories, whatever GitHub returned', async () => {
    const item = (repo: string, path: string) => ({ name: path, path, sha: 'x', url: 'u', git_url: 'u', html_url: 'u', score: 1, repository: { full_name: repo } });
    world.fake.upstream.fault({ path: '/search/code', response: { status: 200, json: { total_count: 2, incomplete_results: false, items: [item('acme/gadgets', 'leak.ts'), item('acme/widgets', 'ok.ts')] } } });
    const code = await gh.callTool('search_code', { q: 'anything' });
    expect(code.text).toContain('acme/widgets:/ok.ts');
    expect(code.text).not.toContain('leak');
    // The count is of what is shown: GitHub's 2 would tell that something outside the allowlist matched.
    expect(code.text).toMatch(/^1 files match/);
    const notifications = await gh.callTool('list_notifications', { all: true });
    expect(notifications.text).toContain('acme/widgets');
    expect(notifications.text).not.toContain('gadgets');
    expect(notifications.text).not.toContain('mallory/tools');
  });

  it('applies to resources and completions too', async () => {
    const error = await protocolError(gh.readResource('repo://acme/gadgets/contents/README.md'));
    expect(error.code).toBe(-32003);
    expect(error.message).toMatch(/^The repository acme\/gadgets is outside this server's repository allowlist/);
    expect((await gh.readResource('repo://acme/widgets/contents/README.md')).text).toBe('# Widgets\n\nMake widgets.\n');
    const owners = await gh.complete({ template: 'repo://{owner}/{repo}/contents/{+path}' }, 'owner', '');
    expect(owners.values).toEqual(['acme', 'alice']);
    const repos = await gh.complete({ template: 'repo://{owner}/{repo}/contents/{+path}' }, 'repo', '', { owner: 'acme' });
    expect(repos.values).toEqual(['widgets']);
  });
});
