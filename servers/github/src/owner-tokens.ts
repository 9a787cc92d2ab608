import { UsageError } from '@suite/shared';
import { isOwnerName } from './params.js';

/** An environment variable's name as shells write it. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * --token-for OWNER=ENV_VAR entries (each may hold several, comma-separated, as GITHUB_TOKEN_FOR
 * does) into owner (lower-cased) -> token. The token is read from the named variable, so it never
 * appears on a command line (where `ps` shows it); a missing or empty variable stops the start,
 * naming the variable, never a value.
 */
export function parseOwnerTokens(entries: readonly string[], env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const tokens: Record<string, string> = {};
  for (const entry of entries.flatMap((e) => e.split(',')).map((e) => e.trim()).filter(Boolean)) {
    const [owner = '', variable = '', ...rest] = entry.split('=').map((p) => p.trim());
    if (rest.length > 0 || !isOwnerName(owner) || !ENV_NAME.test(variable)) {
      throw new UsageError(`--token-for takes OWNER=ENV_VAR (a GitHub user or organization, and the name of an environment variable that holds its token), got ${JSON.stringify(entry.split('=')[0] + (entry.includes('=') ? '=...' : ''))}.`);
    }
    if (/^(?:gh[pousr]_|github_pat_)/.test(variable) || variable.length > 64) {
      throw new UsageError(`--token-for ${owner}=...: give the name of an environment variable that holds the token, not the token itself (a command line is visible to every user of this machine).`);
    }
    const key = owner.toLowerCase();
    if (tokens[key] !== undefined) throw new UsageError(`--token-for names ${owner} twice: give each owner one token.`);
    const token = env[variable]?.trim();
    if (!token) throw new UsageError(`--token-for ${owner}=${variable}: the environment variable ${variable} is not set or empty.`);
    if (!/^[\x21-\x7e]{8,512}$/.test(token)) throw new UsageError(`--token-for ${owner}=${variable}: ${variable} does not hold a plausible token (printable, no spaces).`);
    tokens[key] = token;
  }
  return tokens;
}
