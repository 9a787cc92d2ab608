import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import Provider from 'oidc-provider';
import { Client, ClientCredentialsProvider, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/**
 * A real OAuth 2.1 authorization server for tests: oidc-provider on 127.0.0.1 with resource
 * indicators (RFC 8707), JWT access tokens (RFC 9068), client credentials and PKCE. Its signing key
 * is ours, so a test can also mint the tokens a real server never would (expired, for another
 * audience) with the very key the server publishes.
 */
export interface TestAuthorizationServer {
  issuer: string;
  /** Confidential clients for the client-credentials grant, by name; each may ask for the scopes given. */
  clients: Record<string, { clientId: string; clientSecret: string }>;
  /** A JWT signed with the server's published key; claims default to a valid token for `audience`. */
  sign(claims: JWTPayload, options?: { typ?: string; audience?: string; expiresIn?: number }): Promise<string>;
  /** A token straight from the token endpoint (client credentials) for `resource`. */
  clientCredentialsToken(client: string, resource: string, scope: string): Promise<string>;
  close(): Promise<void>;
}

export interface TestAuthorizationServerOptions {
  /** Scopes each client may receive, e.g. { reader: 'fs:read', writer: 'fs:read fs:write' }. */
  clients: Record<string, string>;
  /** Every scope the resource servers offer. */
  scopes: string[];
  /** Access token lifetime in seconds (default 600). */
  accessTokenTtl?: number;
  /** Issue opaque access tokens (checked by introspection) instead of JWTs. */
  opaqueTokens?: boolean;
}

export async function startAuthorizationServer(options: TestAuthorizationServerOptions): Promise<TestAuthorizationServer> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' };
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const clients = Object.fromEntries(Object.keys(options.clients).map((name) => [name, { clientId: `client-${name}`, clientSecret: `secret-${name}-${Math.random().toString(36).slice(2)}` }]));
  const provider = new Provider(issuer, {
    clients: Object.entries(options.clients).map(([name, scope]) => ({
      client_id: clients[name]!.clientId,
      client_secret: clients[name]!.clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      scope,
    })),
    jwks: { keys: [jwk] },
    scopes: ['openid', ...options.scopes],
    ttl: { ClientCredentials: options.accessTokenTtl ?? 600 },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resourceIndicator: string) => ({
          scope: options.scopes.join(' '),
          audience: resourceIndicator,
          accessTokenFormat: options.opaqueTokens ? 'opaque' : 'jwt',
          accessTokenTTL: options.accessTokenTtl ?? 600,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  } as ConstructorParameters<typeof Provider>[1]);
  server.on('request', provider.callback());

  return {
    issuer,
    clients,
    async sign(claims, signOptions = {}) {
      const now = Math.floor(Date.now() / 1000);
      return new SignJWT({ iss: issuer, sub: 'user-forged', client_id: 'client-forged', scope: options.scopes.join(' '), iat: now, exp: now + (signOptions.expiresIn ?? 300), jti: Math.random().toString(36).slice(2), ...(signOptions.audience ? { aud: signOptions.audience } : {}), ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: signOptions.typ ?? 'at+jwt' })
        .sign(privateKey);
    },
    async clientCredentialsToken(client, resource, scope) {
      const { clientId, clientSecret } = clients[client]!;
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}` },
        body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }),
      });
      const body = (await response.json()) as { access_token?: string; error?: string; error_description?: string };
      if (!body.access_token) throw new Error(`token endpoint: ${body.error}: ${body.error_description}`);
      return body.access_token;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An SDK v2 client that signs in on its own through the SDK's OAuth support (client credentials):
 * it reads the server's 401, its Protected Resource Metadata and the authorization server's
 * metadata, and asks for a token for `url` with the scopes given. `era` picks the protocol era.
 */
export async function connectWithOAuth(url: string, as: TestAuthorizationServer, client: string, scope: string, era: '2025-11-25' | '2026-07-28'): Promise<Client> {
  const { clientId, clientSecret } = as.clients[client]!;
  const provider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: as.issuer, scope });
  const sdkClient = new Client({ name: 'suite-test-oauth', version: '0' }, { versionNegotiation: { mode: era === '2026-07-28' ? { pin: era } : 'legacy' } });
  await sdkClient.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return sdkClient;
}

/** A free port on 127.0.0.1 right now: an OAuth server's public URL must be known before it listens. */
export { freePort } from './replicas.js';
