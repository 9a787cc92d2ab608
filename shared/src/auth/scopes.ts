/**
 * The scopes of one server: `<name>:read` for everything that only reads, `<name>:write` for the
 * tools that write. Write implies read: a token with only the write scope may read too.
 */
export interface ServerScopes {
  read: string;
  /** Absent for a server with no tool that writes (or one started read-only): nothing to grant. */
  write?: string;
}

export function serverScopes(name: string, writes: boolean): ServerScopes {
  return { read: `${name}:read`, ...(writes ? { write: `${name}:write` } : {}) };
}

/** Every scope the server offers, for `scopes_supported` and the first challenge. */
export function allScopes(scopes: ServerScopes): string[] {
  return scopes.write ? [scopes.read, scopes.write] : [scopes.read];
}

export function canRead(granted: readonly string[], scopes: ServerScopes): boolean {
  return granted.includes(scopes.read) || (scopes.write !== undefined && granted.includes(scopes.write));
}

export function canWrite(granted: readonly string[], scopes: ServerScopes): boolean {
  return scopes.write !== undefined && granted.includes(scopes.write);
}

/** The scopes a token carries: RFC 9068's space-separated `scope`, or the `scp` array some servers use. */
export function grantedScopes(claims: { scope?: unknown; scp?: unknown }): string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter(Boolean);
  if (Array.isArray(claims.scp)) return claims.scp.filter((s): s is string => typeof s === 'string');
  if (typeof claims.scp === 'string') return claims.scp.split(' ').filter(Boolean);
  return [];
}
