import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Logger } from '@suite/shared';
import { GithubClients } from '../src/github-client.js';
import { GRAPHQL_TARGET } from '../src/graphql-target.js';
import { startFakeGithub, tokenOf, type FakeGithub } from './fake-github/index.js';
import { TOKENS, seed, testConfig } from './helpers.js';

/**
 * The request hook's rules for GraphQL, below the tools (which always send a consistent target):
 * a request that names no repository, or whose owner/name variables name another than the one it
 * declares, never leaves; the allowlist and --token-for read the declared one. Enterprise Server's
 * /api/graphql beside /api/v3 is GitHub's GraphQL endpoint too.
 */
let fake: FakeGithub;
let ghes: FakeGithub;
const QUERY = 'query DiscussionCategories($owner: String!, $name: String!) { repository(owner: $owner, name: $name) { id discussionCategories(first: 100) { nodes { id name slug description isAnswerable } } } }';

beforeAll(async () => {
  fake = await startFakeGithub();
  seed(fake);
  ghes = await startFakeGithub({ basePath: '/api/v3' });
  seed(ghes);
});
afterAll(async () => {
  await fake.close();
  await ghes.close();
});

const target = (owner: string, repo: string): { request: Record<string, unknown> } => ({ request: { [GRAPHQL_TARGET]: { owner, repo } } });

describe('GraphQL through the request hook', () => {
  it('refuses, before sending, a request without a target or whose variables name another repository', async () => {
    const api = new GithubClients(testConfig(fake), new Logger('test')).forToken(TOKENS.alice);
    const before = fake.requests.length;
    await expect(api.graphql(QUERY, { owner: 'acme', name: 'widgets' })).rejects.toThrow('A GraphQL request names no repository, so it was not sent.');
    await expect(api.graphql(QUERY, { owner: 'acme', name: 'secret', ...target('acme', 'widgets') })).rejects.toThrow('A GraphQL request names another repository in its variables than acme/widgets, so it was not sent.');
    await expect(api.graphql(QUERY, { owner: 'mallory', name: 'widgets', ...target('acme', 'widgets') })).rejects.toThrow(/names another repository/);
    expect(fake.requests.length).toBe(before);
    const answer = await api.graphql<{ repository: { id: string } }>(QUERY, { owner: 'ACME', name: 'Widgets', ...target('acme', 'widgets') });
    expect(answer.repository.id).toMatch(/^R_\d+$/);
    // The target never travels: only the query and its variables do.
    expect(fake.requests.at(-1)!.body).toEqual({ query: QUERY, variables: { owner: 'ACME', name: 'Widgets' } });
  });

  it('--repos and --token-for read the declared repository', async () => {
    const config = testConfig(fake, { repos: [{ owner: 'acme', repo: 'widgets' }], ownerTokens: { acme: TOKENS.bob } });
    const api = new GithubClients(config, new Logger('test')).forToken(TOKENS.alice, config.ownerTokens);
    const before = fake.requests.length;
    await expect(api.graphql(QUERY, { owner: 'acme', name: 'gadgets', ...target('acme', 'gadgets') })).rejects.toThrow("The repository acme/gadgets is outside this server's repository allowlist");
    expect(fake.requests.length).toBe(before);
    await api.graphql(QUERY, { owner: 'acme', name: 'widgets', ...target('acme', 'widgets') });
    expect(fake.requests.slice(before).map(tokenOf)).toEqual([TOKENS.bob]);
  });

  it('on GitHub Enterprise Server, /api/graphql beside /api/v3, under --repos', async () => {
    const api = new GithubClients(testConfig(ghes, { repos: [{ owner: 'acme', repo: 'widgets' }] }), new Logger('test')).forToken(TOKENS.alice);
    const answer = await api.graphql<{ repository: { id: string } }>(QUERY, { owner: 'acme', name: 'widgets', ...target('acme', 'widgets') });
    expect(answer.repository.id).toMatch(/^R_\d+$/);
    expect(ghes.requests.at(-1)!.path).toBe('/api/graphql');
  });
});
