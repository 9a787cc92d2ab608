import { UsageError } from '@suite/shared';

const PUBLIC_API = 'https://api.github.com';

/** Where the REST API lives, as the operator can say it (flags win over the environment). */
export interface EndpointSettings {
  /** --api-url or GITHUB_API_URL: the REST base URL itself. */
  apiUrl?: string | undefined;
  /** --github-host or GITHUB_HOST: github.com, a *.ghe.com tenant, or a GitHub Enterprise Server host. */
  host?: string | undefined;
}

function isLoopback(hostname: string): boolean {
  const name = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127(?:\.\d{1,3}){3}$/.test(name);
}

function parseUrl(text: string, what: string): URL {
  try {
    return new URL(text);
  } catch {
    throw new UsageError(`${what} is not a URL: ${JSON.stringify(text)}.`);
  }
}

/** The token travels in every request: only HTTPS may carry it off the machine. */
function requireSafeScheme(url: URL, what: string): void {
  if (url.protocol === 'https:') return;
  if (url.protocol === 'http:' && isLoopback(url.hostname)) return;
  if (url.protocol === 'http:') throw new UsageError(`${what} must use https:// (plain http is only accepted on loopback addresses): ${url.origin}`);
  throw new UsageError(`${what} must be an https:// URL, got ${url.protocol}//.`);
}

/**
 * The REST API base URL, without a trailing slash. An explicit API URL wins; a host is turned into
 * its API URL the way GitHub lays them out: github.com -> api.github.com, a GHE.com tenant
 * (NAME.ghe.com) -> api.NAME.ghe.com, any other host (GitHub Enterprise Server) -> HOST/api/v3.
 */
export function resolveApiUrl(settings: EndpointSettings): string {
  const apiUrl = settings.apiUrl?.trim();
  if (apiUrl) {
    const url = parseUrl(apiUrl, 'The API URL');
    requireSafeScheme(url, 'The API URL');
    if (url.search || url.hash) throw new UsageError('The API URL must not have a query or fragment.');
    return url.toString().replace(/\/+$/, '');
  }
  const host = settings.host?.trim();
  if (!host) return PUBLIC_API;
  const url = parseUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `https://${host}`, 'GITHUB_HOST');
  requireSafeScheme(url, 'GITHUB_HOST');
  if (url.pathname !== '/' && url.pathname !== '') throw new UsageError(`GITHUB_HOST is a host name, not a URL with a path (use --api-url for that): ${JSON.stringify(host)}.`);
  const name = url.hostname.toLowerCase();
  if (name === 'github.com' || name === 'api.github.com') return PUBLIC_API;
  if (name.endsWith('.ghe.com')) return `${url.protocol}//${name.startsWith('api.') ? name : `api.${name}`}${url.port ? `:${url.port}` : ''}`;
  return `${url.protocol}//${url.host}/api/v3`;
}
