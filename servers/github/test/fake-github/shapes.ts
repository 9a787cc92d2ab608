import type { RestEndpointMethodTypes } from '@octokit/rest';

/**
 * GitHub's response shapes, as the Octokit in use types them (from GitHub's OpenAPI description).
 * Every renderer of the fake returns one of these, so the compiler checks that the fake answers
 * with every field GitHub's description requires, with the types (and nulls) it allows.
 */
type R = RestEndpointMethodTypes;
type Data<T> = T extends { response: { data: infer D } } ? D : never;

export type SimpleUser = NonNullable<Data<R['issues']['get']>['user']>;
export type PrivateUser = Data<R['users']['getAuthenticated']>;
export type PublicUser = Data<R['users']['getByUsername']>;
export type FullRepository = Data<R['repos']['get']>;
export type MinimalRepository = Data<R['repos']['listForUser']>[number];
export type RepoSearchItem = Data<R['search']['repos']>['items'][number];
export type CollaboratorPermission = Data<R['repos']['getCollaboratorPermissionLevel']>;
export type FileContent = Extract<Data<R['repos']['getContent']>, { type: 'file' }>;
export type DirectoryItem = Extract<Data<R['repos']['getContent']>, unknown[]>[number];
export type FileCommit = Data<R['repos']['createOrUpdateFileContents']>;
export type GitRef = Data<R['git']['getRef']>;
export type GitCommit = Data<R['git']['getCommit']>;
export type GitTree = Data<R['git']['createTree']>;
export type GitBlobCreated = Data<R['git']['createBlob']>;
export type ShortBranch = Data<R['repos']['listBranches']>[number];
export type Tag = Data<R['repos']['listTags']>[number];
export type Commit = Data<R['repos']['getCommit']>;
export type CommitListItem = Data<R['repos']['listCommits']>[number];
export type Issue = Data<R['issues']['get']>;
export type IssueSearchItem = Data<R['search']['issuesAndPullRequests']>['items'][number];
export type IssueComment = Data<R['issues']['getComment']>;
export type Label = Data<R['issues']['getLabel']>;
export type PullRequest = Data<R['pulls']['get']>;
export type PullRequestListItem = Data<R['pulls']['list']>[number];
export type PullRequestFile = Data<R['pulls']['listFiles']>[number];
export type PullRequestMerge = Data<R['pulls']['merge']>;
export type Review = Data<R['pulls']['getReview']>;
export type ReviewComment = Data<R['pulls']['getReviewComment']>;
export type CombinedStatus = Data<R['repos']['getCombinedStatusForRef']>;
export type CheckRunList = Data<R['checks']['listForRef']>;
export type Release = Data<R['repos']['getLatestRelease']>;
export type CodeSearchItem = Data<R['search']['code']>['items'][number];
export type UserSearchItem = Data<R['search']['users']>['items'][number];
export type WorkflowRun = Data<R['actions']['getWorkflowRun']>;
export type Job = Data<R['actions']['getJobForWorkflowRun']>;
export type Thread = Data<R['activity']['getThread']>;
export type Organization = Data<R['orgs']['listForAuthenticatedUser']>[number];
