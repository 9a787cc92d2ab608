import type { GitRepository } from './git/repository.js';
import { readLog } from './git/log.js';

/** How the repository writes its commit messages, learned from its recent history. */
export interface CommitStyle {
  conventional: boolean;
  /** Recent subjects (merges left out), newest first. */
  examples: string[];
}

const CONVENTIONAL = /^(feat|fix|docs|style|refactor|perf|test|tests|build|ci|chore|revert|deps)(\([^)]*\))?!?: \S/i;

export function isConventional(subject: string): boolean {
  return CONVENTIONAL.test(subject);
}

/** Conventional Commits when at least half of the last 20 non-merge subjects follow it. */
export async function commitStyle(repo: GitRepository, signal?: AbortSignal): Promise<CommitStyle> {
  const { commits } = await readLog(repo, { maxCount: 20, ...(signal ? { signal } : {}) });
  const subjects = commits.filter((c) => c.parents.length < 2).map((c) => c.subject);
  const conventional = subjects.length >= 3 && subjects.filter(isConventional).length / subjects.length >= 0.5;
  return { conventional, examples: subjects.slice(0, 8) };
}

/**
 * The instructions of the git-commit prompt and of draft_commit_message: one text, so a client
 * with sampling and one without get the same request.
 */
export function commitInstructions(what: string, style: CommitStyle | undefined): string {
  const lines = [
    `Write a git commit message for ${what}.`,
    '',
    '- First line: a summary in the imperative mood ("Add", "Fix", not "Added"), at most 72 characters (50 is better), no trailing period.',
  ];
  if (style?.conventional) {
    lines.push(
      '- This repository uses Conventional Commits: start the summary with a type (feat, fix, docs, refactor, perf, test, build, ci, chore), an optional scope in parentheses and a colon, e.g. "fix(parser): handle empty input". Mark a breaking change with "!" after the type and a "BREAKING CHANGE:" footer.',
    );
  }
  lines.push(
    '- Then a blank line and a body wrapped at 72 characters that says what changed and why (not how). Leave the body out when the summary says it all.',
    '- Describe only what the diff shows; do not invent a motivation. If it mixes unrelated changes, say so and suggest splitting the commit.',
  );
  if (style && style.examples.length > 0) {
    lines.push('', 'Recent commit subjects in this repository, for its style:', ...style.examples.map((s) => `  ${s}`));
  }
  lines.push('', 'Answer with the commit message only: no code fence, no commentary.');
  return lines.join('\n');
}
