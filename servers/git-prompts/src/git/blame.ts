import { cutOutput, type GitRepository } from './repository.js';

/** Consecutive lines of a file that one commit last changed. */
export interface BlameRange {
  /** First and last line, from 1, in the file at the revision blamed. */
  start: number;
  end: number;
  commit: string;
  author: string;
  email: string;
  /** Author date, ISO 8601. */
  date: string;
  summary: string;
  /** The line number in the commit that introduced these lines. */
  originalStart: number;
  /** The commit is a boundary (the oldest of a shallow or limited history). */
  boundary?: boolean;
}

export interface Blame {
  ranges: BlameRange[];
  /** The text of each line blamed, in order (index 0 is line `ranges[0].start`). */
  lines: string[];
  /** git printed more than the cap: only the lines read are blamed here. */
  cut: boolean;
}

interface CommitInfo {
  author: string;
  email: string;
  date: string;
  summary: string;
  boundary: boolean;
}

/** Lines one answer blames: a model reads every one. */
export const MAX_BLAME_LINES = 2000;

/** The most a blame answer reads from git. */
export const BLAME_OUTPUT_BYTES = 16 * 1024 * 1024;

/**
 * Parses `git blame --porcelain`: a header `<commit> <orig> <final> [<count>]` per group, the
 * commit's fields the first time it appears, then each line's text after a tab.
 */
export function parseBlame(text: string): { ranges: BlameRange[]; lines: string[] } {
  const commits = new Map<string, CommitInfo>();
  const ranges: BlameRange[] = [];
  const lines: string[] = [];
  let current: { commit: string; orig: number; final: number } | undefined;
  let pending: Partial<CommitInfo> & { time?: number; tz?: string } = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('\t')) {
      if (!current) continue;
      let info = commits.get(current.commit);
      if (!info) {
        const date = pending.time !== undefined ? isoDate(pending.time, pending.tz ?? '+0000') : '';
        info = { author: pending.author ?? '', email: (pending.email ?? '').replace(/^<|>$/g, ''), date, summary: pending.summary ?? '', boundary: pending.boundary ?? false };
        commits.set(current.commit, info);
      }
      pending = {};
      lines.push(line.slice(1));
      const last = ranges[ranges.length - 1];
      if (last && last.commit === current.commit && last.end === current.final - 1 && last.originalStart + (last.end - last.start) === current.orig - 1) last.end = current.final;
      else {
        ranges.push({
          start: current.final,
          end: current.final,
          commit: current.commit,
          author: info.author,
          email: info.email,
          date: info.date,
          summary: info.summary,
          originalStart: current.orig,
          ...(info.boundary ? { boundary: true } : {}),
        });
      }
      current = undefined;
      continue;
    }
    const header = /^([0-9a-f]{40}(?:[0-9a-f]{24})?) (\d+) (\d+)(?: \d+)?$/.exec(line);
    if (header) {
      current = { commit: header[1]!, orig: Number(header[2]), final: Number(header[3]) };
      continue;
    }
    const space = line.indexOf(' ');
    const key = space === -1 ? line : line.slice(0, space);
    const value = space === -1 ? '' : line.slice(space + 1);
    if (key === 'author') pending.author = value;
    else if (key === 'author-mail') pending.email = value;
    else if (key === 'author-time') pending.time = Number(value);
    else if (key === 'author-tz') pending.tz = value;
    else if (key === 'summary') pending.summary = value;
    else if (key === 'boundary') pending.boundary = true;
  }
  return { ranges, lines };
}

/** A Unix time and a git time zone (`+0200`) as ISO 8601 in that zone. */
function isoDate(seconds: number, tz: string): string {
  const m = /^([+-])(\d{2})(\d{2})$/.exec(tz);
  const offsetMinutes = m ? (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3])) : 0;
  const local = new Date((seconds + offsetMinutes * 60) * 1000).toISOString().slice(0, 19);
  return `${local}${m ? `${m[1]}${m[2]}:${m[3]}` : 'Z'}`;
}

/**
 * Blames lines of a file at a commit (an object id, already resolved). `--no-ignore-revs-file`
 * drops the repository's `blame.ignoreRevsFile` (read before the options; a FIFO there would make
 * blame wait): an empty `-c blame.ignoreRevsFile=` does not, since git sorts that list and reads
 * the files after the reset. No textconv.
 */
export async function blame(repo: GitRepository, commit: string, file: string, range: { start: number; end?: number }, signal?: AbortSignal): Promise<Blame> {
  const lineRange = `-L${range.start},${range.end ?? ''}`;
  const result = await repo.run(['blame', '--no-ignore-revs-file', '--porcelain', '--no-textconv', lineRange, commit, '--', file], { maxOutputBytes: BLAME_OUTPUT_BYTES, ...(signal ? { signal } : {}) });
  if (!result.ok) throw repo.failure(result, 'git blame');
  const { text, cut } = cutOutput(result, '\n');
  return { ...parseBlame(text), cut };
}
