import { promises as fs } from 'node:fs';
import path from 'node:path';
import { countOf } from '@suite/shared';
import type { GitRepository } from './repository.js';
import { readStatus } from './status.js';

/** An operation whose state lives in the git directory of a worktree. */
export interface Operation {
  /** The file or directory of the git directory that marks it. */
  file: string;
  /** The operation, for messages ("a merge"). */
  what: string;
  /** The tool that goes on with it or abandons it. */
  tool: 'git_merge' | 'git_rebase' | 'git_cherry_pick' | 'git_revert' | undefined;
  /** How to finish it, for messages. */
  finish: string;
}

/** Operations whose state lives in the git directory, in the order git itself checks them. */
export const IN_PROGRESS: readonly Operation[] = [
  { file: 'rebase-merge', what: 'a rebase', tool: 'git_rebase', finish: 'git_rebase with action continue (after resolving and staging), skip or abort' },
  { file: 'rebase-apply', what: 'a rebase or git am', tool: undefined, finish: 'git rebase --continue / git am --continue, or --abort, in a terminal' },
  { file: 'MERGE_HEAD', what: 'a merge', tool: 'git_merge', finish: 'git_merge with action continue once the conflicts are resolved and staged (git_add), or abort' },
  { file: 'CHERRY_PICK_HEAD', what: 'a cherry-pick', tool: 'git_cherry_pick', finish: 'git_cherry_pick with action continue (after resolving and staging), skip or abort' },
  { file: 'REVERT_HEAD', what: 'a revert', tool: 'git_revert', finish: 'git_revert with action continue (after resolving and staging), skip or abort' },
];

const exists = (file: string): Promise<boolean> => fs.lstat(file).then(() => true, () => false);

/** The merge, rebase, cherry-pick or revert under way in this worktree, if any. */
export async function operationInProgress(repo: GitRepository): Promise<Operation | undefined> {
  for (const operation of IN_PROGRESS) if (await exists(path.join(repo.gitDir, operation.file))) return operation;
  // A cherry-pick or revert of several commits keeps a sequencer between its steps.
  if (await exists(path.join(repo.gitDir, 'sequencer'))) return IN_PROGRESS.find((o) => o.file === 'CHERRY_PICK_HEAD');
  return undefined;
}

/** One conflicted region of a file, as the markers in the working tree show it. */
export interface ConflictHunk {
  /** The line of the `<<<<<<<` marker, from 1. */
  line: number;
  ours: string;
  /** The merge base's text (diff3 markers); absent when git wrote none. */
  base?: string;
  theirs: string;
  oursLabel: string;
  theirsLabel: string;
}

export interface ConflictedFile {
  path: string;
  hunks: ConflictHunk[];
  /** Why no hunks are shown: binary, deleted on one side, too large, or resolved in the file already. */
  note?: string;
}

export interface ConflictReport {
  files: ConflictedFile[];
  /** What the operation in progress is, and how to go on. */
  operation?: string;
  next: string;
}

const MAX_CONFLICT_FILES = 50;
const MAX_HUNKS_PER_FILE = 20;
const MAX_FILE_BYTES = 1024 * 1024;
const MAX_SIDE_CHARS = 4000;

function clip(text: string): string {
  return text.length > MAX_SIDE_CHARS ? `${text.slice(0, MAX_SIDE_CHARS)}\n[… cut]` : text;
}

/** Parses conflict markers (merge or diff3 style) out of a file's text. */
export function parseConflictMarkers(text: string): ConflictHunk[] {
  const hunks: ConflictHunk[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length && hunks.length < MAX_HUNKS_PER_FILE; i++) {
    if (!lines[i]!.startsWith('<<<<<<<')) continue;
    const start = i;
    const oursLabel = lines[i]!.slice(7).trim();
    const ours: string[] = [];
    const base: string[] = [];
    const theirs: string[] = [];
    let part: 'ours' | 'base' | 'theirs' = 'ours';
    let theirsLabel = '';
    let closed = false;
    let hasBase = false;
    for (i = i + 1; i < lines.length; i++) {
      const line = lines[i]!;
      if (part === 'ours' && line.startsWith('|||||||')) {
        part = 'base';
        hasBase = true;
      } else if (part !== 'theirs' && line === '=======') part = 'theirs';
      else if (part === 'theirs' && line.startsWith('>>>>>>>')) {
        theirsLabel = line.slice(7).trim();
        closed = true;
        break;
      } else (part === 'ours' ? ours : part === 'base' ? base : theirs).push(line);
    }
    if (!closed) break;
    hunks.push({ line: start + 1, ours: clip(ours.join('\n')), ...(hasBase ? { base: clip(base.join('\n')) } : {}), theirs: clip(theirs.join('\n')), oursLabel, theirsLabel });
  }
  return hunks;
}

/** The conflicted files of the working tree with their hunks, and what to do next. */
export async function readConflicts(repo: GitRepository, signal?: AbortSignal): Promise<ConflictReport> {
  const status = await readStatus(repo, signal);
  const operation = await operationInProgress(repo);
  const files: ConflictedFile[] = [];
  for (const entry of status.conflicted.slice(0, MAX_CONFLICT_FILES)) {
    const file = path.join(repo.top, entry.path);
    const stat = await fs.lstat(file).catch(() => undefined);
    if (!stat?.isFile()) {
      files.push({ path: entry.path, hunks: [], note: 'deleted on one side (or not a regular file): keep it with git_add, or remove it with git rm in a terminal' });
      continue;
    }
    if (stat.size > MAX_FILE_BYTES) {
      files.push({ path: entry.path, hunks: [], note: `larger than 1 MiB: open it to resolve` });
      continue;
    }
    const content = await fs.readFile(file);
    if (content.subarray(0, 8000).includes(0)) {
      files.push({ path: entry.path, hunks: [], note: 'binary: choose a side with git_restore (source ours or theirs is not offered; restore it from a revision), then git_add' });
      continue;
    }
    const hunks = parseConflictMarkers(content.toString('utf8'));
    files.push({ path: entry.path, hunks, ...(hunks.length === 0 ? { note: 'no conflict markers left in the file: if it is resolved, stage it with git_add' } : {}) });
  }
  const next = operation
    ? `Edit each file to the text it should have (remove the markers), stage it with git_add, then ${operation.finish}.`
    : 'Edit each file to the text it should have (remove the markers) and stage it with git_add.';
  return { files, ...(operation ? { operation: operation.what } : {}), next };
}

/** The report as text: each file, each hunk with both sides (and the base when known). */
export function describeConflicts(report: ConflictReport): string {
  const lines: string[] = [`${countOf(report.files.length, 'file')} with conflicts${report.operation ? ` (${report.operation} is in progress)` : ''}:`];
  for (const file of report.files) {
    lines.push('', `== ${file.path}${file.note ? `: ${file.note}` : ''}`);
    for (const hunk of file.hunks) {
      lines.push(`-- conflict at line ${hunk.line}`, `<<<<<<< ours (${hunk.oursLabel})`, hunk.ours);
      if (hunk.base !== undefined) lines.push('||||||| base', hunk.base);
      lines.push('=======', hunk.theirs, `>>>>>>> theirs (${hunk.theirsLabel})`);
    }
  }
  lines.push('', `Next: ${report.next}`);
  return lines.join('\n');
}
