import type { AuthInfo } from '../server/context.js';
import { AccessTokenVerifier, AuthorizationUnavailable, InvalidToken, type IntrospectionOptions } from './access-tokens.js';
import { AuthorizationServerError, checkSecureUrl, discoverAuthorizationServer } from './authorization-server.js';
import { principalKey, type OAuthGrant } from './principal.js';
import { allScopes, canRead, canWrite, type ServerScopes } from './scopes.js';

export { AuthorizationServerError };

/** OAuth mode of `--http`: this server as an OAuth 2.1 protected resource (RFC 9728, RFC 8707, RFC 9068). */
export interface OAuthOptions {
  /** The authorization server's issuer identifier, exactly as its metadata spells it. */
  issuer: string;
  /** The canonical URL of this server's MCP endpoint: the token audience and the metadata's `resource`. */
  publicUrl: string;
  scopes: ServerScopes;
  /** A name for people, in the metadata (`resource_name`). */
  resourceName?: string;
  /** A page for people about this server (`resource_documentation`). */
  documentation?: string;
  /** RFC 7662 credentials of this server at the authorization server, for opaque tokens. */
  introspection?: Omit<IntrospectionOptions, 'endpoint'>;
  timeoutMs?: number;
}

/** What the gate decided about a request: its credentials, or the HTTP answer that refuses it. */
export type GateOutcome = { auth: AuthInfo } | { refuse: Refusal };

export interface Refusal {
  status: 401 | 403 | 503;
  headers: Record<string, string>;
  body: { error: string; error_description: string };
}

const METADATA_ROOT = '/.well-known/oauth-protected-resource';

/**
 * The resource-server side of OAuth mode, built once per process: the Protected Resource Metadata
 * it publishes, the challenges it answers with, and the check of every request's bearer token.
 * Nothing here ever puts a token into a message.
 */
export class ProtectedResource {
  readonly resourceMetadataUrl: string;
  /** The paths the metadata is served at: path-aware for the endpoint, and the root. */
  readonly metadataPaths: ReadonlySet<string>;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly publicHost: string;

  private constructor(
    private readonly options: OAuthOptions,
    private readonly verifier: AccessTokenVerifier,
    localPath: string,
  ) {
    const url = new URL(options.publicUrl);
    const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
    this.resourceMetadataUrl = `${url.origin}${METADATA_ROOT}${path}`;
    this.publicHost = url.host;
    this.metadataPaths = new Set([METADATA_ROOT, `${METADATA_ROOT}${path}`, `${METADATA_ROOT}${localPath}`]);
    this.metadata = {
      resource: options.publicUrl,
      authorization_servers: [options.issuer],
      scopes_supported: allScopes(options.scopes),
      bearer_methods_supported: ['header'],
      ...(options.resourceName ? { resource_name: options.resourceName } : {}),
      ...(options.documentation ? { resource_documentation: options.documentation } : {}),
    };
  }

  /**
   * Reads the authorization server's metadata and checks it (issuer, PKCE S256, JWKS); throws an
   * AuthorizationServerError (the process should not start) when it does not fit.
   */
  static async start(options: OAuthOptions, localPath = '/mcp'): Promise<ProtectedResource> {
    checkPublicUrl(options.publicUrl);
    const metadata = await discoverAuthorizationServer(options.issuer, { needJwks: !options.introspection, ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}) });
    if (options.introspection && typeof metadata.introspection_endpoint !== 'string') {
      throw new AuthorizationServerError(`The authorization server ${options.issuer} publishes no introspection_endpoint, but introspection credentials were given.`);
    }
    const verifier = new AccessTokenVerifier({
      issuer: options.issuer,
      audience: options.publicUrl,
      ...(metadata.jwks_uri ? { jwksUri: metadata.jwks_uri } : {}),
      ...(options.introspection ? { introspection: { ...options.introspection, endpoint: checkSecureUrl(metadata.introspection_endpoint!, 'The introspection endpoint').href } } : {}),
      ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    });
    return new ProtectedResource(options, verifier, localPath);
  }

  get scopes(): ServerScopes {
    return this.options.scopes;
  }

  /**
   * The request's credentials from its Authorization header. A token anywhere else (the query
   * string) is refused: it would end up in access logs.
   */
  async authenticate(authorization: string | undefined, url: URL): Promise<GateOutcome> {
    if (url.searchParams.has('access_token')) return { refuse: this.invalid('Send the access token in the Authorization header, never in the URL.') };
    if (authorization === undefined || authorization.trim() === '') return { refuse: this.unauthenticated() };
    const token = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization)?.[1];
    if (token === undefined) return { refuse: this.invalid('The Authorization header must be "Bearer <access token>".') };
    let verified;
    try {
      verified = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof InvalidToken) return { refuse: this.invalid(error.reason) };
      if (error instanceof AuthorizationUnavailable) return { refuse: this.unavailable() };
      return { refuse: this.invalid('The access token is not valid.') };
    }
    const scopes = this.options.scopes;
    if (!canRead(verified.scopes, scopes)) return { refuse: this.insufficient([scopes.read], 'The access token does not grant access to this server.') };
    const grant: OAuthGrant = {
      issuer: verified.issuer,
      subject: verified.subject,
      clientId: verified.clientId,
      key: principalKey(verified),
      canWrite: canWrite(verified.scopes, scopes),
    };
    return { auth: { token, clientId: verified.clientId, scopes: verified.scopes, expiresAt: verified.expiresAt, extra: { oauth: grant } } };
  }

  /** 403 for a write with a token that may only read: names the scope to ask for. */
  insufficientForWrite(): Refusal {
    return this.insufficient([this.options.scopes.write ?? this.options.scopes.read], 'This operation writes: it needs the write scope.');
  }

  /**
   * No token at all: where to find the authorization server, and the scope to ask for. Only the
   * read scope, the least that gets in: a client that may only read can still connect, and a write
   * asks for more with a 403 when it happens (step-up).
   */
  private unauthenticated(): Refusal {
    return {
      status: 401,
      headers: { 'WWW-Authenticate': `Bearer resource_metadata="${this.resourceMetadataUrl}", scope="${this.options.scopes.read}"` },
      body: { error: 'invalid_token', error_description: 'This server needs an OAuth access token: see the resource metadata for its authorization server.' },
    };
  }

  private invalid(reason: string): Refusal {
    return {
      status: 401,
      headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${quoted(reason)}", resource_metadata="${this.resourceMetadataUrl}"` },
      body: { error: 'invalid_token', error_description: reason },
    };
  }

  private insufficient(needed: string[], reason: string): Refusal {
    return {
      status: 403,
      headers: { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${needed.join(' ')}", resource_metadata="${this.resourceMetadataUrl}", error_description="${quoted(reason)}"` },
      body: { error: 'insufficient_scope', error_description: `${reason} Required scope: ${needed.join(' ')}.` },
    };
  }

  private unavailable(): Refusal {
    return {
      status: 503,
      headers: { 'Retry-After': '5' },
      body: { error: 'temporarily_unavailable', error_description: 'The authorization server could not be reached to check the access token; retry shortly.' },
    };
  }
}

/** The public URL must be absolute, https (plain http only on loopback), with no query or fragment. */
export function checkPublicUrl(value: string): URL {
  return checkSecureUrl(value, '--public-url');
}

function quoted(text: string): string {
  return text.replace(/[\\"]/g, '').replace(/[^\x20-\x7e]/g, ' ');
}
