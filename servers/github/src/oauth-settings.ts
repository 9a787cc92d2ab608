import { hkdfSync, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { UsageError, registerSecret, type HttpServiceInfo, type Logger } from '@suite/shared';
import { CALLBACK_PATH, GithubAuthorizations, webUrlOf } from './github-oauth.js';

interface OAuthFlags {
  'github-oauth-client-id'?: string | undefined;
  'token-encryption-key-file'?: string | undefined;
}

/**
 * OAuth mode's GitHub side, from the flags and environment: the OAuth app, the key sealing users'
 * tokens and where they are kept. Undefined when the server is not in OAuth mode (stdio, static
 * or per-user bearer tokens over HTTP); then none of these settings may be given.
 */
export async function githubOAuthMode(options: { flags: OAuthFlags; http: HttpServiceInfo | undefined; apiUrl: string; readOnly: boolean; log: Logger }): Promise<GithubAuthorizations | undefined> {
  const { flags, http, apiUrl, readOnly, log } = options;
  const clientId = nonEmpty(flags['github-oauth-client-id'] ?? process.env.GITHUB_OAUTH_CLIENT_ID);
  const keyFile = flags['token-encryption-key-file'];
  const publicUrl = http?.oauthPublicUrl;
  if (publicUrl === undefined) {
    if (flags['github-oauth-client-id'] !== undefined || keyFile !== undefined) {
      throw new UsageError('--github-oauth-client-id and --token-encryption-key-file belong to OAuth mode: give --http --auth-issuer and --public-url too.');
    }
    return undefined;
  }
  const clientSecret = nonEmpty(process.env.GITHUB_OAUTH_CLIENT_SECRET);
  if (clientId === undefined || clientSecret === undefined) {
    throw new UsageError('OAuth mode needs a GitHub OAuth app: its id in --github-oauth-client-id (GITHUB_OAUTH_CLIENT_ID) and its secret in GITHUB_OAUTH_CLIENT_SECRET. Register its callback URL as the origin of --public-url + /oauth/callback/github.');
  }
  registerSecret(clientSecret);
  const key = await encryptionKey(keyFile);
  if (key === undefined && http!.replicated) {
    throw new UsageError('With --redis-url, every replica must seal users\' GitHub tokens with the same key: give --token-encryption-key-file (or GITHUB_TOKEN_ENCRYPTION_KEY), 32 bytes or more.');
  }
  const callbackUrl = new URL(CALLBACK_PATH, publicUrl).toString();
  const scopes = nonEmpty(process.env.GITHUB_OAUTH_SCOPES) ?? (readOnly ? 'public_repo read:org notifications' : 'repo read:org notifications');
  // SUITE_GITHUB_TEST_SIGN_IN_WAIT_MS: a test seam like SUITE_GITHUB_TEST_TUNING, not a setting: how long a call waits
  // for the user to finish at GitHub (default 120 s). Anything malformed stops the server.
  const wait = process.env.SUITE_GITHUB_TEST_SIGN_IN_WAIT_MS;
  if (wait !== undefined && wait !== '' && !/^\d{1,7}$/.test(wait)) throw new UsageError('SUITE_GITHUB_TEST_SIGN_IN_WAIT_MS must be whole milliseconds (a test seam; leave it unset).');
  const authorizations = new GithubAuthorizations(
    { clientId, clientSecret, webUrl: webUrlOf(apiUrl), callbackUrl, scopes, ...(wait ? { signInWaitMs: Number(wait) } : {}) },
    http!.secretStore('github-oauth', key ?? randomBytes(32)),
    log.child('github-oauth'),
  );
  log.info(`OAuth mode: users authorize GitHub (${scopes}) through ${callbackUrl}; their tokens are kept ${http!.replicated ? 'in Redis' : 'in this process'}, sealed with AES-256-GCM${key === undefined ? ' under a random per-process key' : ''}`);
  return authorizations;
}

/** The sealing key: HKDF-SHA-256 of the operator's secret (32 bytes or more), from the file or GITHUB_TOKEN_ENCRYPTION_KEY. */
async function encryptionKey(file: string | undefined): Promise<Buffer | undefined> {
  let secret = process.env.GITHUB_TOKEN_ENCRYPTION_KEY;
  if (file !== undefined) {
    try {
      secret = (await readFile(file, 'utf8')).trim();
    } catch (error) {
      throw new UsageError(`--token-encryption-key-file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }
  if (secret === undefined || secret.trim() === '') return undefined;
  if (Buffer.byteLength(secret, 'utf8') < 32) throw new UsageError('The token encryption key (--token-encryption-key-file or GITHUB_TOKEN_ENCRYPTION_KEY) must be at least 32 bytes long.');
  registerSecret(secret);
  return Buffer.from(hkdfSync('sha256', Buffer.from(secret, 'utf8'), Buffer.alloc(0), 'suite github oauth tokens v1', 32));
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}
