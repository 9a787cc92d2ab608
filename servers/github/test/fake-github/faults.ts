import type { FakeFault } from '@suite/test-kit';

/**
 * What a failing or hostile GitHub does, as faults for the fake's next matching requests: arm one
 * with `fake.upstream.fault(...)`. Each is a real HTTP answer (or a connection that breaks) on the
 * fake's socket, never a stub inside the server.
 */

type Where = Pick<FakeFault, 'method' | 'path' | 'times'>;

/** A redirect (301, 302, 307, 308) to `location`: an absolute URL, or a path on the same origin. */
export function redirect(where: Where, status: 301 | 302 | 303 | 307 | 308, location: string): FakeFault {
  return { ...where, response: { status, headers: { location }, json: { message: 'Moved Permanently', url: location, documentation_url: 'https://docs.github.com/rest/guides/best-practices-for-using-the-rest-api#follow-redirects' } } };
}

/** A 200 that is a web page (a captive portal, a proxy's login page, an error page) instead of the API's JSON. */
export function htmlPage(where: Where): FakeFault {
  return { ...where, response: { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<!DOCTYPE html><html><body><h1>Sign in to continue</h1></body></html>' } };
}

/** A 200 or 201 claiming JSON with nothing in it. */
export function emptyBody(where: Where, status = 200): FakeFault {
  return { ...where, response: { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '' } };
}

/** A 2xx claiming JSON that is not JSON (cut in the middle of an object). */
export function malformedJson(where: Where, status = 200): FakeFault {
  return { ...where, response: { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"number": 7, "title": "half an obj' } };
}

/** Headers and the first half of a JSON body, then nothing more (the connection stays open). */
export function stalledBody(where: Where, json: unknown = { number: 7, title: 'Stalled', state: 'open', body: 'x'.repeat(4096) }): FakeFault {
  return { ...where, response: { status: 200, json }, partial: { then: 'stall' } };
}

/** Headers and the first half of a JSON body, then the connection closes. */
export function cutOffBody(where: Where, json: unknown = { number: 7, title: 'Cut', state: 'open', body: 'x'.repeat(4096) }): FakeFault {
  return { ...where, response: { status: 200, json }, partial: { then: 'cut' } };
}

/** GitHub's 502 (its proxies answer it when the backend took too long, often after doing the work). */
export function badGateway(where: Where): FakeFault {
  return { ...where, response: { status: 502, json: { message: 'Server Error' } } };
}

/** The request is read in full, then the connection is dropped without an answer. */
export function connectionReset(where: Where): FakeFault {
  return { ...where, reset: true };
}

/** 429 with retry-after. */
export function tooManyRequests(where: Where, retryAfterSeconds: number): FakeFault {
  return { ...where, response: { status: 429, headers: { 'retry-after': String(retryAfterSeconds) }, json: { message: 'Too Many Requests' } } };
}

/** 403 with x-ratelimit-remaining: 0, resetting at `reset` (epoch seconds). */
export function primaryLimit(where: Where, reset: number, resource = 'core'): FakeFault {
  return {
    ...where,
    response: {
      status: 403,
      headers: { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset), 'x-ratelimit-resource': resource },
      json: { message: 'API rate limit exceeded for user ID 1.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api' },
    },
  };
}

/** GitHub's secondary limit: 403 with its message, and retry-after when given. */
export function secondaryLimit(where: Where, retryAfterSeconds?: number): FakeFault {
  return {
    ...where,
    response: {
      status: 403,
      headers: retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
      json: { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.', documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits' },
    },
  };
}
