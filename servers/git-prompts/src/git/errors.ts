import { escapeTerminalControlsInLine, ToolError, type ProcessResult } from '@suite/shared';

/** Where a repository lives, for taking its paths out of git's messages. */
export interface PathsToHide {
  top: string;
  gitDir: string;
}

/**
 * The first line of git's complaint, with the repository's own paths made relative and any other
 * absolute path replaced: the user named the repository, not the host's directory layout.
 */
export function gitComplaint(stderr: string, paths?: PathsToHide): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? 'no message';
  let text = line.replace(/^(fatal|error):\s*/, '');
  if (paths) {
    for (const [real, shown] of [
      [paths.gitDir, '.git'],
      [paths.top, '.'],
    ] as const) {
      text = text.split(`${real}/`).join(shown === '.' ? '' : `${shown}/`).split(real).join(shown);
    }
  }
  text = escapeTerminalControlsInLine(text.replace(/(^|[\s'"(])\/[^\s'"):]+/g, '$1<path>'));
  return text.length > 300 ? `${text.slice(0, 297)}...` : text;
}

/** The ToolError for a git call that failed, chosen from what git said. */
export function gitFailure(result: Pick<ProcessResult, 'stderr' | 'exitCode'>, what: string, paths?: PathsToHide): ToolError {
  const stderr = result.stderr;
  if (/dubious ownership/.test(stderr)) {
    return ToolError.accessDenied(
      'git refuses this repository because it belongs to another user. If you trust it, add it to safe.directory in your own global git configuration (git config --global --add safe.directory PATH) and restart the server.',
    );
  }
  if (/not a git repository/i.test(stderr)) return ToolError.notFound('This directory is not inside a git repository.');
  if (/does not have any commits yet|bad default revision 'HEAD'|ambiguous argument 'HEAD'/.test(stderr)) {
    return ToolError.notFound('The repository has no commits yet.');
  }
  if (/index\.lock': File exists|Unable to create .*\.lock/.test(stderr)) {
    return ToolError.conflict('Another git process is working in this repository (its index.lock file exists). Wait for it to finish and try again; if none is running, remove .git/index.lock.');
  }
  return new ToolError(`${what} failed: ${gitComplaint(stderr, paths)}`, 'failed');
}
