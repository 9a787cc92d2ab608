import { afterEach, describe, expect, it } from 'vitest';
import { graphqlOperationOf, startFakeUpstream, type FakeUpstream } from '../src/testing.js';

describe('fake upstream HTTP server', () => {
  let upstream: FakeUpstream | undefined;
  afterEach(async () => {
    await upstream?.close();
    upstream = undefined;
  });

  it('routes by method and pattern, decodes params, and records every request', async () => {
    upstream = await startFakeUpstream();
    upstream.route('GET', '/repos/:owner/:repo/contents/*path', (req) => ({ json: { ...req.params, ref: req.query.get('ref') }, headers: { etag: '"v1"' } }));
    upstream.route('POST', '/repos/:owner/:repo/issues', (req) => ({ status: 201, json: { created: req.body } }));
    const got = await fetch(`${upstream.url}/repos/octo/hello%20world/contents/src/a%20b.ts?ref=main`, { headers: { authorization: 'token abc' } });
    expect(got.status).toBe(200);
    expect(got.headers.get('etag')).toBe('"v1"');
    expect(await got.json()).toEqual({ owner: 'octo', repo: 'hello world', path: 'src/a b.ts', ref: 'main' });
    const posted = await fetch(`${upstream.url}/repos/octo/r/issues`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 't' }) });
    expect(posted.status).toBe(201);
    expect(await posted.json()).toEqual({ created: { title: 't' } });
    expect((await fetch(`${upstream.url}/nothing`)).status).toBe(404);
    expect(upstream.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /repos/octo/hello%20world/contents/src/a%20b.ts', 'POST /repos/octo/r/issues', 'GET /nothing']);
    expect(upstream.requests[0]!.headers.authorization).toBe('token abc');
  });

  it('sends part of a body, then holds the rest or closes the connection; answers an alias path as another', async () => {
    upstream = await startFakeUpstream();
    upstream.route('GET', '/items/:id', (req) => ({ json: { id: req.params.id, pad: 'x'.repeat(1000) } }));
    upstream.rewrite('/by-number/:n', (params) => (params.n === '7' ? '/items/seven' : undefined));
    expect(await (await fetch(`${upstream.url}/by-number/7`)).json()).toMatchObject({ id: 'seven' });
    expect((await fetch(`${upstream.url}/by-number/8`)).status).toBe(404);
    expect(upstream.requests.at(-2)!.path).toBe('/by-number/7');

    upstream.fault({ path: '/items/:id', partial: { then: 'cut' } });
    const cut = await fetch(`${upstream.url}/items/a`);
    expect(cut.status).toBe(200);
    await expect(cut.text()).rejects.toThrow();

    upstream.fault({ path: '/items/:id', partial: { then: 'stall', bytes: 10 } });
    const stalled = await fetch(`${upstream.url}/items/b`, { signal: AbortSignal.timeout(300) });
    const reader = stalled.body!.getReader();
    let received = 0;
    // The first 10 bytes arrive (in however many chunks); then nothing until the client gives up.
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          received += value.byteLength;
        }
      })(),
    ).rejects.toThrow();
    expect(received).toBe(10);
  });

  it('injects faults for the next N matching requests: a status, a delay, a dropped connection', async () => {
    upstream = await startFakeUpstream();
    upstream.route('GET', '/ok', () => ({ body: 'fine' }));
    upstream.fault({ path: '/ok', times: 2, response: { status: 503, json: { message: 'down' }, headers: { 'retry-after': '3' } } });
    const first = await fetch(`${upstream.url}/ok`);
    expect([first.status, first.headers.get('retry-after')]).toEqual([503, '3']);
    expect((await fetch(`${upstream.url}/ok`)).status).toBe(503);
    expect(await (await fetch(`${upstream.url}/ok`)).text()).toBe('fine');

    upstream.fault({ path: /^\/ok$/, delayMs: 300 });
    const started = Date.now();
    expect(await (await fetch(`${upstream.url}/ok`)).text()).toBe('fine');
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    // Stamped when the request arrived, before the delay: when the client sent it, not when it was answered.
    const { receivedAt } = upstream.requests.at(-1)!;
    expect(receivedAt).toBeGreaterThanOrEqual(started);
    expect(Date.now() - receivedAt).toBeGreaterThanOrEqual(280);

    upstream.fault({ method: 'GET', path: '/ok', reset: true });
    await expect(fetch(`${upstream.url}/ok`)).rejects.toThrow();
    expect(await (await fetch(`${upstream.url}/ok`)).text()).toBe('fine');
  });

  it('reads a GraphQL request far enough to dispatch it: kind, name, variables', async () => {
    upstream = await startFakeUpstream();
    upstream.route('POST', '/graphql', (req) => ({ json: { data: { seen: graphqlOperationOf(req.body) ?? null } } }));
    const post = async (body: unknown): Promise<unknown> => (await (await fetch(`${upstream!.url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as { data: { seen: unknown } }).data.seen;
    expect(await post({ query: '# list them\n  query ListDiscussions($owner: String!) { repository(owner: $owner) { id } }', variables: { owner: 'acme' } })).toEqual({ kind: 'query', name: 'ListDiscussions', variables: { owner: 'acme' } });
    expect(await post({ query: 'mutation Resolve($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id } } }' })).toEqual({ kind: 'mutation', name: 'Resolve', variables: {} });
    // Anonymous operations, shorthand queries and bodies that are no GraphQL request are not dispatched.
    for (const body of [{ query: '{ viewer { login } }' }, { query: 'query { viewer { login } }' }, { variables: {} }, ['query X { a }']]) expect(await post(body), JSON.stringify(body)).toBeNull();
    expect(upstream.requests.map((r) => graphqlOperationOf(r.body)?.name)).toEqual(['ListDiscussions', 'Resolve', undefined, undefined, undefined, undefined]);
  });
});
