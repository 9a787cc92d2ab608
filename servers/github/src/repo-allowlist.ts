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

/** Search qualifiers that scope a query to owners or repositories. */
const SCOPE_QUALIFIER = /(^|[\s(])(-?)(repo|org|user|owner):("[^"]*"|[^\s()]+)/gi;

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
   * A search query limited to the allowlist. A query that already names only allowed repositories
   * (or whole owners that are allowed) is kept; one that names anything else is refused, because
   * GitHub ORs repository qualifiers and would otherwise search it too; a query with no scope gets
   * the allowlist's qualifiers added.
   */
  scopeQuery(query: string): string {
    const positive: { kind: string; value: string }[] = [];
    for (const match of query.matchAll(SCOPE_QUALIFIER)) {
      if (match[2] === '-') continue; // An exclusion never widens a search.
      positive.push({ kind: match[3]!.toLowerCase(), value: match[4]!.replace(/^"|"$/g, '') });
    }
    for (const { kind, value } of positive) {
      const allowed = kind === 'repo' ? this.allowsFullName(value) : this.allowsWholeOwner(value);
      if (!allowed) throw this.refusal(`The search qualifier ${kind}:${value}`);
    }
    if (positive.length > 0) return query;
    const qualifiers = this.patterns.map((p) => (p.repo === '*' ? `user:${p.owner}` : `repo:${p.owner}/${p.repo}`));
    return `${query.trim()} ${qualifiers.join(' ')}`.trim();
  }
}
