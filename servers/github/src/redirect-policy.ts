import { ToolError } from '@suite/shared';

/**
 * Where a redirect may lead. Every hop meets the rules of a first request: requests go to the
 * API's origin (and, with --repos, only where the allowlist allows: github-client.ts refuseHop).
 * The one exception is a download GitHub itself hands to its storage (job and run logs,
 * artifacts, repository archives, release assets): such a hop may leave the API's origin, never
 * carries the token, never downgrades https to http, and the answer names where it was read from.
 */

/** API paths (below the base path) whose answer GitHub serves from a signed URL on its storage. */
const STORAGE_DOWNLOADS: readonly RegExp[] = [
  /^\/repos\/[^/]+\/[^/]+\/actions\/jobs\/\d+\/logs$/,
  /^\/repos\/[^/]+\/[^/]+\/actions\/runs\/\d+\/logs$/,
  /^\/repos\/[^/]+\/[^/]+\/actions\/runs\/\d+\/attempts\/\d+\/logs$/,
  /^\/repos\/[^/]+\/[^/]+\/actions\/artifacts\/\d+\/[a-z]+$/,
  /^\/repos\/[^/]+\/[^/]+\/(?:tarball|zipball)(?:\/.+)?$/,
  /^\/repos\/[^/]+\/[^/]+\/releases\/assets\/\d+$/,
];

/** Whether a read of this API path is a download GitHub may redirect to its storage. */
export function isStorageDownload(method: string, path: string | undefined): boolean {
  return (method === 'GET' || method === 'HEAD') && path !== undefined && STORAGE_DOWNLOADS.some((route) => route.test(path));
}

export interface ForeignHop {
  method: string;
  /** The API path of the call's first request (undefined: not below the API's base path). */
  firstPath: string | undefined;
  next: URL;
  status: number;
  apiOrigin: string;
  /** "GET /repos/acme/api/pulls/1", for the message. */
  what: string;
}

/**
 * The refusal of a hop to an origin other than the API's, or undefined when it is a storage
 * download that may go there.
 */
export function foreignHopRefusal(hop: ForeignHop): ToolError | undefined {
  const apiIsHttps = new URL(hop.apiOrigin).protocol === 'https:';
  const downgrade = apiIsHttps && hop.next.protocol !== 'https:';
  if (isStorageDownload(hop.method, hop.firstPath) && !downgrade && (hop.next.protocol === 'https:' || hop.next.protocol === 'http:')) return undefined;
  const why = downgrade ? 'without https' : 'which is not the GitHub API this server was started with';
  return ToolError.accessDenied(
    `GitHub's answer to ${hop.what} redirected (${hop.status}) to another host, ${hop.next.origin}, ${why}; the redirect was not followed and nothing from there is shown. A first request would not go there either: only downloads GitHub hands to its storage (logs, archives) may leave ${hop.apiOrigin}. If GitHub moved, check the server's --api-url or --github-host.`,
  );
}

/** The note a download read from storage carries, so the answer says where it came from (one per origin and call). */
export function storageNote(next: URL): string {
  return `Note: GitHub redirected this download to its storage at ${next.origin}; what follows was read from there, without the token.`;
}
