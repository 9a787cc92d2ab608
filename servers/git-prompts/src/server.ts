import { createRequire } from 'node:module';
import { SuiteServer, toolList, type AnyToolDefinition, type ChangeHub, type ChangeSource, type SessionInfo, type ToolSelection } from '@suite/shared';
import { DIFF_TOOLS, DIFF_VIEWER_URI, diffViewerResource } from './resources/diff-viewer.js';
import { TOOLSETS } from './config.js';
import { changelogPrompt } from './prompts/changelog.js';
import { explainCodePrompt } from './prompts/explain-code.js';
import { gitCommitPrompt } from './prompts/git-commit.js';
import { prDescriptionPrompt } from './prompts/pr-description.js';
import { resolveConflictsPrompt } from './prompts/resolve-conflicts.js';
import { reviewBranchPrompt } from './prompts/review-branch.js';
import { reviewChangesPrompt } from './prompts/review-changes.js';
import { summarizeChangesPrompt } from './prompts/summarize-changes.js';
import { compareResource, stagedDiffResource, unstagedDiffResource } from './resources/diffs.js';
import { blameResource, stashResource } from './resources/everyday.js';
import { fileResource } from './resources/file.js';
import { logRangeResource, logResource } from './resources/log.js';
import { showResource } from './resources/show.js';
import { statusResource } from './resources/status.js';
import { gitBlame } from './tools/blame.js';
import { gitBranch } from './tools/branch.js';
import { gitCherryPick, gitMerge, gitRebase, gitRevert } from './tools/integrate.js';
import { gitReflog } from './tools/reflog.js';
import { gitFetch, gitPull, gitPush } from './tools/remote-sync.js';
import { gitRemoteList } from './tools/remotes.js';
import { gitClean, gitRestore } from './tools/restore.js';
import { gitStashApply, gitStashDrop, gitStashList, gitStashPop, gitStashPush, gitStashShow } from './tools/stash.js';
import { gitTagCreate, gitTagDelete, gitTagList } from './tools/tags.js';
import { gitWorktreeAdd, gitWorktreeList, gitWorktreeRemove } from './tools/worktrees.js';
import { gitCheckout, gitCreateBranch } from './tools/branches.js';
import { gitCommit } from './tools/commit.js';
import { gitDiff, gitDiffStaged, gitDiffUnstaged } from './tools/diff.js';
import { draftCommitMessage } from './tools/draft-commit-message.js';
import { gitLog } from './tools/log.js';
import { gitShow } from './tools/show.js';
import { gitAdd, gitReset } from './tools/stage.js';
import { gitStatus } from './tools/status.js';
import { safePrompt, safeTemplate, safeTool } from './terminal.js';
import { Workspace } from './workspace.js';

export type { GitPromptsConfig, DiffBudget } from './config.js';
export { DEFAULT_BUDGET, DEFAULT_EXCLUDES, DEFAULTS, TOOLSETS } from './config.js';
export { Workspace } from './workspace.js';

const pkg = createRequire(import.meta.url)('../package.json') as { name: string; version: string };
export const VERSION = pkg.version;

/**
 * Every tool, built once per workspace and shared by all sessions. The write tools are always in
 * the list: read-only mode (the default; --allow-write lifts it) removes them, as it removes every
 * tool whose readOnlyHint is false. Every answer's text reaches clients with terminal controls
 * escaped (terminal.ts).
 */
const tools = toolList<Workspace>(
  [
    gitStatus,
    gitDiffUnstaged,
    gitDiffStaged,
    gitDiff,
    gitLog,
    gitShow,
    gitBranch,
    draftCommitMessage,
    gitAdd,
    gitReset,
    gitCommit,
    gitCreateBranch,
    gitCheckout,
    gitBlame,
    gitStashList,
    gitStashShow,
    gitWorktreeList,
    gitTagList,
    gitReflog,
    gitRemoteList,
    gitStashPush,
    gitStashApply,
    gitStashPop,
    gitStashDrop,
    gitTagCreate,
    gitTagDelete,
    gitWorktreeAdd,
    gitWorktreeRemove,
    gitMerge,
    gitRebase,
    gitCherryPick,
    gitRevert,
    gitRestore,
    gitClean,
  ].map((make) => safeTool(withDiffViewer(make as (ws: Workspace) => AnyToolDefinition))),
);

/** The tools that talk to a remote: registered only with --allow-remote (and, since they write, --allow-write). */
const remoteTools = toolList<Workspace>([gitFetch, gitPull, gitPush].map((make) => safeTool(make as (ws: Workspace) => AnyToolDefinition)));

/** The diff tools and git_show come with the diff viewer app (hosts without apps ignore it: the text answer is the same). */
function withDiffViewer(make: (ws: Workspace) => AnyToolDefinition): (ws: Workspace) => AnyToolDefinition {
  return (ws) => {
    const tool = make(ws);
    return DIFF_TOOLS.has(tool.name) ? { ...tool, app: { resourceUri: DIFF_VIEWER_URI } } : tool;
  };
}

/** The viewer's resource: one definition for every session (its HTML is read once per process). */
const diffViewer = diffViewerResource();

const INSTRUCTIONS = `Works with the git repositories the user allowed (command-line paths or client roots).
Prompts (git-commit, review-changes, pr-description, summarize-changes, changelog, explain-code, resolve-conflicts,
review-branch) attach
the diff or log as git:// resources. Tools take repo_path (a path or a repository name), optional when
there is only one repository. Diffs are cut to a budget and say what they left out: ask for one file with
path to see more. Revisions are branch, tag or commit names; nothing is sent to a remote unless --allow-remote. Merges, rebases,
cherry-picks, reverts and stash applies that stop on conflicts answer with the conflicts (both sides and the base):
resolve, git_add, then call the same tool with action continue (or abort).`;

/**
 * Resources and prompts, like tools, are built once per workspace and registered by every session:
 * their handlers take everything per session from `ctx`.
 */
const builtRegistrations = new WeakMap<Workspace, ((server: SuiteServer) => void)[]>();

function registrations(workspace: Workspace): ((server: SuiteServer) => void)[] {
  let built = builtRegistrations.get(workspace);
  if (!built) {
    const templates = [statusResource, stagedDiffResource, unstagedDiffResource, logResource, logRangeResource, compareResource, showResource, fileResource, blameResource, stashResource].map(
      (make) => safeTemplate(make(workspace)),
    );
    // Each prompt keeps its own argument type, so each gets its own registering closure.
    const [commit, explain, review, pr, summarize, changelog, resolve, reviewBranch] = [
      safePrompt(gitCommitPrompt(workspace)),
      safePrompt(explainCodePrompt(workspace)),
      safePrompt(reviewChangesPrompt(workspace)),
      safePrompt(prDescriptionPrompt(workspace)),
      safePrompt(summarizeChangesPrompt(workspace)),
      safePrompt(changelogPrompt(workspace)),
      safePrompt(resolveConflictsPrompt(workspace)),
      safePrompt(reviewBranchPrompt(workspace)),
    ] as const;
    built = [
      ...templates.map((template) => (server: SuiteServer) => void server.resourceTemplate(template)),
      (server) => void server.prompt(commit),
      (server) => void server.prompt(explain),
      (server) => void server.prompt(review),
      (server) => void server.prompt(pr),
      (server) => void server.prompt(summarize),
      (server) => void server.prompt(changelog),
      (server) => void server.prompt(resolve),
      (server) => void server.prompt(reviewBranch),
    ];
    builtRegistrations.set(workspace, built);
  }
  return built;
}

export interface ServerOptions {
  selection?: ToolSelection;
  session?: SessionInfo;
  /** The process-wide change hub: enables resources/subscribe. */
  changes?: ChangeHub;
}

/** Builds the server for one session: it only assembles. */
export function buildServer(workspace: Workspace, options: ServerOptions = {}): SuiteServer {
  const server = new SuiteServer({
    name: pkg.name,
    version: pkg.version,
    instructions: INSTRUCTIONS,
    toolsets: TOOLSETS,
    roots: { directories: workspace.config.directories, aliases: workspace.config.aliases },
    selection: options.selection ?? { readOnly: true },
    ...(options.changes ? { changes: options.changes } : {}),
    ...(options.session ? { session: options.session } : {}),
  });
  server.tools(workspace.config.allowRemote ? [...tools(workspace), ...remoteTools(workspace)] : tools(workspace));
  for (const register of registrations(workspace)) register(server);
  server.resource(diffViewer);

  followRepositories(server, workspace);
  return server;
}

/** How often the directories are scanned again for repositories appearing below their top level. */
const RESCAN_MS = 2000;

/**
 * Prompts and resources take a repository, so when the set of repositories changes clients must
 * refresh their lists. It changes when the client's roots change, and when a repository is cloned
 * into or removed from an allowed directory: the directories themselves are watched (a clone or a
 * removal right below them is seen at once) and scanned again every RESCAN_MS through a poll
 * source of the change hub (deeper ones, up to --scan-depth). Sessions with the same roots share
 * the watch and the scans.
 */
function followRepositories(server: SuiteServer, workspace: Workspace): void {
  let roots: readonly string[] = workspace.config.directories;
  let known = workspace.listFor(roots).then(names, () => '');
  let release: (() => Promise<void>) | undefined;

  const recheck = (dirs: readonly string[], fresh: boolean): void => {
    const previous = known;
    const next = workspace.listFor(dirs, { fresh }).then(names, () => '');
    known = next;
    void Promise.all([previous, next]).then(([before, after]) => {
      if (before === after) return;
      server.listChanged('prompts');
      server.listChanged('resources');
    });
  };

  const observe = (dirs: readonly string[]): void => {
    void release?.();
    release = undefined;
    if (dirs.length === 0) return;
    const key = `git-prompts:repositories:${dirs.join('\0')}`;
    const source = async (): Promise<ChangeSource> => ({
      paths: [...dirs],
      poll: { intervalMs: RESCAN_MS, signature: async () => names(await workspace.listFor(dirs, { fresh: true })) },
    });
    void server
      .observe(key, source, () => {
        if (roots === dirs) recheck(dirs, true);
      })
      .then(
        (dispose) => {
          // The roots changed while this was being set up: it is already out of date.
          if (roots === dirs) release = dispose;
          else void dispose();
        },
        (error: unknown) => server.log.warning('Following the allowed directories for new repositories failed; lists are refreshed only when the roots change.', { error: String(error) }),
      );
  };

  observe(roots);
  server.onRootsChanged((snapshot) => {
    roots = snapshot.directories;
    recheck(roots, false);
    observe(roots);
  });
}

function names(list: readonly { name: string; path: string }[]): string {
  return list.map((r) => `${r.name}\0${r.path}`).join('\n');
}
