import { ToolError, oauthGrantOf, type Logger, type RequestContext } from '@suite/shared';
import type { GithubConfig } from './config.js';
import { GithubClients, runWithSignal, type GithubApi } from './github-client.js';
import { githubFailure } from './github-errors.js';
import { Lockdown } from './lockdown.js';
import { TokenRedactor } from './token-redaction.js';

/** What a tool, resource or prompt handler gets for one call. */
export interface GithubCall {
  /** The session's Octokit for this request's token. */
  api: GithubApi;
  config: GithubConfig;
  ctx: RequestContext;
  /** The login the token acts as. */
  viewerLogin(): Promise<string>;
  /** The repository's real default branch (never assumed to be main). */
  defaultBranch(owner: string, repo: string): Promise<string>;
  /**
   * With --lockdown, keeps the items whose authors may reach the model and counts the rest; without
   * it, keeps everything.
   */
  trusted<T>(owner: string, repo: string, items: readonly T[], author: (item: T) => string | null | undefined): Promise<{ items: T[]; hidden: number }>;
  /**
   * The tokens this call could expose, out of a text (token-redaction.ts). Every answer passes it on
   * the way out anyway; a handler that cuts text it read from a stream (log lines) calls it first,
   * so that a cut cannot leave half a token.
   */
  redact(text: string): string;
  /** With --lockdown, refuses content by an untrusted author; `what` names it ("issue #3"). */
  requireTrusted(owner: string, repo: string, login: string | null | undefined, what: string): Promise<void>;
}

/**
 * One session's access to GitHub: its Octokit instances (one per token, built on first use), its
 * lockdown cache, and the one way every handler calls GitHub (`run`): with the request's token,
 * the call's cancellation and time budget on every request, and failures mapped for the model.
 */
export class GithubSession {
  readonly clients: GithubClients;
  private readonly lockdown: Lockdown | undefined;
  private readonly basePath: string;
  /** The redactor of each token this session acts with (with the operator's): built once per token. */
  private readonly redactors = new Map<string, TokenRedactor>();

  constructor(
    readonly config: GithubConfig,
    log: Logger,
  ) {
    this.clients = new GithubClients(config, log.child('api'));
    this.lockdown = config.lockdown ? new Lockdown(this.clients) : undefined;
    this.basePath = new URL(config.apiUrl).pathname.replace(/\/+$/, '');
  }

  /**
   * The token a request acts with. In OAuth mode, the GitHub token the calling principal authorized
   * (asked for through a URL elicitation when there is none yet): never the MCP request's own token,
   * which is for this server alone. Otherwise the session's bearer token over HTTP (shared checked
   * it; the environment token only stands in when the operator allowed that), else the operator's.
   */
  private async tokenFor(ctx: RequestContext): Promise<string | undefined> {
    const authorizations = this.config.authorizations;
    if (!authorizations) return ctx.auth?.token ?? this.config.token;
    const grant = oauthGrantOf(ctx.auth);
    if (!grant) throw ToolError.accessDenied('This call carries no signed-in user, so it cannot act on GitHub.');
    const token = await authorizations.tokenFor(grant.key, ctx);
    // Redacted from this session's log lines and errors like any session credential.
    ctx.secrets.add(token);
    return token;
  }

  /**
   * What removes the tokens this call could expose: the one it acts with and the operator's (which
   * the process holds whatever the session), in every recognised form (token-redaction.ts).
   */
  private redactorWith(token: string | undefined, ctx: RequestContext): TokenRedactor {
    const key = `${token ?? ''}\n${this.config.token ?? ''}\n${ctx.auth?.token ?? ''}`;
    let redactor = this.redactors.get(key);
    if (!redactor) {
      redactor = new TokenRedactor([token, this.config.token, ctx.auth?.token, ...Object.values(this.config.ownerTokens ?? {})]);
      this.redactors.set(key, redactor);
    }
    return redactor;
  }

  /**
   * The operator's per-owner tokens apply where the operator's token does (stdio, or an HTTP
   * session the operator let fall back to it); a session that brought its own token acts with it
   * alone, so no client ever borrows the operator's accounts.
   */
  private ownerTokensFor(ctx: RequestContext): Readonly<Record<string, string>> | undefined {
    const own = ctx.auth !== undefined && ctx.auth.clientId !== 'environment';
    return own ? undefined : this.config.ownerTokens;
  }

  /** `notes`, if given, collects what the caller should add to its answer (a redirect GitHub led the call through). */
  async run<T>(ctx: RequestContext, permission: string, fn: (call: GithubCall) => Promise<T>, notes?: string[], scope = 'repo'): Promise<T> {
    const token = await this.tokenFor(ctx);
    const ownerTokens = this.ownerTokensFor(ctx);
    const api = this.clients.forToken(token, ownerTokens);
    const budgetMs = this.config.throttle.requestTimeoutMs;
    const deadline = AbortSignal.timeout(budgetMs);
    const signal = AbortSignal.any([ctx.signal, deadline]);
    const lockdown = this.lockdown;
    const redactor = this.redactorWith(token, ctx);
    const call: GithubCall = {
      redact: (text) => redactor.redactText(text),
      api,
      config: this.config,
      ctx,
      viewerLogin: () => this.clients.viewerLogin(api),
      defaultBranch: async (owner, repo) => (await api.rest.repos.get({ owner, repo })).data.default_branch,
      trusted: async (owner, repo, items, author) => (lockdown ? lockdown.filter(api, owner, repo, items, author) : { items: [...items], hidden: 0 }),
      requireTrusted: async (owner, repo, login, what) => {
        if (lockdown && !(await lockdown.trusts(api, owner, repo, login))) {
          throw ToolError.accessDenied(
            `Lockdown mode withholds ${what}: its author${login ? ` @${login}` : ''} has no push access to ${owner}/${repo}, which is public. Content from such authors is not shown (--lockdown).`,
          );
        }
      },
    };
    // Whatever the call returns or fails with passes the token redactor on its way out, so no
    // answer, note or error of any tool, resource, prompt or completion carries a token, however
    // GitHub echoed it (token-redaction.ts).
    try {
      const result = await runWithSignal(signal, () => fn(call), notes);
      if (notes) notes.splice(0, notes.length, ...notes.map((n) => redactor.redactText(n)));
      return redactor.redactDeep(result);
    } catch (error) {
      // GitHub no longer takes the principal's token (revoked, expired): forget it, so the next call asks again.
      const grant = this.config.authorizations ? oauthGrantOf(ctx.auth) : undefined;
      if (grant && (error as { status?: unknown }).status === 401) {
        await this.config.authorizations!.forget(grant.key);
        throw ToolError.accessDenied('GitHub no longer accepts your authorization of this server (revoked or expired). Call the tool again to authorize it anew.');
      }
      if (notes) notes.splice(0, notes.length, ...notes.map((n) => redactor.redactText(n)));
      const failure = githubFailure(error, {
        permission,
        scope,
        basePath: this.basePath,
        authenticated: token !== undefined,
        ownersWithTokens: new Set(Object.keys(ownerTokens ?? {})),
        cancelled: ctx.signal.aborted,
        timedOutAfterMs: deadline.aborted && !ctx.signal.aborted ? budgetMs : undefined,
      });
      if (failure instanceof Error) failure.message = redactor.redactText(failure.message);
      throw failure;
    }
  }
}
