import { createHash } from 'node:crypto';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { grantedScopes } from './scopes.js';
import type { Principal } from './principal.js';

/** Asymmetric signatures only: a shared-secret (HS*) or unsigned (`none`) token is never accepted. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];

/** A token that is refused: `reason` says why in words safe to send back (it never quotes the token). */
export class InvalidToken extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'InvalidToken';
  }
}

/** The authorization server could not be asked (its JWKS or introspection endpoint is down): not the token's fault. */
export class AuthorizationUnavailable extends Error {
  constructor() {
    super('The authorization server could not be reached to check the token.');
    this.name = 'AuthorizationUnavailable';
  }
}

export interface VerifiedToken extends Principal {
  scopes: string[];
  /** Seconds since the epoch. */
  expiresAt: number;
}

export interface IntrospectionOptions {
  endpoint: string;
  clientId: string;
  clientSecret: string;
}

export interface AccessTokenVerifierOptions {
  issuer: string;
  /** The public URL of this server: the only audience accepted (RFC 8707). */
  audience: string;
  jwksUri?: string;
  /** RFC 7662, for tokens that are not JWTs. */
  introspection?: IntrospectionOptions;
  /** Clock skew allowed on exp/nbf/iat (default 5 s). */
  clockToleranceSeconds?: number;
  timeoutMs?: number;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/**
 * Checks access tokens for this server. JWTs (RFC 9068) are verified locally against the issuer's
 * JWKS (fetched once, refreshed when an unknown key id turns up): signature with an allowed
 * algorithm, `typ` at+jwt, issuer, audience, expiry. Other tokens go to introspection when it is
 * configured, and are refused otherwise.
 */
export class AccessTokenVerifier {
  private readonly jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  /** Introspection answers by token digest, kept until the earlier of their expiry and 30 s. */
  private readonly introspected = new Map<string, { until: number; token: VerifiedToken }>();

  constructor(private readonly options: AccessTokenVerifierOptions) {
    this.jwks = options.jwksUri ? createRemoteJWKSet(new URL(options.jwksUri), { timeoutDuration: options.timeoutMs ?? 5000, cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }) : undefined;
  }

  async verify(token: string): Promise<VerifiedToken> {
    if (JWT_SHAPE.test(token) && this.jwks) return this.verifyJwt(token);
    if (this.options.introspection) return this.introspect(token, this.options.introspection);
    throw new InvalidToken('The access token is not a JWT access token from the authorization server.');
  }

  private async verifyJwt(token: string): Promise<VerifiedToken> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.jwks!, {
        issuer: this.options.issuer,
        audience: this.options.audience,
        algorithms: ACCEPTED_ALGORITHMS,
        typ: 'at+jwt',
        requiredClaims: ['exp', 'sub'],
        clockTolerance: this.options.clockToleranceSeconds ?? 5,
      }));
    } catch (error) {
      throw jwtFailure(error);
    }
    return verified(payload, this.options.issuer);
  }

  private async introspect(token: string, introspection: IntrospectionOptions): Promise<VerifiedToken> {
    const digest = createHash('sha256').update(token).digest('base64url');
    const now = Date.now();
    const cached = this.introspected.get(digest);
    if (cached && cached.until > now) return cached.token;
    let answer: Record<string, unknown>;
    try {
      const response = await fetch(introspection.endpoint, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          authorization: `Basic ${Buffer.from(`${encodeURIComponent(introspection.clientId)}:${encodeURIComponent(introspection.clientSecret)}`).toString('base64')}`,
        },
        body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
        redirect: 'error',
        signal: AbortSignal.timeout(this.options.timeoutMs ?? 5000),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`introspection answered ${response.status}`);
      }
      answer = (await response.json()) as Record<string, unknown>;
    } catch {
      throw new AuthorizationUnavailable();
    }
    if (answer.active !== true) throw new InvalidToken('The access token is not active.');
    if (answer.iss !== undefined && answer.iss !== this.options.issuer) throw new InvalidToken('The access token was issued by another authorization server.');
    const audiences = Array.isArray(answer.aud) ? answer.aud : [answer.aud];
    if (!audiences.includes(this.options.audience)) throw new InvalidToken('The access token was not issued for this server (audience).');
    if (typeof answer.exp !== 'number') throw new InvalidToken('The access token has no expiry.');
    if (answer.exp * 1000 <= now) throw new InvalidToken('The access token has expired.');
    const result = verified(answer, this.options.issuer, true);
    if (this.introspected.size > 10_000) this.introspected.clear();
    this.introspected.set(digest, { until: Math.min(answer.exp * 1000, now + 30_000), token: result });
    return result;
  }
}

/**
 * The principal and grant of a checked token. An introspection answer may leave `sub` out for a
 * client-credentials token (RFC 7662 makes it optional): the client is then its own subject.
 */
function verified(claims: Record<string, unknown>, issuer: string, clientIsSubject = false): VerifiedToken {
  const client = typeof claims.client_id === 'string' ? claims.client_id : typeof claims.azp === 'string' ? claims.azp : '';
  const subject = typeof claims.sub === 'string' && claims.sub !== '' ? claims.sub : clientIsSubject && client ? client : undefined;
  if (!subject) throw new InvalidToken('The access token names no subject.');
  return { issuer, subject, clientId: client, scopes: grantedScopes(claims), expiresAt: claims.exp as number };
}

/** jose's verdict in words for the client; a JWKS that cannot be fetched is the server's problem. */
function jwtFailure(error: unknown): Error {
  if (error instanceof joseErrors.JWTExpired) return new InvalidToken('The access token has expired.');
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return new InvalidToken('The access token was not issued for this server (audience).');
    if (error.claim === 'iss') return new InvalidToken('The access token was issued by another authorization server.');
    if (error.claim === 'typ') return new InvalidToken('The token is not an access token (typ must be at+jwt).');
    return new InvalidToken(`The access token's ${error.claim} claim is not valid.`);
  }
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new InvalidToken('The access token is signed with an algorithm this server does not accept.');
  if (error instanceof joseErrors.JWKSNoMatchingKey) return new InvalidToken('The access token is signed with a key the authorization server does not publish.');
  if (error instanceof joseErrors.JWKSTimeout) return new AuthorizationUnavailable();
  if (error instanceof joseErrors.JOSEError) return new InvalidToken('The access token is not valid.');
  // Anything else is the JWKS fetch failing (network, bad answer): retry later.
  return new AuthorizationUnavailable();
}
