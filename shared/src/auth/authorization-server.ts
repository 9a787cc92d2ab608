/**
 * The authorization server's metadata, fetched once at start-up: RFC 8414 first, then OpenID
 * Connect discovery, in the order the MCP authorization specification gives clients. A server that
 * answers for another issuer, or offers no PKCE with S256, is refused: clients would refuse it too.
 */
export interface AuthorizationServerMetadata {
  issuer: string;
  jwks_uri?: string;
  introspection_endpoint?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  code_challenge_methods_supported?: string[];
  [field: string]: unknown;
}

export class AuthorizationServerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AuthorizationServerError';
  }
}

/** Where the metadata of `issuer` may be, in the order to try. */
export function metadataUrls(issuer: string): string[] {
  const url = new URL(issuer);
  const path = url.pathname.replace(/\/+$/, '');
  const at = (p: string): string => new URL(p, url.origin).href;
  if (path === '') return [at('/.well-known/oauth-authorization-server'), at('/.well-known/openid-configuration')];
  return [at(`/.well-known/oauth-authorization-server${path}`), at(`/.well-known/openid-configuration${path}`), at(`${path}/.well-known/openid-configuration`)];
}

/** Plain http is for a server on this machine (tests, a sidecar); anything else needs https. */
export function checkSecureUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new AuthorizationServerError(`${what} must be an absolute URL, got ${JSON.stringify(value)}.`);
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new AuthorizationServerError(`${what} must use https (plain http only for localhost), got ${url.protocol}//${url.host}.`);
  }
  if (url.hash || url.search) throw new AuthorizationServerError(`${what} must have no query or fragment.`);
  return url;
}

export async function discoverAuthorizationServer(issuer: string, options: { timeoutMs?: number; needJwks?: boolean } = {}): Promise<AuthorizationServerMetadata> {
  checkSecureUrl(issuer, '--auth-issuer');
  const tried: string[] = [];
  for (const url of metadataUrls(issuer)) {
    let response: Response;
    try {
      response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'error', signal: AbortSignal.timeout(options.timeoutMs ?? 10_000) });
    } catch (error) {
      tried.push(`${url} (${(error as Error).name === 'TimeoutError' ? 'timed out' : 'unreachable'})`);
      continue;
    }
    if (!response.ok) {
      await response.body?.cancel();
      tried.push(`${url} (${response.status})`);
      continue;
    }
    const metadata = (await response.json().catch(() => undefined)) as AuthorizationServerMetadata | undefined;
    if (!metadata || typeof metadata !== 'object' || typeof metadata.issuer !== 'string') {
      tried.push(`${url} (not metadata)`);
      continue;
    }
    // RFC 8414 §3.3: the issuer in the document must be the one asked for, exactly.
    if (metadata.issuer !== issuer) {
      throw new AuthorizationServerError(`The authorization server at ${url} says its issuer is ${JSON.stringify(metadata.issuer)}, not ${JSON.stringify(issuer)}: check --auth-issuer (exactly as the server spells it, trailing slash included).`);
    }
    if (!metadata.code_challenge_methods_supported?.includes('S256')) {
      throw new AuthorizationServerError(`The authorization server ${issuer} does not offer PKCE with S256 (code_challenge_methods_supported): MCP clients refuse it.`);
    }
    if (options.needJwks !== false && typeof metadata.jwks_uri !== 'string') {
      throw new AuthorizationServerError(`The authorization server ${issuer} publishes no jwks_uri: its JWT access tokens cannot be checked (configure token introspection instead).`);
    }
    if (typeof metadata.jwks_uri === 'string') checkSecureUrl(metadata.jwks_uri, 'The jwks_uri of the authorization server');
    return metadata;
  }
  throw new AuthorizationServerError(`Could not read the metadata of the authorization server ${issuer}; tried ${tried.join(', ')}.`);
}
