import type { RestEndpointMethodTypes } from '@octokit/rest';

/**
 * GitHub's REST shapes as the Octokit in use types them (one version of the OpenAPI description
 * for the server and its fake GitHub).
 */
type Data<Namespace extends keyof RestEndpointMethodTypes, Method extends keyof RestEndpointMethodTypes[Namespace]> = RestEndpointMethodTypes[Namespace][Method] extends {
  response: { data: infer D };
}
  ? D
  : never;

export type ContentsAnswer = Data<'repos', 'getContent'>;
export type FileEntry = Extract<ContentsAnswer, { type: 'file' }>;
export type DirectoryEntry = Extract<ContentsAnswer, unknown[]>[number];
export type SymlinkEntry = Extract<ContentsAnswer, { type: 'symlink' }>;
export type SubmoduleEntry = Extract<ContentsAnswer, { type: 'submodule' }>;
export type FileCommit = Data<'repos', 'createOrUpdateFileContents'>;
export type GitRef = Data<'git', 'getRef'>;
export type Issue = Data<'issues', 'get'>;
export type SearchIssueItem = Data<'search', 'issuesAndPullRequests'>['items'][number];
