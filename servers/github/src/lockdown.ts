import { TRUSTED_BOTS } from './config.js';
import { httpStatus } from './github-errors.js';
import type { GithubApi, GithubClients } from './github-client.js';

/** Answers are remembered this long: permissions change rarely, and every call would otherwise cost a request per author. */
const TTL_MS = 10 * 60_000;

/**
 * --lockdown: on a public repository anyone can open an issue or comment, so a model reading it
 * reads a stranger's instructions. In lockdown, content reaches the model only when its author has
 * push access to the repository, is the token's own user or a trusted bot; everything on a private
 * repository passes (its authors were let in). Lookups that fail count as "no" (fail closed).
 *
 * One per session; cached per Octokit instance, that is per token, so a decision made with one
 * user's credentials never serves another.
 */
export class Lockdown {
  private readonly cache = new WeakMap<GithubApi, Map<string, { at: number; value: Promise<boolean> }>>();

  constructor(private readonly clients: GithubClients) {}

  private remember(api: GithubApi, key: string, compute: () => Promise<boolean>): Promise<boolean> {
    let entries = this.cache.get(api);
    if (!entries) {
      entries = new Map();
      this.cache.set(api, entries);
    }
    const hit = entries.get(key);
    if (hit && Date.now() - hit.at < TTL_MS) return hit.value;
    const value = compute();
    entries.set(key, { at: Date.now(), value });
    // A failed lookup is not remembered: the next call asks again.
    value.catch(() => entries.delete(key));
    return value;
  }

  private isPrivate(api: GithubApi, owner: string, repo: string): Promise<boolean> {
    return this.remember(api, `private:${owner}/${repo}`.toLowerCase(), async () => (await api.rest.repos.get({ owner, repo })).data.private);
  }

  private hasPush(api: GithubApi, owner: string, repo: string, login: string): Promise<boolean> {
    return this.remember(api, `push:${owner}/${repo}:${login}`.toLowerCase(), async () => {
      try {
        const { data } = await api.rest.repos.getCollaboratorPermissionLevel({ owner, repo, username: login });
        const role = (data.role_name ?? '').toLowerCase();
        return data.permission === 'admin' || data.permission === 'write' || role === 'maintain' || role === 'write' || role === 'admin';
      } catch (error) {
        // Not a collaborator, or the token may not ask: either way, not trusted.
        if (httpStatus(error) === 404 || httpStatus(error) === 403) return false;
        throw error;
      }
    });
  }

  /** Whether content written by `login` in owner/repo may reach the model. */
  async trusts(api: GithubApi, owner: string, repo: string, login: string | null | undefined): Promise<boolean> {
    if (!login) return false;
    const name = login.toLowerCase();
    if (TRUSTED_BOTS.includes(name)) return true;
    if (await this.isPrivate(api, owner, repo)) return true;
    if (name === (await this.clients.viewerLogin(api)).toLowerCase()) return true;
    return this.hasPush(api, owner, repo, login);
  }

  /** The items whose authors are trusted, and how many were held back. */
  async filter<T>(api: GithubApi, owner: string, repo: string, items: readonly T[], author: (item: T) => string | null | undefined): Promise<{ items: T[]; hidden: number }> {
    const verdicts = await Promise.all(items.map((item) => this.trusts(api, owner, repo, author(item))));
    const kept = items.filter((_, i) => verdicts[i]);
    return { items: kept, hidden: items.length - kept.length };
  }
}
