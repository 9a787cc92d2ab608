import { countOf, formatBytes } from '@suite/shared';
import { cutOutput, type GitRepository } from './repository.js';

export interface StatusEntry {
  path: string;
  /** The path before a rename or copy. */
  from?: string;
  /** added, modified, deleted, renamed, copied, type changed, untracked, conflicted. */
  change: string;
}

export interface RepositoryStatus {
  /** The branch, or undefined when HEAD is detached. */
  branch: string | undefined;
  /** The commit HEAD is at; undefined before the first commit. */
  head: string | undefined;
  upstream?: string;
  ahead?: number;
  behind?: number;
  staged: StatusEntry[];
  unstaged: StatusEntry[];
  untracked: StatusEntry[];
  conflicted: StatusEntry[];
  /** Set when git listed more than STATUS_OUTPUT_BYTES: the lists hold only what was read. */
  cutAt?: number;
}

const CHANGE: Record<string, string> = { M: 'modified', A: 'added', D: 'deleted', R: 'renamed', C: 'copied', T: 'type changed' };

/**
 * Parses `git status --porcelain=v2 --branch -z`. Version 2 is made for programs: one record per
 * path, the original path of a rename in its own NUL-terminated field, no quoting.
 */
export function parseStatus(text: string): RepositoryStatus {
  const status: RepositoryStatus = { branch: undefined, head: undefined, staged: [], unstaged: [], untracked: [], conflicted: [] };
  const records = text.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i]!;
    if (record.startsWith('# branch.oid ')) {
      const oid = record.slice(13);
      status.head = oid === '(initial)' ? undefined : oid;
    } else if (record.startsWith('# branch.head ')) {
      const head = record.slice(14);
      status.branch = head === '(detached)' ? undefined : head;
    } else if (record.startsWith('# branch.upstream ')) {
      status.upstream = record.slice(18);
    } else if (record.startsWith('# branch.ab ')) {
      const m = /^\+(\d+) -(\d+)$/.exec(record.slice(12));
      if (m) {
        status.ahead = Number(m[1]);
        status.behind = Number(m[2]);
      }
    } else if (record.startsWith('1 ') || record.startsWith('2 ')) {
      const renamed = record.charCodeAt(0) === 50; // '2'
      // The path is everything after the fixed fields (a path may contain spaces). Found by
      // counting spaces, not by splitting: a 2,000-file status is 2,000 records of ten fields.
      const pathText = afterFields(record, renamed ? 9 : 8);
      const from = renamed ? records[++i] : undefined;
      const x = record.charAt(2);
      const y = record.charAt(3);
      if (x !== '.') status.staged.push(statusEntry(pathText, from, x));
      if (y !== '.') status.unstaged.push(statusEntry(pathText, from, y));
    } else if (record.startsWith('u ')) {
      status.conflicted.push({ path: afterFields(record, 10), change: 'conflicted' });
    } else if (record.startsWith('? ')) {
      status.untracked.push({ path: record.slice(2), change: 'untracked' });
    }
  }
  return status;
}

/** The text after the first `count` space-separated fields of a record. */
function afterFields(record: string, count: number): string {
  let at = -1;
  for (let n = 0; n < count; n++) {
    at = record.indexOf(' ', at + 1);
    if (at === -1) return '';
  }
  return record.slice(at + 1);
}

function statusEntry(path: string, from: string | undefined, letter: string): StatusEntry {
  const change = CHANGE[letter] ?? letter;
  return from && (letter === 'R' || letter === 'C') ? { path, from, change } : { path, change };
}

/**
 * How much of `git status` is read: about 500,000 changed paths. Past it the lists hold what was
 * read and the status says it was cut, never a smaller count as if it were the whole.
 */
export const STATUS_OUTPUT_BYTES = 64 * 1024 * 1024;

export async function readStatus(repo: GitRepository, signal?: AbortSignal, maxOutputBytes = STATUS_OUTPUT_BYTES): Promise<RepositoryStatus> {
  const result = await repo.run(['status', '--porcelain=v2', '--branch', '-z', '--untracked-files=normal', '--ignore-submodules=dirty', '--find-renames'], { maxOutputBytes, ...(signal ? { signal } : {}) });
  if (!result.ok) throw repo.failure(result, 'git status');
  const { text, cut } = cutOutput(result, '\0');
  const status = parseStatus(text);
  if (cut) status.cutAt = maxOutputBytes;
  return status;
}

/** How many entries of each list the text shows; the structured result has them all. */
const SHOWN_PER_LIST = 200;

export function describeStatus(status: RepositoryStatus, repoName: string): string {
  const lines: string[] = [];
  if (status.branch) {
    let line = `On branch ${status.branch} in ${repoName}`;
    if (status.head === undefined) line += ' (no commits yet)';
    if (status.upstream) {
      line += `, tracking ${status.upstream}`;
      if (status.ahead !== undefined && status.behind !== undefined) {
        line += status.ahead === 0 && status.behind === 0 ? ' (up to date)' : ` (ahead ${status.ahead}, behind ${status.behind})`;
      }
    }
    lines.push(line);
  } else {
    lines.push(`HEAD detached at ${status.head?.slice(0, 12) ?? 'nothing'} in ${repoName}`);
  }
  const section = (title: string, entries: StatusEntry[], withChange: boolean): void => {
    if (entries.length === 0) return;
    lines.push('', `${title} (${status.cutAt !== undefined ? 'at least ' : ''}${entries.length}):`);
    for (const e of entries.slice(0, SHOWN_PER_LIST)) {
      const name = e.from ? `${e.from} -> ${e.path}` : e.path;
      lines.push(withChange ? `  ${`${e.change}:`.padEnd(14)}${name}` : `  ${name}`);
    }
    if (entries.length > SHOWN_PER_LIST) lines.push(`  … and ${entries.length - SHOWN_PER_LIST} more`);
  };
  section('Conflicts', status.conflicted, false);
  section('Staged for commit', status.staged, true);
  section('Not staged', status.unstaged, true);
  section('Untracked', status.untracked, false);
  if (status.cutAt !== undefined) {
    lines.push('', `[git status listed more than ${formatBytes(status.cutAt)}: the lists above hold only the first ${countOf(status.staged.length + status.unstaged.length + status.untracked.length + status.conflicted.length, 'entry', 'entries')} read, so every count is a lower bound. Look at one directory at a time (git_diff_staged or git_diff_unstaged with path).]`);
  } else if (status.staged.length + status.unstaged.length + status.untracked.length + status.conflicted.length === 0) {
    lines.push('', 'Nothing to commit: the working tree is clean.');
  }
  return lines.join('\n');
}
