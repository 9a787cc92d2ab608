import { ToolError } from '@suite/shared';
import { cutOutput, type GitRepository } from './repository.js';
import { literalPathspec } from './repo-paths.js';

export interface Commit {
  hash: string;
  parents: string[];
  author: string;
  email: string;
  /** Author date, strict ISO 8601. */
  date: string;
  subject: string;
  body: string;
}

export interface LogQuery {
  maxCount: number;
  /** Commit ids; `from` excluded, `to` included (default HEAD). */
  range?: { from?: string; to: string };
  since?: string;
  until?: string;
  author?: string;
  /** Relative to the top, already checked. */
  path?: string;
  signal?: AbortSignal;
}

/** Seven fields per commit, NUL between them and (with -z) between commits: no message can hold a NUL. */
const FORMAT = '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00%b';
const FIELDS = 7;
/** A body longer than this is cut: a changelog needs the gist, not a pasted log file. */
const MAX_BODY = 4000;

const DATE_EXAMPLES = 'a date such as 2024-01-15, 2024-01-15T14:30:25, "2 weeks ago" or "yesterday"';

/**
 * Dates as git's --since/--until read them: ISO 8601, "2 weeks ago", "yesterday", "Jan 15 2024".
 * git's own parser decides (`config --type=expiry-date`, the careful variant of the one --since
 * uses): --since and --until read text they cannot parse as "now", so an unparsable end date would
 * return every commit and an unparsable start date none. `never`, `all` and `false` mean something
 * else to that parser and nothing to --since.
 */
export async function checkDate(repo: GitRepository, value: string, name: string, signal?: AbortSignal): Promise<string> {
  const trimmed = value.trim();
  if (trimmed === '' || trimmed.length > 64 || trimmed.startsWith('-') || !/^[\p{L}\p{N} :.,+\-/TZ]+$/u.test(trimmed)) {
    throw ToolError.invalidArgument(`${name} must be ${DATE_EXAMPLES}; got ${JSON.stringify(value)}.`);
  }
  const parsed = /^(never|all|false)$/i.test(trimmed) ? undefined : await repo.run(['-c', `gitprompts.date=${trimmed}`, 'config', '--type=expiry-date', 'gitprompts.date'], signal ? { signal } : {});
  if (!parsed?.ok) throw ToolError.invalidArgument(`${name} ${JSON.stringify(value)} is not a date git can read. Give ${DATE_EXAMPLES}.`);
  return trimmed;
}

export function parseLog(text: string): Commit[] {
  const fields = text.split('\0');
  const commits: Commit[] = [];
  for (let i = 0; i + FIELDS <= fields.length; i += FIELDS) {
    // -z separates commits with a NUL, and git ends each record with a newline before it.
    const hash = fields[i]!.replace(/^\n/, '');
    if (!/^[0-9a-f]{40}/.test(hash)) break;
    const body = fields[i + 6]!.replace(/\s+$/, '');
    commits.push({
      hash,
      parents: fields[i + 1]!.split(' ').filter(Boolean),
      author: fields[i + 2]!,
      email: fields[i + 3]!,
      date: fields[i + 4]!,
      subject: fields[i + 5]!,
      body: body.length > MAX_BODY ? `${body.slice(0, MAX_BODY)}\n[… message cut]` : body,
    });
  }
  return commits;
}

/** Commits, newest first; asks for one more than wanted to know whether there are more. */
export async function readLog(repo: GitRepository, query: LogQuery): Promise<{ commits: Commit[]; more: boolean }> {
  const args = ['log', FORMAT, '-z', '--no-color', `--max-count=${query.maxCount + 1}`];
  if (query.since) args.push(`--since=${query.since}`);
  if (query.until) args.push(`--until=${query.until}`);
  // Fixed strings: an author such as "a+b" is a name, not a regular expression.
  if (query.author) args.push(`--author=${query.author}`, '--fixed-strings', '--regexp-ignore-case');
  if (query.range) args.push(query.range.from ? `${query.range.from}..${query.range.to}` : query.range.to);
  else args.push('HEAD');
  args.push('--');
  if (query.path) args.push(literalPathspec(query.path));
  const result = await repo.run(args, query.signal ? { signal: query.signal } : {});
  if (!result.ok) {
    if (/does not have any commits yet|bad default revision|bad revision 'HEAD'|ambiguous argument 'HEAD'/.test(result.stderr)) return { commits: [], more: false };
    throw repo.failure(result, 'git log');
  }
  // Commits end with NUL NUL (-z separates them, the format ends in its body): a cut output keeps its whole commits and says there are more.
  const { text, cut } = cutOutput(result, '\0');
  const commits = parseLog(text);
  if (cut && commits.length > 0) commits.pop();
  return { commits: commits.slice(0, query.maxCount), more: cut || commits.length > query.maxCount };
}

/** The shape of the official git server's log text, one block per commit, whatever the filters. */
export function describeCommits(commits: Commit[]): string {
  return commits
    .map((c) => {
      const message = c.body ? `${c.subject}\n\n${c.body}` : c.subject;
      return `Commit: ${c.hash}\nAuthor: ${c.author} <${c.email}>\nDate: ${c.date}\nMessage: ${message.split('\n').join('\n         ')}\n`;
    })
    .join('\n');
}

/** One line per commit (body indented below): compact enough to embed a long history in a prompt. */
export function compactLog(commits: Commit[]): string {
  return commits
    .map((c) => {
      const head = `${c.hash.slice(0, 10)} ${c.date.slice(0, 10)} ${c.author}: ${c.subject}`;
      return c.body ? `${head}\n${c.body.split('\n').map((l) => `    ${l}`).join('\n')}` : head;
    })
    .join('\n');
}
