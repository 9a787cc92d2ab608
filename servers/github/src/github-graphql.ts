import type { GithubCall } from './github-session.js';
import { GRAPHQL_TARGET, GRAPHQL_TARGET_OF_ERROR, type GraphqlTarget } from './graphql-target.js';

/**
 * GitHub's GraphQL API, for what REST does not have (discussions, review threads and their resolved
 * state, comments on a pending review). Every request names the repository it addresses, as a
 * REST path does: the request hook (github-client.ts) checks it against --repos, refuses a request
 * whose `owner`/`name` variables name another one, and picks the token of that owner
 * (--token-for). The answer is cleaned and redacted like every JSON answer (github-request.ts).
 */

/** A query or mutation about `target`; `document` is one named operation, `variables` its values. */
export async function graphql<T>(call: GithubCall, target: GraphqlTarget, document: string, variables: Record<string, unknown> = {}): Promise<T> {
  try {
    return await call.api.graphql<T>(document, { ...variables, request: { [GRAPHQL_TARGET]: target } });
  } catch (error) {
    if (error && typeof error === 'object') Object.defineProperty(error, GRAPHQL_TARGET_OF_ERROR, { value: `${target.owner}/${target.repo}` });
    throw error;
  }
}

/** GraphQL's page arguments as GitHub takes them: `first` (1..100) and the cursor `after`. */
export function pageArgs(args: { per_page?: number | undefined; after?: string | undefined }, fallback = 30): { first: number; after: string | null } {
  return { first: args.per_page ?? fallback, after: args.after ?? null };
}

/** What follows a page of a GraphQL connection: how to ask for the next one. */
export function nextCursor(pageInfo: { hasNextPage?: boolean | null; endCursor?: string | null } | null | undefined, shown: number, total: number | null | undefined): string {
  if (!pageInfo?.hasNextPage || !pageInfo.endCursor) return '';
  return `\n${shown} of ${typeof total === 'number' ? total : '?'}. More: call again with after: ${JSON.stringify(pageInfo.endCursor)}.`;
}
