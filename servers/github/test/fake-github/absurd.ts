import type { FakeFault, FakeTransform } from '@suite/test-kit';

/**
 * A GitHub (or a proxy) that answers with values no real GitHub sends: rate-limit headers from
 * the year 3000, waits of 1e308 seconds, Link headers that do not parse or lead nowhere, a diff
 * that is JSON or a web page. Faults and transforms on the fake's real HTTP.
 */

type Where = Pick<FakeFault, 'method' | 'path' | 'times'>;

/** 403 over the primary limit, with an x-ratelimit-reset exactly as given (a year-3000 epoch, a negative, garbage). */
export function primaryLimitReset(where: Where, reset: string): FakeFault {
  return {
    ...where,
    response: {
      status: 403,
      headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': reset, 'x-ratelimit-resource': 'core' },
      json: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
    },
  };
}

/** 429 with a retry-after exactly as given (1e308, -1, "soon"). */
export function retryAfter(where: Where, value: string): FakeFault {
  return { ...where, response: { status: 429, headers: { 'retry-after': value }, json: { message: 'Too Many Requests' } } };
}

/** A 200 to a request for a diff that is not a diff: GitHub's JSON for the pull request, or a web page. */
export function notADiff(where: Where, kind: 'json' | 'html'): FakeFault {
  return kind === 'json'
    ? { ...where, response: { status: 200, json: { number: 3, title: 'Add login', state: 'open' } } }
    : { ...where, response: { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<!DOCTYPE html><html><body>diff --git a/x b/x</body></html>' } };
}

/** Every answer to a path (exactly) carries this Link header instead of its own. */
export function linkHeader(path: string, link: string): FakeTransform {
  return (request, response) => (request.path === path ? { ...response, headers: { ...response.headers, link } } : response);
}
