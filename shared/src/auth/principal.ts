import { createHash } from 'node:crypto';
import type { AuthInfo } from '../server/context.js';

/**
 * Who is calling, as an OAuth access token says: the authorization server that issued it, the
 * user (or, for a client-credentials token, the client) it was issued to, and the client acting.
 * A refreshed token names the same principal; another user's token does not.
 */
export interface Principal {
  issuer: string;
  subject: string;
  clientId: string;
}

/** What OAuth mode adds to a request's AuthInfo (under `extra.oauth`). */
export interface OAuthGrant extends Principal {
  /** The principal as one opaque key (a digest): what sessions and requestState are bound to. */
  key: string;
  /** Whether the token carries the server's write scope (write implies read). */
  canWrite: boolean;
}

export function principalKey(principal: Principal): string {
  return createHash('sha256').update(`${principal.issuer}\0${principal.subject}\0${principal.clientId}`, 'utf8').digest('base64url');
}

/** The OAuth grant a request's credentials carry, when the server runs in OAuth mode. */
export function oauthGrantOf(auth: AuthInfo | { extra?: Record<string, unknown> } | undefined): OAuthGrant | undefined {
  const grant = auth?.extra?.oauth as OAuthGrant | undefined;
  return grant && typeof grant.key === 'string' ? grant : undefined;
}

/**
 * What a session (2025), a sealed requestState (2026) or a listen stream is bound to: the principal
 * in OAuth mode, so that a refreshed token keeps them; otherwise the token itself (a static or
 * per-user bearer token has no other identity). A digest, never the token.
 */
export function bindingOf(auth: { token: string; extra?: Record<string, unknown> } | undefined): Buffer | undefined {
  if (!auth) return undefined;
  const grant = oauthGrantOf(auth);
  const text = grant ? `principal\0${grant.key}` : auth.token;
  return createHash('sha256').update(text, 'utf8').digest();
}
