import { ToolError, UsageError } from '@suite/shared';
import type { RepoPattern } from './config.js';
import { isOwnerName, isRepoName } from './params.js';

/** Parses --repos: `owner/repo` and `owner/*` entries, comma- or space-separated. */
export function parseRepoPatterns(value: string): RepoPattern[] {
  const entries = value
    .split(/[\s,]+/)
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new UsageError('--repos needs at least one owner/repo or owner/* entry.');
  return entries.map((entry) => {
    const [owner, repo, ...rest] = entry.split('/');
    if (owner === undefined || repo === undefined || rest.length > 0 || !isOwnerName(owner) || (repo !== '*' && !isRepoName(repo))) {
      throw new UsageError(`--repos entries are owner/repo or owner/*, got ${JSON.stringify(entry)}.`);
    }
    return { owner: owner.toLowerCase(), repo: repo.toLowerCase() };
  });
}

/**
 * Anything GitHub may read as a qualifier naming a repository or an owner: the documented names
 * (repo, org, user) and their long and plural forms, wherever they start after something that is
 * not part of a word (a space, a parenthesis, a quote, a comma...), with or without a quoted or
 * empty value. Broader than GitHub's own syntax on purpose: what is read here as a qualifier but
 * is not one to GitHub costs a refusal, the reverse would widen the search.
 */
const SCOPE_QUALIFIER = /(^|[^\p{L}\p{N}_])(-?)(repo|repos|repository|repositories|org|orgs|organization|organizations|user|users|owner)\s*:\s*("[^"]*"?|[^\s()"',;]*)/giu;
/** Where a qualifier is a qualifier in GitHub's documented syntax: at the start, after a space or an opening parenthesis. */
const CANONICAL_START = /^(?:|\s|\()$/;

/**
 * The --repos allowlist. GitHub names are case-insensitive, so matching is too. Applied in one
 * place, the request hook of every Octokit instance (see github-client.ts), never by a tool.
 */
export class RepoAllowlist {
  constructor(readonly patterns: readonly RepoPattern[]) {}

  allows(owner: string, repo: string): boolean {
    const o = owner.toLowerCase();
    const r = repo.toLowerCase();
    return this.patterns.some((p) => p.owner === o && (p.repo === '*' || p.repo === r));
  }

  /** Whether every repository of `owner` is allowed (an `owner/*` entry). */
  allowsWholeOwner(owner: string): boolean {
    const o = owner.toLowerCase();
    return this.patterns.some((p) => p.owner === o && p.repo === '*');
  }

  allowsFullName(name: string): boolean {
    const [owner, repo] = name.split('/');
    return owner !== undefined && repo !== undefined && this.allows(owner, repo);
  }

  /** The owners that appear in the list (for completion). */
  owners(): string[] {
    return [...new Set(this.patterns.map((p) => p.owner))];
  }

  describe(): string {
    return this.patterns.map((p) => `${p.owner}/${p.repo}`).join(', ');
  }

  refusal(what: string): ToolError {
    return ToolError.accessDenied(`${what} is outside this server's repository allowlist (--repos ${this.describe()}). Work in one of those repositories, or ask the operator to add it.`);
  }

  /**
   * A search query limited to the allowlist. Every qualifier that names a repository or an owner
   * must name an allowed one exactly (`owner/name`, nothing more; a whole owner only with an
   * `owner/*` entry), or the query is refused: GitHub ORs repository qualifiers and would search
   * the other one too. Exclusions (`-repo:`) never widen a search and are kept. The allowlist's
   * own qualifiers are added unless the query already limits itself in GitHub's documented syntax
   * (and has no OR, which could take a term out of that limit). Results are filtered by
   * repository as well (github-client.ts), whatever the query.
   */
  scopeQuery(query: string): string {
    let limited = false;
    let odd = false;
    for (const match of query.matchAll(SCOPE_QUALIFIER)) {
      if (match[2] === '-') continue;
      const kind = match[3]!.toLowerCase();
      const value = match[4]!.replace(/^"|"$/g, '');
      const written = `${kind}:${value}`;
      const repoKind = kind.startsWith('repo');
      const [owner = '', repo, ...rest] = value.split('/');
      const allowed = repoKind
        ? repo !== undefined && rest.length === 0 && isOwnerName(owner) && isRepoName(repo) && this.allows(owner, repo)
        : repo === undefined && isOwnerName(owner) && this.allowsWholeOwner(owner);
      if (!allowed) throw this.refusal(`The search qualifier ${written}`);
      if (CANONICAL_START.test(match[1]!) && /^(?:repo|org|user)$/.test(kind) && !/:\s/.test(match[0]) && !match[4]!.startsWith('"')) limited = true;
      else odd = true;
    }
    if (limited && !odd && !/(^|\s)OR(\s|$)/.test(query)) return query;
    const qualifiers = this.patterns.map((p) => (p.repo === '*' ? `user:${p.owner}` : `repo:${p.owner}/${p.repo}`));
    return `${query.trim()} ${qualifiers.join(' ')}`.trim();
  }
}
