/**
 * The repository a GraphQL request addresses, as it travels from a tool (github-graphql.ts) to the
 * request hook (github-client.ts) and to error mapping (github-errors.ts). A leaf module.
 */

/** The repository a GraphQL request addresses. */
export interface GraphqlTarget {
  owner: string;
  repo: string;
}

/** Where the target travels in Octokit's options: under `request`, which Octokit never sends. */
export const GRAPHQL_TARGET = 'suiteGraphqlTarget';

/** Where githubFailure finds the repository of a failed GraphQL request (its URL names none). */
export const GRAPHQL_TARGET_OF_ERROR = Symbol('graphqlTarget');

/** The target of a request's Octokit options, when it has a well-formed one. */
export function graphqlTargetOf(options: { request?: unknown }): GraphqlTarget | undefined {
  const request = options.request as Record<string, unknown> | undefined;
  const target = request?.[GRAPHQL_TARGET] as Partial<GraphqlTarget> | undefined;
  return typeof target?.owner === 'string' && typeof target.repo === 'string' ? { owner: target.owner, repo: target.repo } : undefined;
}

/** The repository ("owner/repo") a failed GraphQL request addressed, if it was one. */
export function failedGraphqlTarget(error: unknown): string | undefined {
  const target = error && typeof error === 'object' ? (error as Record<symbol, unknown>)[GRAPHQL_TARGET_OF_ERROR] : undefined;
  return typeof target === 'string' ? target : undefined;
}
