#!/usr/bin/env node
import { z } from 'zod';
import { UsageError, integerFlag, registerSecret, runServer } from '@suite/shared';
import { githubOAuthMode } from './oauth-settings.js';
import { resolveApiUrl } from './api-url.js';
import { DEFAULT_LIMITS, DEFAULT_THROTTLE, TOOLSETS, type GithubConfig, type GithubLimits, type ThrottleSettings } from './config.js';
import { sessionSelection } from './header-selection.js';
import { parseOwnerTokens } from './owner-tokens.js';
import { parseRepoPatterns } from './repo-allowlist.js';
import { checkToken } from './check-token.js';
import { isOwnerName, isRepoName } from './params.js';
import { TOOLS, VERSION, buildServer, checkReadOnlyTools } from './server.js';

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

/** A bearer token worth passing on to GitHub: printable, no spaces, not absurdly short or long. */
function plausibleToken(token: string): boolean {
  return /^[\x21-\x7e]{8,512}$/.test(token);
}

/** A strict partial of a settings object whose fields are all whole numbers (the defaults name the fields). */
function wholeNumbersOf<T extends object>(defaults: T): z.ZodType<Partial<Record<keyof T, number>>> {
  return z.object(Object.fromEntries(Object.keys(defaults).map((key) => [key, z.number().int().nonnegative().optional()]))).strict() as z.ZodType<Partial<Record<keyof T, number>>>;
}

const TUNING = z.object({ throttle: wholeNumbersOf(DEFAULT_THROTTLE).optional(), limits: wholeNumbersOf(DEFAULT_LIMITS).optional() }).strict();

/**
 * SUITE_GITHUB_TEST_TUNING (JSON: `{"throttle": {...}, "limits": {...}}`, fields of ThrottleSettings
 * and GithubLimits): a test seam, like shared's SUITE_WATCH_FAULT, not a setting. The tests run
 * the built bin with the write spacing and retry back-off shrunk, and caps lowered, exactly as
 * they configure the in-process server; without it every scenario over stdio would wait out
 * GitHub's politeness delays. Anything malformed stops the server, so a typo cannot pass unseen.
 */
function testTuning(): { throttle: Partial<ThrottleSettings>; limits: Partial<GithubLimits> } {
  const raw = process.env.SUITE_GITHUB_TEST_TUNING;
  if (raw === undefined || raw.trim() === '') return { throttle: {}, limits: {} };
  let parsed: z.output<typeof TUNING>;
  try {
    parsed = TUNING.parse(JSON.parse(raw));
  } catch {
    throw new UsageError('SUITE_GITHUB_TEST_TUNING must be JSON {"throttle": {...}, "limits": {...}} with whole numbers for known fields (a test seam; leave it unset).');
  }
  return { throttle: parsed.throttle ?? {}, limits: parsed.limits ?? {} };
}

await runServer({
  bin: 'mcp-server-github',
  packageName: '@suite/server-github',
  version: VERSION,
  description: 'GitHub for models: repositories, issues, pull requests, Actions and notifications, with toolsets, read-only mode, a repository allowlist and prompt-injection hygiene',
  usage: '[--toolsets LIST] [--read-only] [--repos owner/repo,owner/*] [--lockdown] [--github-host HOST | --api-url URL]',
  writes: 'writes',
  toolsets: TOOLSETS,
  sessionCredentials: true,
  envPrefix: 'GITHUB',
  flags: {
    repos: { type: 'string', valueName: 'LIST', description: 'Only these repositories (owner/repo, owner/*; comma-separated); everything else is refused (or GITHUB_REPOS).' },
    lockdown: { type: 'boolean', description: 'On public repositories, show only content by users with push access (or GITHUB_LOCKDOWN_MODE=1).' },
    'github-host': { type: 'string', valueName: 'HOST', description: 'github.com (default), NAME.ghe.com or a GitHub Enterprise Server host (or GITHUB_HOST).' },
    'api-url': { type: 'string', valueName: 'URL', description: 'The REST API base URL itself, e.g. https://ghe.example.com/api/v3 (or GITHUB_API_URL).' },
    'allow-env-token-fallback': {
      type: 'boolean',
      description: 'Over HTTP, let a session without a bearer token use GITHUB_PERSONAL_ACCESS_TOKEN (default: such requests get 401).',
    },
    'token-for': {
      type: 'string',
      multiple: true,
      valueName: 'OWNER=ENV_VAR',
      description: 'Requests for repositories of OWNER use the token in ENV_VAR (repeatable; or GITHUB_TOKEN_FOR="owner=VAR,owner2=VAR2"); everything else uses GITHUB_PERSONAL_ACCESS_TOKEN.',
    },
    'check-token': { type: 'boolean', description: 'Print which tools the token (and each --token-for token) can use, then exit.' },
    'check-repo': { type: 'string', valueName: 'OWNER/REPO', description: "With --check-token: probe a fine-grained token's read permissions on this repository." },
    'github-oauth-client-id': {
      type: 'string',
      valueName: 'ID',
      description: 'OAuth mode: the GitHub OAuth app this server signs users in with (or GITHUB_OAUTH_CLIENT_ID; its secret in GITHUB_OAUTH_CLIENT_SECRET).',
    },
    'token-encryption-key-file': {
      type: 'string',
      valueName: 'FILE',
      description: 'OAuth mode: the key (32+ bytes) sealing users\' GitHub tokens at rest (or GITHUB_TOKEN_ENCRYPTION_KEY); required with --redis-url.',
    },
    'request-timeout': { type: 'string', valueName: 'SECONDS', description: `Time budget of one tool call, retries included (default ${DEFAULT_THROTTLE.requestTimeoutMs / 1000}).` },
  },
  environment: [
    {
      name: 'GITHUB_PERSONAL_ACCESS_TOKEN',
      description: 'The token every request uses (over HTTP each client sends its own as a bearer token; this one only with --allow-env-token-fallback). GITHUB_TOKEN is read too.',
    },
    { name: 'GITHUB_HOST, GITHUB_API_URL', description: 'Where GitHub is, as --github-host and --api-url (https required except on loopback).' },
    { name: 'GITHUB_TOOLSETS, GITHUB_TOOLS', description: 'As --toolsets and --tools.' },
    { name: 'GITHUB_READ_ONLY, GITHUB_DYNAMIC_TOOLSETS', description: 'Set to 1 for --read-only and --dynamic-toolsets.' },
    { name: 'GITHUB_REPOS, GITHUB_LOCKDOWN_MODE', description: 'As --repos and --lockdown.' },
    { name: 'GITHUB_TOKEN_FOR', description: 'As --token-for, comma-separated: owner=VAR,owner2=VAR2 (the flags win).' },
    { name: 'GITHUB_OAUTH_CLIENT_ID, GITHUB_OAUTH_CLIENT_SECRET', description: 'OAuth mode (--auth-issuer): the GitHub OAuth app; its callback URL is the origin of --public-url + /oauth/callback/github.' },
    { name: 'GITHUB_OAUTH_SCOPES', description: 'OAuth mode: the GitHub scopes asked of each user (default "repo read:org notifications"; "public_repo read:org notifications" with --read-only).' },
    { name: 'GITHUB_TOKEN_ENCRYPTION_KEY', description: 'As --token-encryption-key-file, the key itself.' },
  ],
  examples: [
    'GITHUB_PERSONAL_ACCESS_TOKEN=github_pat_... mcp-server-github',
    'mcp-server-github --toolsets repos,issues --read-only',
    'mcp-server-github --repos my-org/*,me/dotfiles --lockdown',
    'mcp-server-github --check-token --check-repo my-org/app   # which tools the token can use',
    'mcp-server-github --github-host ghe.example.com',
    'WORK_TOKEN=github_pat_... mcp-server-github --token-for my-employer=WORK_TOKEN   # one token per owner',
    'mcp-server-github --http --port 8080 --host 0.0.0.0 --allowed-host mcp.example.com   # each client sends its own token',
    'GITHUB_OAUTH_CLIENT_ID=... GITHUB_OAUTH_CLIENT_SECRET=... mcp-server-github --http --auth-issuer https://auth.example.com --public-url https://mcp.example.com/mcp',
  ],
  async prepare({ flags, selection, http }, log) {
    const envToken = process.env.GITHUB_PERSONAL_ACCESS_TOKEN?.trim() || process.env.GITHUB_TOKEN?.trim() || undefined;
    registerSecret(envToken);
    const apiUrl = resolveApiUrl({ apiUrl: flags['api-url'] ?? process.env.GITHUB_API_URL, host: flags['github-host'] ?? process.env.GITHUB_HOST });
    const reposValue = flags.repos ?? process.env.GITHUB_REPOS;
    const timeoutSeconds = integerFlag(flags['request-timeout'], 'request-timeout', DEFAULT_THROTTLE.requestTimeoutMs / 1000, { min: 1, max: 600 });
    const tuning = testTuning();
    const ownerTokens = parseOwnerTokens(flags['token-for'] ?? (process.env.GITHUB_TOKEN_FOR ? [process.env.GITHUB_TOKEN_FOR] : []), process.env);
    for (const secret of Object.values(ownerTokens)) registerSecret(secret);
    const authorizations = await githubOAuthMode({ flags, http, apiUrl, readOnly: selection.readOnly === true, log });
    // In OAuth mode every call acts as its signed-in user: the operator's token acts for no one.
    if (authorizations && envToken) log.warning('OAuth mode: GITHUB_PERSONAL_ACCESS_TOKEN is ignored; each user authorizes GitHub for themselves.');
    const token = authorizations ? undefined : envToken;
    if (authorizations && Object.keys(ownerTokens).length > 0) {
      throw new UsageError('--token-for (GITHUB_TOKEN_FOR) does not apply in OAuth mode: each user acts with the GitHub authorization they gave. Leave it out, or serve without --auth-issuer.');
    }
    const config: GithubConfig = {
      apiUrl,
      token,
      ...(Object.keys(ownerTokens).length > 0 ? { ownerTokens } : {}),
      repos: reposValue !== undefined && reposValue.trim() !== '' ? parseRepoPatterns(reposValue) : undefined,
      lockdown: flags.lockdown === true || truthy(process.env.GITHUB_LOCKDOWN_MODE),
      limits: { ...DEFAULT_LIMITS, ...tuning.limits },
      throttle: { ...DEFAULT_THROTTLE, requestTimeoutMs: timeoutSeconds * 1000, ...tuning.throttle },
      userAgent: `suite-mcp-server-github/${VERSION}`,
      ...(authorizations ? { authorizations } : {}),
    };
    if (flags['check-repo'] !== undefined && flags['check-token'] !== true) throw new UsageError('--check-repo only applies with --check-token.');
    if (flags['check-token'] === true) {
      const [owner = '', name = '', ...rest] = (flags['check-repo'] ?? '').split('/');
      if (flags['check-repo'] !== undefined && (rest.length > 0 || !isOwnerName(owner) || !isRepoName(name))) throw new UsageError('--check-repo takes OWNER/REPO.');
      process.stdout.write(await checkToken(config, TOOLS, log, flags['check-repo'] !== undefined ? { owner, repo: name } : undefined));
      process.exit(0);
    }
    const fallback = flags['allow-env-token-fallback'] === true;
    if (fallback && authorizations) throw new UsageError('--allow-env-token-fallback does not apply in OAuth mode (--auth-issuer): each user authorizes GitHub for themselves.');
    if (fallback && !token) throw new UsageError('--allow-env-token-fallback needs GITHUB_PERSONAL_ACCESS_TOKEN (or GITHUB_TOKEN) to be set.');
    if (Object.keys(ownerTokens).length > 0) log.info(`Own tokens for ${Object.keys(ownerTokens).length} owners: ${Object.keys(ownerTokens).join(', ')}`);
    if (!token && !authorizations) log.warning('No GITHUB_PERSONAL_ACCESS_TOKEN: requests are unauthenticated (public data only, 60 requests per hour) unless an HTTP client sends its own token.');
    checkReadOnlyTools(config, selection, log);
    log.info(`GitHub API at ${apiUrl}${config.repos ? `, repositories limited to ${config.repos.length} entries` : ''}${config.lockdown ? ', lockdown mode' : ''}`);
    return {
      // Over HTTP a client may narrow its session's tools by header (X-MCP-Toolsets, X-MCP-Tools, X-MCP-Readonly).
      createSession: (session) => buildServer(config, session.transport === 'stdio' ? selection : sessionSelection(config, selection, session), session),
      // Without OAuth mode, over HTTP every session acts with the token its client sent; the
      // operator's token only stands in when they said so. In OAuth mode shared checks the MCP token
      // and GitHub's callback comes to our own route.
      ...(authorizations
        ? { routes: [authorizations.route()] }
        : {
            authenticate: (bearer: string | undefined) => {
              if (bearer !== undefined) return plausibleToken(bearer) ? { token: bearer, clientId: 'bearer' } : null;
              return fallback && token ? { token, clientId: 'environment' } : null;
            },
          }),
    };
  },
});
