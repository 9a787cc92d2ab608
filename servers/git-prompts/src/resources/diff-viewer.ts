import { appResource, type ResourceDefinition } from '@suite/shared';

/** The diff viewer app: the diff tools and git_show name it; built to dist/apps/diff.html. */
export const DIFF_VIEWER_URI = 'ui://git-prompts/diff.html';

/** The tools whose answers the viewer shows. */
export const DIFF_TOOLS: ReadonlySet<string> = new Set(['git_diff_unstaged', 'git_diff_staged', 'git_diff', 'git_show']);

export function diffViewerResource(): ResourceDefinition {
  return appResource({
    uri: DIFF_VIEWER_URI,
    name: 'diff-viewer',
    title: 'Diff viewer',
    description: 'The MCP App hosts show with the diff tools and git_show: the changed files with their counts, the diff unified or side by side, binary and renamed files, and what the budget left out.',
    from: import.meta.url,
    file: 'diff.html',
  });
}
