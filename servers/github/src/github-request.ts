import { ToolError, UpstreamError, formatBytes, type Logger, type SharedLimits } from '@suite/shared';
import type { ThrottleSettings } from './config.js';
import { GithubHttpFailure, NetworkFailure, SERVICE, apiPath, describeNetworkFailure, mayHaveBeenSent, repoOfPath, worthRetrying, writeUncertain } from './github-errors.js';
import { foreignHopRefusal, storageNote } from './redirect-policy.js';
import { bucketOf, rateLimitOfAnswer, sleep, spaced, type RateLimitAnswer } from './rate-limits.js';
import { sanitizeText } from './sanitize.js';
import type { TokenRedactor } from './token-redaction.js';
import { sanitizeUpstreamJson } from './upstream-hygiene.js';

/**
 * How every request reaches GitHub, in place of @octokit/request's fetch wrapper and the retry and
 * throttling plugins: redirects are followed by hand (a read only, each hop checked by the caller,
 * the token dropped on another origin), a 2xx body must be what was asked for (JSON parsed here,
 * within the call's deadline), a request that may have changed something is never repeated, and
 * a known rate limit stops requests of the token before they leave.
 */

/** What Octokit hands the hook, parsed: the request to send. */
export interface PlannedRequest {
  method: string;
  url: string;
  headers: Record<string, string | number | undefined>;
  body?: unknown;
  /** false: the caller reads the body as a stream (logs, raw files). */
  parseBody: boolean;
  /**
   * Whether the request only reads, when its method does not say (a GraphQL query is a POST): a
   * read is retried after a 5xx and never reported as a write that may have been made.
   */
  read?: boolean;
  /** A GraphQL request: its own rate-limit counter, and GitHub's RATE_LIMITED answer (a 200) is a rate limit. */
  graphql?: boolean;
  signal: AbortSignal | undefined;
  /** Tells the call's caller something it should know about its answer (a redirect to another repository). */
  note?: (text: string) => void;
}

/** The answer as Octokit's callers (pagination included) read it. */
export interface GithubResponse {
  status: number;
  url: string;
  headers: Record<string, string>;
  data: unknown;
}

export interface SendSettings {
  token: string | undefined;
  /** Keys this token's shared limits and lanes (a hash, never the token). */
  tokenKey: string;
  /** Known rate limits and requests in flight, per token: the process's, shared across replicas with --redis-url. */
  limits: SharedLimits;
  /** Most requests of one token in flight at once (across replicas with --redis-url). */
  maxInFlight: number;
  apiOrigin: string;
  basePath: string;
  throttle: ThrottleSettings;
  /** The largest answer read (limits.maxAnswerBytes): GitHub's largest pages are a few MB. */
  maxAnswerBytes: number;
  log: Logger;
  /** Removes the tokens the process holds (this one's and the operator's) from what GitHub answers, before anything reads it. */
  redactor: TokenRedactor;
  /** A refusal when a redirect to `url` must not be followed (the allowlist), undefined to follow it. */
  refuseHop(url: URL, from: URL, status: number): ToolError | undefined;
}

const MAX_ERROR_BODY_BYTES = 256 * 1024;
const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

const isRead = (method: string): boolean => method === 'GET' || method === 'HEAD';
const reads = (plan: PlannedRequest): boolean => plan.read ?? isRead(plan.method);

/** Writes that notify people, spaced further apart (GitHub's guidance; the throttling plugin's list). */
const NOTIFYING = /^\/repos\/[^/]+\/[^/]+\/(?:issues|issues\/\d+\/comments|pulls|pulls\/\d+\/(?:comments|comments\/\d+\/replies|merge|requested_reviewers|reviews)|releases)$/;

/**
 * A `.` or `..` segment in a request's path as built (before a URL parser folds it away, which it
 * does for `%2e` too): an argument that would name another resource than the one the tool means.
 */
function dotSegment(url: string): string | undefined {
  const pathname = url.replace(/^[a-z]+:\/\/[^/]*/i, '').split(/[?#]/)[0] ?? '';
  return pathname.split('/').find((segment) => /^(?:\.|%2e){1,2}$/i.test(segment));
}

export async function sendRequest(plan: PlannedRequest, settings: SendSettings): Promise<GithubResponse> {
  const dots = dotSegment(plan.url);
  if (dots !== undefined) {
    throw ToolError.invalidArgument(`An argument of this call is ${JSON.stringify(decodeURIComponent(dots))}, which would name another path on GitHub than the one meant; nothing was sent. Give the real name, sha or id.`);
  }
  const path = apiPath(plan.url, settings.basePath);
  const { throttle, tokenKey } = settings;
  const run = (): Promise<GithubResponse> => attempts(plan, settings, path);
  if (reads(plan)) {
    if (!path?.startsWith('/search/')) return run();
    return spaced(`${tokenKey}:search`, throttle.searchSpacingMs, plan.signal, run);
  }
  const write = (): Promise<GithubResponse> => spaced(`${tokenKey}:write`, throttle.writeSpacingMs, plan.signal, run);
  return path && NOTIFYING.test(path) ? spaced(`${tokenKey}:notifications`, throttle.notificationSpacingMs, plan.signal, write) : write();
}

/** The request, with a wait for a known limit first, and the retries a read may have. */
async function attempts(plan: PlannedRequest, settings: SendSettings, path: string | undefined): Promise<GithubResponse> {
  const { throttle, tokenKey, limits, log } = settings;
  const bucket = bucketOf(path, plan.graphql === true);
  let waitedForLimit = false;
  for (let attempt = 0; ; attempt++) {
    const limit = await limits.limitInForce(tokenKey, [bucket, 'all']);
    if (limit) {
      const waitMs = limit.until - Date.now();
      if (waitedForLimit || waitMs > throttle.maxRateLimitWaitSeconds * 1000) {
        log.warning(`${plan.method} ${path ?? ''} not sent: GitHub's rate limit (${limit.detail}) is in force for another ${Math.ceil(waitMs / 1000)} s`);
        throw UpstreamError.rateLimited(SERVICE, waitMs / 1000, `${limit.detail}; nothing was sent`);
      }
      log.info(`${plan.method} ${path ?? ''} waits ${Math.ceil(waitMs / 1000)} s for GitHub's rate limit to lift`);
      await sleep(waitMs, plan.signal);
      waitedForLimit = true;
    }
    try {
      return await limits.withSlot(tokenKey, settings.maxInFlight, () => once(plan, settings, path), plan.signal);
    } catch (error) {
      const limited = error instanceof GithubHttpFailure ? rateLimitOf(error) : undefined;
      if (limited) {
        await limits.recordLimit(tokenKey, limited.bucket, { until: limited.until, detail: limited.detail });
        // A rate-limited request was not carried out, so even a write may go again once, after the wait.
        if (!waitedForLimit && limited.until - Date.now() <= throttle.maxRateLimitWaitSeconds * 1000) continue;
        throw error;
      }
      if (!reads(plan) && error instanceof GithubHttpFailure && error.status >= 500) {
        // GitHub's proxies answer 502 and 504 when the backend was slow, often after it did the work.
        throw writeUncertain(plan.method, path, `GitHub answered ${error.status}`);
      }
      const retriable = reads(plan) && attempt < throttle.retries && plan.signal?.aborted !== true && transient(error);
      if (!retriable) throw error;
      log.warning(`${plan.method} ${path ?? ''} failed (${error instanceof GithubHttpFailure ? error.status : 'no answer'}); retry ${attempt + 1} of ${throttle.retries}`);
      await sleep(throttle.retryBaseMs * (attempt + 1) ** 2, plan.signal);
    }
  }
}

/** Answers that broke off on the way (a cut-off body): worth another try for a read. */
const brokenAnswers = new WeakSet<object>();

/** A 5xx, a connection that failed or an answer that broke off: worth another try for a read. */
function transient(error: unknown): boolean {
  if (error instanceof GithubHttpFailure) return error.status >= 500;
  if (error instanceof NetworkFailure) return worthRetrying(error.cause);
  return (typeof error === 'object' && error !== null && brokenAnswers.has(error));
}

/** One attempt: the request and its redirects, then the answer read and checked. */
async function once(plan: PlannedRequest, settings: SendSettings, path: string | undefined): Promise<GithubResponse> {
  const first = new URL(plan.url);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(plan.headers)) if (value !== undefined) headers[name.toLowerCase()] = String(value);
  if (settings.token) headers.authorization = `token ${settings.token}`;
  const body = plan.body === undefined ? undefined : typeof plan.body === 'string' || plan.body instanceof Uint8Array ? plan.body : JSON.stringify(plan.body);
  const what = `${plan.method} ${path ?? first.pathname}`;

  let url = first;
  let method = plan.method;
  let sendBody = body;
  let response: Response;
  for (let hops = 0; ; hops++) {
    try {
      response = await fetch(url, { method, headers, body: sendBody, redirect: 'manual', signal: plan.signal ?? null });
    } catch (error) {
      if (plan.signal?.aborted) {
        // A write already on its way when the call's time ran out (or it was cancelled) may have been made.
        if (!reads(plan)) throw writeUncertain(plan.method, path, 'no answer before the call ended: its time budget ran out, or it was cancelled');
        throw error;
      }
      if (!reads(plan) && mayHaveBeenSent(error)) throw writeUncertain(plan.method, path, describeNetworkFailure(error, url));
      throw new NetworkFailure(error, url);
    }
    if (!REDIRECTS.has(response.status)) break;
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get('location');
    if (!location) throw UpstreamError.unreachable(SERVICE, response.status, `a redirect without a location for ${what}`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw UpstreamError.unreachable(SERVICE, response.status, `a redirect to an invalid location for ${what}`);
    }
    if (!reads(plan)) {
      throw ToolError.conflict(
        `GitHub answered the write ${what} with a redirect (${response.status}) to ${describeTarget(next, settings)}. Writes never follow a redirect, so nothing was sent there, and GitHub did not make the change. The repository may have been renamed or transferred: look up its current name and call again with it.`,
      );
    }
    if (hops >= MAX_REDIRECTS) throw UpstreamError.unreachable(SERVICE, response.status, `more than ${MAX_REDIRECTS} redirects for ${what}`);
    if (next.origin !== settings.apiOrigin) {
      // Only a download GitHub hands to its storage may leave the API's origin (redirect-policy.ts).
      const foreign = foreignHopRefusal({ method: plan.method, firstPath: path, next, status: response.status, apiOrigin: settings.apiOrigin, what });
      if (foreign) throw foreign;
      // The token is for GitHub's API only: signed download URLs on another origin need none.
      delete headers.authorization;
      plan.note?.(storageNote(next));
    }
    const refusal = settings.refuseHop(next, url, response.status);
    if (refusal) throw refusal;
    if (response.status === 303) {
      method = 'GET';
      sendBody = undefined;
    }
    const fromRepo = path ? repoOfPath(path) : undefined;
    const nextPath = next.origin === settings.apiOrigin ? apiPath(next.href, settings.basePath) : undefined;
    const nextRepo = nextPath ? repoOfPath(nextPath) : undefined;
    const movedRepo = nextPath !== undefined && (/^\/repositories\/\d+(?:\/|$)/.test(nextPath) || (nextRepo !== undefined && `${nextRepo.owner}/${nextRepo.repo}`.toLowerCase() !== `${fromRepo?.owner}/${fromRepo?.repo}`.toLowerCase()));
    if (fromRepo && movedRepo) {
      plan.note?.(
        `Note: GitHub redirected ${fromRepo.owner}/${fromRepo.repo} (${response.status}) to ${describeTarget(next, settings)}; the repository was probably renamed or transferred, and what follows comes from there.`,
      );
    }
    settings.log.debug(`${what}: followed a ${response.status} redirect to ${next.origin === settings.apiOrigin ? (apiPath(next.href, settings.basePath) ?? next.pathname) : next.origin}`);
    url = next;
  }

  const responseHeaders: Record<string, string> = {};
  for (const [name, value] of response.headers) responseHeaders[name] = value;
  const status = response.status;
  const answer: GithubResponse = { status, url: response.url || url.href, headers: responseHeaders, data: '' };

  if (status >= 400 || status === 304) {
    answer.data = settings.redactor.redactDeep(await errorBody(response, settings.redactor));
    throw new GithubHttpFailure(status, { method: plan.method, url: url.href }, answer);
  }
  if (status === 204 || status === 205 || plan.method === 'HEAD') {
    await response.body?.cancel().catch(() => undefined);
    return answer;
  }
  if (!plan.parseBody) {
    answer.data = response.body;
    return answer;
  }
  answer.data = await successBody(response, headers.accept ?? '', plan, path, settings);
  return answer;
}

/** "acme/api (/repos/acme/api/issues/1)" for an API URL, the origin for anything else. */
function describeTarget(url: URL, settings: SendSettings): string {
  if (url.origin !== settings.apiOrigin) return `another host (${url.origin})`;
  const path = apiPath(url.href, settings.basePath);
  const repo = path ? repoOfPath(path) : undefined;
  return repo ? `${repo.owner}/${repo.repo} (${path})` : (path ?? url.pathname);
}

/** The bytes of a body, at most `max` of them (undefined when there are more). The call's signal aborts the read. */
async function readCapped(response: Response, max: number): Promise<Buffer | undefined> {
  if (!response.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** An error answer's body: GitHub's JSON when it is JSON, else its text (cut, after tokens are redacted, so a cut cannot halve one). */
async function errorBody(response: Response, redactor: TokenRedactor): Promise<unknown> {
  let bytes: Buffer | undefined;
  try {
    bytes = await readCapped(response, MAX_ERROR_BODY_BYTES);
  } catch {
    return '';
  }
  if (!bytes) return '';
  const text = redactor.redactText(bytes.toString('utf8'));
  try {
    return sanitizeUpstreamJson(JSON.parse(text) as unknown);
  } catch {
    return /^\s*</.test(text) ? '' : sanitizeText(text.slice(0, 1000));
  }
}

function mediaTypeOf(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

const isJsonType = (type: string): boolean => type === 'application/json' || /^application\/[\w.+-]*\+json$/.test(type) || type === 'application/scim+json';

/**
 * What a diff or patch may come as: GitHub's own media types, plain text, or a diff's text types.
 * JSON (an error object or the pull request itself), HTML (a login page) and anything else is not
 * the diff, however it parses.
 */
function isDiffType(type: string): boolean {
  return /^application\/vnd\.github(?:\.[\w-]+)*[.+](?:diff|patch)$/.test(type) || type === 'text/plain' || /^(?:text|application)\/(?:x-)?(?:diff|patch)$/.test(type);
}

/**
 * A 2xx body as the caller expects it: parsed JSON when JSON was asked for (anything else is a
 * failure that says what came instead), text for diffs and other text, bytes otherwise.
 */
async function successBody(response: Response, accept: string, plan: PlannedRequest, path: string | undefined, settings: SendSettings): Promise<unknown> {
  const what = `${plan.method} ${path ?? ''}`.trim();
  const wantsJson = /json/i.test(accept) && !/\.(?:diff|patch|raw|html|text|sha)\b/i.test(accept);
  const type = mediaTypeOf(response);
  const failure = (problem: string): ToolError =>
    reads(plan)
      ? UpstreamError.unreachable(SERVICE, response.status, `${problem}, for ${what}`)
      : writeUncertain(plan.method, path, `GitHub answered ${response.status} with ${problem}`, 'probably');
  let bytes: Buffer | undefined;
  try {
    bytes = await readCapped(response, settings.maxAnswerBytes);
  } catch (error) {
    if (plan.signal?.aborted) throw error;
    const broken = failure(`an answer that was cut off before it was complete (${describeNetworkFailure(error, new URL(plan.url))})`);
    brokenAnswers.add(broken);
    throw broken;
  }
  if (!bytes) {
    const size = formatBytes(settings.maxAnswerBytes);
    throw reads(plan)
      ? new ToolError(`GitHub's answer to ${what} is larger than ${size}, more than this server reads. Narrow the request (fewer items per page, a narrower query or path).`)
      : failure(`an answer larger than ${size}`);
  }
  if (/\.(?:diff|patch)\b/i.test(accept) && !isDiffType(type)) {
    const kind = type === 'text/html' ? 'an HTML page' : isJsonType(type) ? 'JSON' : type ? type : 'a body without a content type';
    throw failure(`${kind} instead of the diff that was asked for`);
  }
  if (wantsJson || isJsonType(type)) {
    if (!isJsonType(type)) {
      const kind = type === 'text/html' ? 'an HTML page' : type ? `${type}` : 'a body without a content type';
      throw failure(`${kind} instead of JSON${bytes.length === 0 ? ' (empty)' : ''}`);
    }
    const text = bytes.toString('utf8');
    if (text.trim() === '') throw failure('an empty body instead of JSON');
    let parsed: unknown;
    try {
      parsed = JSON.parse(text) as unknown;
    } catch (error) {
      settings.log.debug(`${what}: malformed JSON (${bytes.length} bytes): ${error instanceof Error ? error.message : String(error)}`);
      throw failure(`malformed JSON (${bytes.length} bytes)`);
    }
    // Every JSON answer of every tool is cleaned here, once: tokens GitHub echoed, then hidden text.
    const cleaned = sanitizeUpstreamJson(settings.redactor.redactDeep(parsed));
    if (plan.graphql && graphqlRateLimited(cleaned)) {
      // GitHub answers a GraphQL request over its limit with 200 and an error typed RATE_LIMITED: read as the
      // 403 it stands for, so the limit is recorded and the token's GraphQL requests wait for its reset.
      const headers: Record<string, string> = { 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 60) };
      for (const [name, value] of response.headers) headers[name] = value;
      Object.assign(headers, { 'x-ratelimit-remaining': '0', 'x-ratelimit-resource': 'graphql' });
      throw new GithubHttpFailure(403, { method: plan.method, url: plan.url }, { status: 403, url: plan.url, headers, data: { message: 'API rate limit exceeded' } });
    }
    return cleaned;
  }
  if (type.startsWith('text/') || /charset=utf-8/i.test(response.headers.get('content-type') ?? '') || /\.(?:diff|patch)\b/i.test(accept)) {
    return settings.redactor.redactText(bytes.toString('utf8'));
  }
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

/** Whether a GraphQL answer's errors say its rate limit is used up. */
function graphqlRateLimited(data: unknown): boolean {
  const errors = data && typeof data === 'object' ? (data as { errors?: unknown }).errors : undefined;
  return Array.isArray(errors) && errors.some((e) => e !== null && typeof e === 'object' && (e as { type?: unknown }).type === 'RATE_LIMITED');
}

/** A rate-limit answer: which counter, until when, and how to say it (rate-limits.ts bounds every wait). */
function rateLimitOf(error: GithubHttpFailure): RateLimitAnswer | undefined {
  return rateLimitOfAnswer(error.status, error.response.headers, error.response.data, Date.now());
}
