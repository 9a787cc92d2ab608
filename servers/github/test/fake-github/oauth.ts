import { createHash, randomBytes } from 'node:crypto';
import type { FakeRequest, FakeResponse, FakeUpstream } from '@suite/test-kit';
import type { GithubState } from './state.js';

/** A GitHub OAuth app registered with the fake. */
export interface FakeOAuthApp {
  clientId: string;
  clientSecret: string;
  /** The registered callback URL: an authorize request naming another redirect_uri is refused, as on GitHub. */
  callbackUrl: string;
}

/**
 * GitHub's web sign-in for OAuth apps (/login/oauth/authorize and /login/oauth/access_token), on the
 * fake's origin as on github.com or an Enterprise Server host. Nobody types a password here: the
 * browser is "signed in" as `signedInAs`, who approves at once (the authorize page redirects
 * straight back with a code), or declines when `decline` is set. PKCE S256 is required, the code
 * is one use, bound to the app, the redirect_uri and the challenge; the token it yields is a real
 * token of the fake's API for that user.
 */
export class FakeGithubOAuth {
  readonly apps = new Map<string, FakeOAuthApp>();
  /** The user the browser is signed in as at GitHub; undefined answers a sign-in page (200) instead of a redirect. */
  signedInAs: string | undefined;
  /** The user declines the app: the redirect carries error=access_denied. */
  decline = false;
  /** Tokens issued through the code exchange, in order. */
  readonly issued: string[] = [];
  /** Code exchanges received (each with its outcome). */
  readonly exchanges: { ok: boolean; error?: string }[] = [];
  private readonly codes = new Map<string, { clientId: string; redirectUri: string; challenge: string; login: string; used: boolean }>();

  constructor(private readonly state: GithubState) {}

  register(app: FakeOAuthApp): void {
    this.apps.set(app.clientId, app);
  }

  routes(upstream: FakeUpstream): void {
    upstream.route('GET', '/login/oauth/authorize', (req) => this.authorize(req));
    upstream.route('POST', '/login/oauth/access_token', (req) => this.token(req));
  }

  private authorize(req: FakeRequest): FakeResponse {
    const q = req.query;
    const app = this.apps.get(q.get('client_id') ?? '');
    if (!app) return { status: 404, body: 'Unknown OAuth application.' };
    const redirectUri = q.get('redirect_uri') ?? app.callbackUrl;
    if (redirectUri !== app.callbackUrl) return { status: 400, body: 'The redirect_uri is not associated with this application.' };
    const challenge = q.get('code_challenge');
    if (!challenge || q.get('code_challenge_method') !== 'S256') return { status: 400, body: 'PKCE S256 is required by this fake.' };
    if (this.signedInAs === undefined) return { status: 200, headers: { 'content-type': 'text/html' }, body: '<p>Sign in to GitHub</p>' };
    const back = new URL(redirectUri);
    if (this.decline) {
      back.searchParams.set('error', 'access_denied');
    } else {
      const code = randomBytes(10).toString('hex');
      this.codes.set(code, { clientId: app.clientId, redirectUri, challenge, login: this.signedInAs, used: false });
      back.searchParams.set('code', code);
    }
    const state = q.get('state');
    if (state !== null) back.searchParams.set('state', state);
    return { status: 302, headers: { location: back.toString() } };
  }

  private token(req: FakeRequest): FakeResponse {
    const form = new URLSearchParams(typeof req.body === 'string' ? req.body : '');
    const fail = (error: string): FakeResponse => {
      this.exchanges.push({ ok: false, error });
      // GitHub answers 200 with an error body.
      return { status: 200, json: { error, error_description: error.replace(/_/g, ' '), error_uri: 'https://docs.github.com/apps' } };
    };
    const app = this.apps.get(form.get('client_id') ?? '');
    if (!app || form.get('client_secret') !== app.clientSecret) return fail('incorrect_client_credentials');
    const code = this.codes.get(form.get('code') ?? '');
    if (!code || code.used || code.clientId !== app.clientId) return fail('bad_verification_code');
    code.used = true;
    if (form.has('redirect_uri') && form.get('redirect_uri') !== code.redirectUri) return fail('redirect_uri_mismatch');
    const verifier = form.get('code_verifier') ?? '';
    if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge) return fail('bad_verification_code');
    const token = `gho_${randomBytes(18).toString('base64url')}`;
    this.state.addToken(token, code.login);
    this.issued.push(token);
    this.exchanges.push({ ok: true });
    const json = { access_token: token, token_type: 'bearer', scope: 'repo,read:org,notifications' };
    if (String(req.headers.accept ?? '').includes('application/json')) return { status: 200, json };
    return { status: 200, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(json).toString() };
  }
}
