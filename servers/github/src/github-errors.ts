import { CancelledError, ToolError, UpstreamError } from '@suite/shared';
import { failedGraphqlTarget } from './graphql-target.js';
import { rateLimitOfAnswer } from './rate-limits.js';
import { sanitizeLine } from './sanitize.js';

export const SERVICE = 'GitHub';

/** GitHub answered with an error status (built by github-request.ts; read through the duck-typed GithubHttpError). */
export class GithubHttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly request: { method: string; url: string },
    readonly response: { status: number; url: string; headers: Record<string, string>; data: unknown },
  ) {
    super(`GitHub answered ${status}`);
    this.name = 'HttpError';
  }
}

/** A request that got no answer at all (github-request.ts throws it; githubFailure words it). */
export class NetworkFailure extends Error {
  constructor(
    override readonly cause: unknown,
    readonly target: URL,
  ) {
    super('no answer');
    this.name = 'NetworkFailure';
  }
}

/** The system error code behind a failed fetch (undici wraps it: TypeError -> cause -> code, or an AggregateError of attempts). */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    const record = current as { code?: unknown; cause?: unknown; errors?: unknown[]; name?: unknown; message?: unknown };
    if (typeof record.code === 'string' && record.code !== 'ERR_INVALID_STATE') return record.code;
    if (Array.isArray(record.errors) && record.errors.length > 0) {
      current = record.errors[0];
      continue;
    }
    if (record.cause === undefined) {
      if (record.name === 'TimeoutError' || record.name === 'AbortError') return 'ETIMEDOUT';
      if (typeof record.message === 'string' && /terminated|other side closed|socket/i.test(record.message)) return 'ECONNRESET';
      return undefined;
    }
    current = record.cause;
  }
  return undefined;
}

const NOT_SENT = /^(?:ENOTFOUND|EAI_AGAIN|EAI_NONAME|ECONNREFUSED|ENETUNREACH|EHOSTUNREACH|UND_ERR_CONNECT_TIMEOUT|CERT_\w+|ERR_TLS_\w+|UNABLE_TO_\w+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_SSL_\w+)$/;

const DEFINITIVE = /^(?:ENOTFOUND|EAI_NONAME|ECONNREFUSED|CERT_\w+|ERR_TLS_\w+|UNABLE_TO_\w+|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_SSL_\w+)$/;

/** Whether trying again at once can help: not for a name that does not resolve, a refused connection or a certificate that fails. */
export function worthRetrying(error: unknown): boolean {
  const code = networkCode(error);
  return code === undefined || !DEFINITIVE.test(code);
}

/** Whether a request that failed this way may have reached GitHub (false: the connection was never made). */
export function mayHaveBeenSent(error: unknown): boolean {
  const code = networkCode(error);
  return code === undefined || !NOT_SENT.test(code);
}

/** Why a request got no answer, in words a person can act on, naming the host it went to. */
export function describeNetworkFailure(error: unknown, target: URL): string {
  const code = networkCode(error);
  const host = target.host;
  if (!code) return 'the connection failed';
  if (/^(?:ENOTFOUND|EAI_NONAME)$/.test(code)) return `the host name ${target.hostname} could not be resolved (${code}): check the API URL or GITHUB_HOST, and this machine's DNS`;
  if (code === 'EAI_AGAIN') return `the host name ${target.hostname} could not be resolved right now (${code}): the DNS server did not answer; check this machine's network`;
  if (code === 'ECONNREFUSED') return `${host} refused the connection (${code}): nothing accepts connections there; check the API URL and any proxy`;
  if (/^(?:ENETUNREACH|EHOSTUNREACH)$/.test(code)) return `${host} is unreachable from this machine (${code}): check its network connection`;
  if (/^(?:ETIMEDOUT|UND_ERR_CONNECT_TIMEOUT|UND_ERR_HEADERS_TIMEOUT|UND_ERR_BODY_TIMEOUT)$/.test(code)) return `${host} did not answer in time (${code})`;
  if (/^(?:CERT_|ERR_TLS_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_SSL_)/.test(code)) {
    return `the TLS connection to ${host} failed (${code}): its certificate could not be verified; for a private certificate authority, set NODE_EXTRA_CA_CERTS`;
  }
  if (/^(?:ECONNRESET|EPIPE|UND_ERR_SOCKET|UND_ERR_CLOSED|ECONNABORTED)$/.test(code)) return `the connection to ${host} was closed before the answer was complete (${code})`;
  return `the connection to ${host} failed (${code})`;
}

/** Which tool shows whether a write went through. */
function howToCheck(path: string | undefined): string {
  const rest = (path ? repoOfPath(path)?.rest : undefined) ?? '';
  const checks: [RegExp, string][] = [
    [/^\/issues\/\d+\/comments$/, 'list_issue_comments shows whether the comment is there'],
    [/^\/issues\/\d+$/, 'get_issue shows the issue as it is now'],
    [/^\/issues$/, 'list_issues (newest first) shows whether the issue was created'],
    [/^\/pulls\/\d+\/reviews$/, 'get_pull_request_reviews shows whether the review is there'],
    [/^\/pulls\/\d+\/(?:merge|update-branch)$/, 'get_pull_request shows its state now'],
    [/^\/pulls$/, 'list_pull_requests shows whether the pull request was created'],
    [/^\/contents\//, 'get_file_contents shows the file as it is now'],
    [/^\/git\//, 'list_commits and list_branches show where the branch is now'],
    [/^\/forks$/, 'search_repositories shows whether the fork exists'],
  ];
  for (const [pattern, check] of checks) if (pattern.test(rest)) return check;
  if (path === '/user/repos' || /^\/orgs\/[^/]+\/repos$/.test(path ?? '')) return 'search_repositories shows whether the repository exists';
  return 'look at the repository on GitHub';
}

/**
 * A write whose outcome is unknown: it may have reached GitHub, so it is not repeated (a second
 * issue or comment would be worse than a failure the model can check).
 */
export function writeUncertain(method: string, path: string | undefined, what: string, likelihood: 'may' | 'probably' = 'may'): UpstreamError {
  const request = `${method} ${path ?? ''}`.trim();
  const message =
    likelihood === 'probably'
      ? `${what} to the write ${request}: the change was probably made, but its result could not be read. It was not repeated. Check before trying again: ${howToCheck(path)}.`
      : `GitHub did not confirm the write ${request} (${what}): it may or may not have been made, so it was not repeated. Check before trying again: ${howToCheck(path)}.`;
  return new UpstreamError(message, 'unavailable');
}

/** The part of Octokit's RequestError this module reads (duck-typed: the class is Octokit's internal). */
export interface GithubHttpError {
  name: string;
  status: number;
  message: string;
  request: { method: string; url: string };
  response?: { status: number; headers: Record<string, string | undefined>; data: unknown };
  cause?: unknown;
}

export function isGithubHttpError(error: unknown): error is GithubHttpError {
  return (
    error instanceof Error &&
    typeof (error as Partial<GithubHttpError>).status === 'number' &&
    typeof (error as Partial<GithubHttpError>).request === 'object' &&
    (error as Partial<GithubHttpError>).request !== null
  );
}

/** GitHub's status for a failed request, or undefined for anything that is not an HTTP answer. */
export function httpStatus(error: unknown): number | undefined {
  return isGithubHttpError(error) && error.response ? error.status : undefined;
}

/** What a failure is mapped with: the tool's permission, for the hint on a 403. */
export interface FailureContext {
  /** The fine-grained permission the call needs, e.g. "Issues: write". */
  permission: string;
  /** The classic token scope it needs (`repo`, `notifications`, `none`). */
  scope?: string;
  /** The REST API base path ("" for api.github.com, "/api/v3" for GitHub Enterprise Server). */
  basePath: string;
  /** Whether this session has any token. */
  authenticated: boolean;
  /** Owners (lower-cased) whose requests carry their own token (--token-for). */
  ownersWithTokens?: ReadonlySet<string>;
  /** The call was cancelled by the client. */
  cancelled: boolean;
  /** The call ran out of its time budget (in ms), if it did. */
  timedOutAfterMs: number | undefined;
}

/** `/repos/OWNER/REPO/rest` of a request URL, percent-decoded. */
export function repoOfPath(pathname: string): { owner: string; repo: string; rest: string } | undefined {
  const m = /^\/repos\/([^/]+)\/([^/]+)(\/.*)?$/.exec(pathname);
  if (!m) return undefined;
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s);
    } catch {
      return s;
    }
  };
  return { owner: decode(m[1]!), repo: decode(m[2]!), rest: decode(m[3] ?? '') };
}

/** The request's path below the API base (`/repos/...`), or undefined when the URL is not GitHub's. */
export function apiPath(url: string, basePath: string): string | undefined {
  try {
    const { pathname } = new URL(url);
    if (basePath && !pathname.startsWith(`${basePath}/`)) return undefined;
    return pathname.slice(basePath.length) || '/';
  } catch {
    return undefined;
  }
}

/** The resource a path names, in words, for "not found" messages. */
const RESOURCES: [RegExp, (m: RegExpExecArray) => string][] = [
  [/^\/issues\/(\d+)\/comments$/, (m) => `issue #${m[1]}`],
  [/^\/issues\/(\d+)(?:\/.*)?$/, (m) => `issue #${m[1]}`],
  [/^\/pulls\/(\d+)(?:\/.*)?$/, (m) => `pull request #${m[1]}`],
  [/^\/contents\/(.+)$/, (m) => `the path ${m[1]}`],
  [/^\/contents\/?$/, () => 'the repository root'],
  [/^\/git\/ref(?:s)?\/heads\/(.+)$/, (m) => `the branch ${m[1]}`],
  [/^\/git\/ref(?:s)?\/tags\/(.+)$/, (m) => `the tag ${m[1]}`],
  [/^\/branches\/(.+)$/, (m) => `the branch ${m[1]}`],
  [/^\/commits\/([^/]+)(?:\/.*)?$/, (m) => `the commit or ref ${m[1]}`],
  [/^\/git\/commits\/([^/]+)$/, (m) => `the commit ${m[1]}`],
  [/^\/releases\/latest$/, () => 'a published release'],
  [/^\/releases\/tags\/(.+)$/, (m) => `the release ${m[1]}`],
  [/^\/actions\/runs\/(\d+)(?:\/.*)?$/, (m) => `workflow run ${m[1]}`],
  [/^\/actions\/jobs\/(\d+)(?:\/.*)?$/, (m) => `job ${m[1]}`],
  [/^\/actions\/workflows\/([^/]+)(?:\/.*)?$/, (m) => `the workflow ${m[1]}`],
  [/^\/labels\/(.+)$/, (m) => `the label ${m[1]}`],
];

function describeNotFound(path: string | undefined): string {
  const repo = path ? repoOfPath(path) : undefined;
  if (!repo) {
    const user = path ? /^\/(?:users|orgs)\/([^/]+)/.exec(path) : null;
    if (user) return `The user or organization ${user[1]} was not found.`;
    return 'GitHub answered 404 Not Found: it does not exist, or the token cannot see it.';
  }
  const name = `${repo.owner}/${repo.repo}`;
  for (const [pattern, describe] of RESOURCES) {
    const m = pattern.exec(repo.rest);
    if (m) return `Not found: ${describe(m)} in ${name}. Either it does not exist, or ${name} itself does not exist or is private and the token has no access to it (GitHub answers 404 then). Check the names.`;
  }
  return `The repository ${name} was not found, or it is private and the token has no access to it (GitHub answers 404 then). Check the owner and repo names.`;
}

function bodyOf(error: GithubHttpError): { message?: string; errors?: unknown[] } {
  const data = error.response?.data;
  if (data && typeof data === 'object') return data as { message?: string; errors?: unknown[] };
  return typeof data === 'string' && data.trim() ? { message: data } : {};
}

/** GitHub's `errors` array of a 422, as one readable line ("title: missing_field; ..."). */
function validationDetails(errors: unknown[] | undefined): string {
  if (!errors?.length) return '';
  return errors
    .slice(0, 10)
    .map((e) => {
      if (typeof e === 'string') return e;
      if (!e || typeof e !== 'object') return String(e);
      const { resource, field, code, message, value } = e as Record<string, unknown>;
      if (typeof message === 'string' && message) return field ? `${String(field)}: ${message}` : message;
      const where = [resource, field].filter((x) => typeof x === 'string' && x).join('.');
      const what = code === 'missing_field' ? 'is required' : code === 'already_exists' ? 'already exists' : code === 'invalid' ? `is invalid${value !== undefined ? ` (${JSON.stringify(value)})` : ''}` : String(code ?? 'is invalid');
      return `${where || 'request'} ${what}`;
    })
    .join('; ');
}

/** "issues=write,pull_requests=read" -> "Issues: write, Pull requests: read". */
function formatPermissions(header: string): string {
  return header
    .split(/[,;]\s*/)
    .filter(Boolean)
    .map((p) => {
      const [name = '', level = ''] = p.split('=');
      const words = name.replace(/_/g, ' ');
      return `${words.charAt(0).toUpperCase()}${words.slice(1)}${level ? `: ${level}` : ''}`;
    })
    .join(', ');
}

/** A rate-limit answer in words, read as the request layer reads it (rate-limits.ts: every wait bounded). */
function rateLimitFailure(error: GithubHttpError): UpstreamError | undefined {
  const now = Date.now();
  const headers = Object.fromEntries(Object.entries(error.response?.headers ?? {}).map(([name, value]) => [name, value === undefined ? undefined : String(value)]));
  const limited = rateLimitOfAnswer(error.status, headers, error.response?.data, now);
  return limited ? UpstreamError.rateLimited(SERVICE, Math.max(1, (limited.until - now) / 1000), limited.detail) : undefined;
}

function accessDenied(error: GithubHttpError, context: FailureContext, target: string | undefined): ToolError {
  const headers = error.response?.headers ?? {};
  const message = sanitizeLine(bodyOf(error).message ?? 'Forbidden').replace(/[.\s]+$/, '');
  const accepted = headers['x-accepted-github-permissions'];
  const acceptedScopes = headers['x-accepted-oauth-scopes'];
  const grantedScopes = headers['x-oauth-scopes'];
  let hint: string;
  if (accepted) hint = `The token needs ${formatPermissions(accepted)} on ${target ?? 'the resource'}.`;
  else if (acceptedScopes) hint = `The token needs the ${acceptedScopes} scope${grantedScopes !== undefined ? ` (it has: ${grantedScopes || 'none'})` : ''}.`;
  else hint = `A fine-grained token needs "${context.permission}" on ${target ?? 'the repository'}; a classic token needs the ${context.scope && context.scope !== 'none' ? context.scope : 'repo'} scope.`;
  return ToolError.accessDenied(`GitHub denied access${target ? ` to ${target}` : ''} (403: ${message}). ${hint}`);
}

/** What Octokit's GraphqlResponseError carries: GitHub answered 200 with an `errors` array. */
interface GraphqlErrors {
  name: 'GraphqlResponseError';
  errors: { type?: unknown; message?: unknown }[];
  headers: Record<string, string | undefined>;
}

function isGraphqlErrors(error: unknown): error is GraphqlErrors {
  return error instanceof Error && error.name === 'GraphqlResponseError' && Array.isArray((error as Partial<GraphqlErrors>).errors);
}

/**
 * GraphQL's own failures, which GitHub answers with 200: FORBIDDEN names the permission as a 403
 * does, NOT_FOUND says what to check; anything else is GitHub's words. (RATE_LIMITED is read as the
 * 403 it stands for by the request layer, which records the limit: github-request.ts.)
 */
function graphqlFailure(error: GraphqlErrors, context: FailureContext): ToolError {
  const target = failedGraphqlTarget(error);
  const types = new Set(error.errors.map((e) => (typeof e.type === 'string' ? e.type : '')));
  const messages = error.errors
    .slice(0, 3)
    .map((e) => sanitizeLine(typeof e.message === 'string' ? e.message : '').replace(/[.\s]+$/, ''))
    .filter(Boolean)
    .join('; ');
  if (types.has('FORBIDDEN')) {
    const scope = context.scope && context.scope !== 'none' ? context.scope : 'repo';
    return ToolError.accessDenied(`GitHub denied access${target ? ` to ${target}` : ''} (${messages || 'Forbidden'}). A fine-grained token needs "${context.permission}" on ${target ?? 'the repository'}; a classic token needs the ${scope} scope.`);
  }
  if (types.has('NOT_FOUND')) {
    return ToolError.notFound(`Not found${target ? ` in ${target}` : ''}: ${messages || 'GitHub found nothing'}. It does not exist, or the repository is private and the token has no access to it. Check the names and numbers.`);
  }
  return ToolError.invalidArgument(`GitHub rejected the request: ${messages || 'GraphQL errors without a message'}.`);
}

/**
 * Turns whatever a GitHub call threw into what the model should read: an UpstreamError when GitHub
 * is busy, down or slow (with when to retry), a ToolError naming what to fix otherwise. Never a
 * stack trace; tokens are redacted by the shared layer on the way out. Errors that are neither
 * (a bug) are returned as they are, for the generic message with an error id.
 */
export function githubFailure(error: unknown, context: FailureContext): unknown {
  if (error instanceof ToolError || error instanceof CancelledError) return error;
  if (context.cancelled) return new CancelledError();
  if (context.timedOutAfterMs !== undefined) return UpstreamError.timedOut(SERVICE, context.timedOutAfterMs);
  if (error instanceof NetworkFailure) {
    const detail = describeNetworkFailure(error.cause, error.target);
    const lasting = !mayHaveBeenSent(error.cause);
    return new UpstreamError(
      `GitHub could not be reached: ${detail}.${lasting ? ' This is not a problem with your request.' : ' This is not a problem with your request; try again in a few seconds.'}`,
      'unavailable',
    );
  }
  if (isGraphqlErrors(error)) return graphqlFailure(error, context);
  if (!isGithubHttpError(error)) return error;
  if (!error.response) return UpstreamError.unreachable(SERVICE);
  const path = apiPath(error.request.url, context.basePath);
  const repo = path ? repoOfPath(path) : undefined;
  const target = repo ? `${repo.owner}/${repo.repo}` : failedGraphqlTarget(error);
  // GitHub's sentences end with a period or not; ours add their own punctuation.
  const message = sanitizeLine(bodyOf(error).message ?? '').replace(/[.\s]+$/, '');
  const status = error.status;
  if (status === 403 || status === 429) {
    const limited = rateLimitFailure(error);
    if (limited) return limited;
  }
  switch (status) {
    case 401:
      if (repo && context.ownersWithTokens?.has(repo.owner.toLowerCase())) {
        return ToolError.accessDenied(`GitHub rejected the token configured for ${repo.owner} (401 ${message || 'Bad credentials'}): it is wrong, expired or revoked. Ask the operator to renew the token they set for ${repo.owner} with --token-for.`);
      }
      return ToolError.accessDenied(
        context.authenticated || (context.ownersWithTokens?.size ?? 0) > 0
          ? `GitHub rejected the token (401 ${message || 'Bad credentials'}): it is wrong, expired or revoked. Set a valid GITHUB_PERSONAL_ACCESS_TOKEN (over HTTP: send a valid token as this session's bearer token).`
          : 'GitHub requires authentication for this request (401). Set GITHUB_PERSONAL_ACCESS_TOKEN (over HTTP: send a token as the bearer token).',
      );
    case 403:
      return accessDenied(error, context, target);
    case 404:
      return ToolError.notFound(describeNotFound(path));
    case 410:
      return ToolError.notFound(`GitHub answered 410 Gone${target ? ` for ${target}` : ''}: ${message || 'the resource is gone'} (for example, issues are disabled on the repository).`);
    case 405:
    case 409:
      return ToolError.conflict(`GitHub refused: ${message || 'conflict'}${target ? ` (${target})` : ''}.`);
    case 400:
    case 422: {
      const details = validationDetails(bodyOf(error).errors);
      return ToolError.invalidArgument(`GitHub rejected the request as invalid: ${message || 'Validation Failed'}${details ? `: ${sanitizeLine(details).replace(/[.\s]+$/, '')}` : ''}.`);
    }
    case 451:
      return ToolError.accessDenied(`GitHub blocks this content for legal reasons (451)${target ? ` (${target})` : ''}.`);
  }
  if (status >= 500) return UpstreamError.unreachable(SERVICE, status);
  return new ToolError(`GitHub answered ${status}${message ? `: ${message}` : ''}.`);
}
