import { createHash, randomBytes } from 'node:crypto';
import type http from 'node:http';
import { SecretStoreUnavailable, ToolError, type HttpRoute, type Logger, type RequestContext, type SecretStore } from '@suite/shared';

/** Where GitHub's callback reaches this server (at the origin of --public-url). */
export const CALLBACK_PATH = '/oauth/callback/github';

/** How long a sign-in link stays valid. */
const STATE_TTL_SECONDS = 600;
/** How long a token without an expiry (an OAuth app's) is kept; the user is asked again after. */
const TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** How long a call waits, once the user agreed to open the link, for them to finish at GitHub. */
export const DEFAULT_SIGN_IN_WAIT_MS = 120_000;

export interface GithubOAuthSettings {
  clientId: string;
  clientSecret: string;
  /** GitHub's web origin (https://github.com, https://HOST for Enterprise Server): /login/oauth/* lives there. */
  webUrl: string;
  /** The absolute callback URL registered with the OAuth app. */
  callbackUrl: string;
  /** The GitHub scopes asked for (space-separated). */
  scopes: string;
  /** How long a tool call waits for the user to finish signing in (default 120 s). */
  signInWaitMs?: number;
}

/** What the store keeps for one sign-in in progress: whose it is and the PKCE verifier. */
interface PendingSignIn {
  principal: string;
  verifier: string;
}

/**
 * The server as an OAuth client of GitHub, in OAuth mode: each principal (issuer, subject, client)
 * authorizes GitHub once, through a link a tool call hands the user (URL-mode elicitation), and
 * the server keeps the resulting GitHub token sealed in the store (secret-store.ts), keyed by the
 * principal's digest. No GitHub token is ever taken from, or given to, the MCP client.
 */
export class GithubAuthorizations {
  private readonly waitMs: number;

  constructor(
    readonly settings: GithubOAuthSettings,
    private readonly store: SecretStore,
    private readonly log: Logger,
  ) {
    this.waitMs = settings.signInWaitMs ?? DEFAULT_SIGN_IN_WAIT_MS;
  }

  /** The principal's GitHub token, asking the user to authorize GitHub first when there is none. */
  async tokenFor(principal: string, ctx: RequestContext): Promise<string> {
    const stored = await this.stored(principal);
    if (stored !== undefined) return stored;
    const { url, id } = await this.begin(principal);
    const visitYourself = (): ToolError =>
      ToolError.accessDenied(
        `This server needs your authorization to act on GitHub for you, once. Open this link in a browser, sign in to GitHub and approve the app: ${url} — then call the tool again. The link is valid for ${STATE_TTL_SECONDS / 60} minutes and only for you.`,
      );
    if (!ctx.client.elicitationUrl) throw visitYourself();
    let answer: Awaited<ReturnType<RequestContext['client']['elicitUrl']>>;
    try {
      answer = await ctx.client.elicitUrl(
        { message: 'Authorize this server to use GitHub on your behalf (once): sign in to GitHub and approve the app, then come back.', url, elicitationId: id },
        { timeoutMs: this.waitMs },
      );
    } catch (error) {
      // A request that cannot ask the client (a resource read or completion in some eras): the link, as for a client without URL mode.
      if (error instanceof ToolError && error.kind === 'unavailable') throw visitYourself();
      throw error;
    }
    if (answer.action !== 'accept') {
      throw ToolError.accessDenied(`GitHub authorization was ${answer.action === 'decline' ? 'declined' : 'cancelled'}: this tool needs it. Call the tool again to get a new sign-in link.`);
    }
    const token = await this.waitForToken(principal, ctx.signal);
    if (token === undefined) {
      throw ToolError.timeout(`GitHub authorization did not finish within ${Math.round(this.waitMs / 1000)} s. Finish it at ${url} (valid ${STATE_TTL_SECONDS / 60} minutes), then call the tool again.`);
    }
    return token;
  }

  /** Forgets the principal's GitHub token (GitHub refused it: revoked or expired); the next call asks again. */
  async forget(principal: string): Promise<void> {
    await this.store.delete(`token:${principal}`).catch(() => undefined);
  }

  private async stored(principal: string): Promise<string | undefined> {
    try {
      return await this.store.get(`token:${principal}`);
    } catch (error) {
      if (error instanceof SecretStoreUnavailable) throw ToolError.unavailable(error.message);
      throw error;
    }
  }

  /** A new sign-in: a one-use state bound to the principal, and a PKCE S256 challenge. */
  private async begin(principal: string): Promise<{ url: string; id: string }> {
    const state = randomBytes(32).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    try {
      await this.store.set(`state:${state}`, JSON.stringify({ principal, verifier } satisfies PendingSignIn), STATE_TTL_SECONDS);
    } catch (error) {
      if (error instanceof SecretStoreUnavailable) throw ToolError.unavailable(error.message);
      throw error;
    }
    const url = new URL('/login/oauth/authorize', this.settings.webUrl);
    url.search = new URLSearchParams({
      client_id: this.settings.clientId,
      redirect_uri: this.settings.callbackUrl,
      scope: this.settings.scopes,
      state,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
      allow_signup: 'false',
    }).toString();
    // The elicitation's id: a digest of the state, so the state itself appears only in the link.
    return { url: url.toString(), id: createHash('sha256').update(state).digest('base64url').slice(0, 22) };
  }

  private async waitForToken(principal: string, signal: AbortSignal): Promise<string | undefined> {
    const deadline = Date.now() + this.waitMs;
    while (Date.now() < deadline && !signal.aborted) {
      const token = await this.stored(principal);
      if (token !== undefined) return token;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, 250);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return undefined;
  }

  /** GitHub's redirect back: the state names the sign-in (once), the code becomes the user's token. */
  async complete(code: string | null, state: string | null, error: string | null): Promise<{ ok: boolean; message: string }> {
    if (!state || !/^[A-Za-z0-9_-]{20,100}$/.test(state)) return { ok: false, message: 'This sign-in link is not valid. Call the tool again for a new one.' };
    const key = `state:${state}`;
    const raw = await this.store.get(key);
    if (raw === undefined) return { ok: false, message: 'This sign-in link has expired or was already used. Call the tool again for a new one.' };
    // One use: a replayed callback finds nothing.
    await this.store.delete(key);
    const pending = JSON.parse(raw) as PendingSignIn;
    if (error !== null) return { ok: false, message: error === 'access_denied' ? 'You did not authorize the app on GitHub. Call the tool again if you change your mind.' : 'GitHub refused the authorization. Call the tool again to retry.' };
    if (!code || code.length > 512) return { ok: false, message: 'GitHub sent no authorization code. Call the tool again for a new link.' };
    const exchanged = await this.exchange(code, pending.verifier);
    if ('failure' in exchanged) return { ok: false, message: exchanged.failure };
    await this.store.set(`token:${pending.principal}`, exchanged.token, exchanged.ttlSeconds);
    this.log.info('GitHub authorization stored for a principal');
    return { ok: true, message: 'GitHub is connected. You can close this page and return to your MCP client.' };
  }

  private async exchange(code: string, verifier: string): Promise<{ token: string; ttlSeconds: number } | { failure: string }> {
    let response: Response;
    try {
      response = await fetch(new URL('/login/oauth/access_token', this.settings.webUrl), {
        method: 'POST',
        redirect: 'error',
        signal: AbortSignal.timeout(15_000),
        headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: this.settings.clientId,
          client_secret: this.settings.clientSecret,
          code,
          redirect_uri: this.settings.callbackUrl,
          code_verifier: verifier,
        }),
      });
    } catch {
      this.log.warning('GitHub token exchange failed: GitHub did not answer');
      return { failure: 'GitHub could not be reached to finish the sign-in. Call the tool again to retry.' };
    }
    const body = (await response.json().catch(() => undefined)) as { access_token?: unknown; expires_in?: unknown; error?: unknown } | undefined;
    if (!response.ok || !body || typeof body.access_token !== 'string' || !/^[\x21-\x7e]{8,512}$/.test(body.access_token)) {
      // GitHub's error code names the problem (bad_verification_code, incorrect_client_credentials); no secret is in it.
      const reason = typeof body?.error === 'string' && /^[a-z_]{1,64}$/.test(body.error) ? body.error : `HTTP ${response.status}`;
      this.log.warning(`GitHub token exchange refused: ${reason}`);
      return { failure: `GitHub refused to finish the sign-in (${reason}). Call the tool again for a new link.` };
    }
    const expiresIn = typeof body.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : TOKEN_TTL_SECONDS;
    return { token: body.access_token, ttlSeconds: Math.min(expiresIn, TOKEN_TTL_SECONDS) };
  }

  /** The callback route for shared's HTTP server. */
  route(): HttpRoute {
    return {
      method: 'GET',
      path: CALLBACK_PATH,
      handle: async (_req: http.IncomingMessage, res: http.ServerResponse, url: URL) => {
        let outcome: { ok: boolean; message: string };
        try {
          outcome = await this.complete(url.searchParams.get('code'), url.searchParams.get('state'), url.searchParams.get('error'));
        } catch (error) {
          this.log.warning(`GitHub sign-in callback failed: ${error instanceof SecretStoreUnavailable ? error.message : 'internal error'}`);
          outcome = { ok: false, message: 'The sign-in could not be finished here. Call the tool again to retry.' };
        }
        res.writeHead(outcome.ok ? 200 : 400, {
          'Content-Type': 'text/html; charset=utf-8',
          'Cache-Control': 'no-store',
          'Referrer-Policy': 'no-referrer',
          'Content-Security-Policy': "default-src 'none'",
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(`<!doctype html><meta charset="utf-8"><title>GitHub sign-in</title><p>${outcome.message}</p>\n`);
      },
    };
  }
}

/**
 * GitHub's web origin for an API URL: api.github.com -> github.com, api.NAME.ghe.com -> NAME.ghe.com,
 * HOST/api/v3 (Enterprise Server) -> HOST; anything else (a test's fake) -> its own origin.
 */
export function webUrlOf(apiUrl: string): string {
  const url = new URL(apiUrl);
  if (url.hostname === 'api.github.com') return 'https://github.com';
  if (/^api\.[^.]+\.ghe\.com$/.test(url.hostname)) return `${url.protocol}//${url.hostname.slice(4)}`;
  return url.origin;
}
